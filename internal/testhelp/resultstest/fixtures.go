// Package resultstest holds report fixtures for tests: realistic reports of the usage-counter
// suite (single runs, repetitions, a ladder, monitor samples), built with the report types only.
package resultstest

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

const Suite = "usage_counter_hotspot_baseline"

var Start = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

// RunSpec describes a run of the fixtures: what MakeRun builds a results.Run from.
type RunSpec struct {
	Mode        string
	Rep, Level  int
	RPS         float64
	P50, P95    float64
	P99         float64
	Failed      int64
	Waiters     map[string]int64 // by hot table
	PoolBP      int64
	Queue       bool
	LagP99      float64
	SQLOps      int64
	Compacted   int64
	Verified    bool
	Requests    int
	Concurrency int
	// The database's cost per request, and efficiency (0: none recorded).
	WALPerReq, CommitsPerReq, StmtsPerReq float64
	Efficiency                            float64
}

func MakeRun(s RunSpec) results.Run {
	if s.Requests == 0 {
		s.Requests = 100000
	}
	if s.Concurrency == 0 {
		s.Concurrency = 64
	}
	if s.Level > 0 {
		s.Concurrency = s.Level
	}
	byRel := map[string]int64{"api_keys": 0, "providers": 0}
	var total int64
	for t, n := range s.Waiters {
		byRel[t] = n
		total += n
	}
	r := results.Run{
		Mode:       s.Mode,
		Repetition: s.Rep,
		Config: results.RunConfig{Requests: int64(s.Requests), Concurrency: s.Concurrency, HotKeys: 1, FlushIntervalMs: 50,
			Seed: 42, Repeat: 3, Suite: map[string]any{"pool_size": 32}},
		StartedAt: Start,
		Load: results.Load{
			DurationMs:        float64(s.Requests) / s.RPS * 1000,
			ThroughputRPS:     s.RPS,
			Concurrency:       s.Concurrency,
			CompletedRequests: int64(s.Requests) - s.Failed,
			FailedRequests:    s.Failed,
			LatencyMs:         results.Latency{Count: int64(s.Requests), P50: s.P50, P95: s.P95, P99: s.P99, Max: s.P99 * 2},
		},
		Pool:         results.Pool{MaxConns: 32, MaxAcquired: int32(s.PoolBP * 32 / 10000), MaxUsageBasisPoints: s.PoolBP},
		LockMonitor:  results.LockMonitor{Samples: 300, IntervalMs: 100, MaxLockWaiters: total, MaxWaitersByRelation: byRel},
		Verification: results.Verification{Passed: s.Verified, Checks: []results.Check{results.Compared("usage total", 100000, 100000, s.Verified)}},
	}
	if s.Level > 0 {
		OnLadder(&r, results.AxisConcurrency, float64(s.Level))
	}
	if s.WALPerReq > 0 {
		r.Database = &results.Database{WALSource: "pg_stat_wal", Statements: &results.Statements{},
			WALBytes: int64(s.WALPerReq * float64(s.Requests)), XactCommit: int64(s.CommitsPerReq * float64(s.Requests)),
			PerRequest:   results.PerRequest{WALBytes: s.WALPerReq, Commits: s.CommitsPerReq, Statements: s.StmtsPerReq, RowVersions: 2},
			DatabaseWide: []string{"wal_bytes", "xact_commit", "statements"}}
		r.Database.Statements.Calls = int64(s.StmtsPerReq * float64(s.Requests))
	}
	if s.Efficiency > 0 {
		r.Efficiency, r.EfficiencyBasis = s.Efficiency, "hot_row_update_rps_pool"
		if s.Queue {
			r.EfficiencyBasis = "batched_write_rows_per_s"
		}
	}
	r.Reconciliation = &results.Reconciliation{Attempted: int64(s.Requests), Acknowledged: int64(s.Requests) - s.Failed,
		Persisted: int64(s.Requests) - s.Failed}
	if s.Queue {
		r.Queue = &results.Queue{Backend: "memory", Compaction: s.Compacted > 0, FullPolicy: "block",
			QueueMetrics: results.QueueMetrics{Capacity: 65536, EnqueuedTotal: int64(s.Requests), FlushedTotal: int64(s.Requests),
				FlushSQLOpsTotal: s.SQLOps, FlushSQLRecordsTotal: int64(s.Requests) - s.Compacted, CompactedTotal: s.Compacted},
			PersistLagMs: results.Latency{P50: s.LagP99 / 3, P95: s.LagP99 * 0.8, P99: s.LagP99}}
		r.Queue.WritesPerUpdate = r.Queue.QueueMetrics.WritesPerUpdate()
	}
	return r
}

func SyncSpec() RunSpec {
	return RunSpec{Mode: "sync", RPS: 2100, P50: 12.4, P95: 30.1, P99: 48.7,
		Waiters: map[string]int64{"api_keys": 12, "providers": 3}, PoolBP: 10000, Verified: true,
		WALPerReq: 945, CommitsPerReq: 1.14, StmtsPerReq: 5, Efficiency: 2100.0 / 2104}
}

func AsyncCompactSpec() RunSpec {
	return RunSpec{Mode: "async-compact", RPS: 160000, P50: 0.21, P95: 0.64, P99: 1.35, PoolBP: 2500,
		Queue: true, LagP99: 85.3, SQLOps: 1204, Compacted: 98796, Verified: true,
		WALPerReq: 297, CommitsPerReq: 0.004, StmtsPerReq: 0.005, Efficiency: 160000.0 / 450000}
}

func NewReport(runs ...results.Run) *results.Report {
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Suite:         Suite,
		StartedAt:     Start,
		FinishedAt:    Start.Add(2 * time.Minute),
		Environment: results.Environment{GoVersion: "go1.26.8", GOMAXPROCS: 2, NumCPU: 2, CPUModel: "AMD EPYC",
			OS: "linux", Arch: "amd64", MachineClass: "2cpu-24g", DatabaseKind: "postgres", DatabaseVersion: "17.2", Durability: "on",
			GitRevision: "6c155e1", Hostname: "vm", Calibration: Calibration(1)},
		Runs: runs,
	}
}

// Calibration is a calibration of a machine that runs at speed times the fixtures' one.
func Calibration(speed float64) *results.Calibration {
	spread := func(med, lo, hi float64) results.Spread {
		return results.Spread{Median: med * speed, Min: lo * speed, Max: hi * speed}
	}
	return &results.Calibration{
		HotRowUpdateRPS1:       spread(1800, 1750, 1850),
		HotRowUpdateRPSPool:    spread(2104, 2050, 2180),
		PoolConns:              64,
		BatchedWriteRowsPerSec: spread(450000, 426000, 496000),
		BatchedWriteConns:      2,
		Windows:                3, WindowMs: 1000, DurationMs: 6200,
	}
}

// SingleReport has one run per mode: sync with waiters on api_keys, async-compact with none.
func SingleReport() *results.Report {
	return NewReport(MakeRun(SyncSpec()), MakeRun(AsyncCompactSpec()))
}

// RepeatedReport has three repetitions per mode and the summaries the engine would store.
func RepeatedReport() *results.Report {
	var runs []results.Run
	for i, rps := range []float64{148100, 155020, 152340} {
		s := AsyncCompactSpec()
		s.Rep, s.RPS = i+1, rps
		runs = append(runs, MakeRun(s))
	}
	for i, rps := range []float64{2050, 2180, 2100} {
		s := SyncSpec()
		s.Rep, s.RPS = i+1, rps
		runs = append(runs, MakeRun(s))
	}
	r := NewReport(runs...)
	r.Summaries = results.Summarize(runs)
	return r
}

// LadderReport is a sync ladder that saturates at 32.
func LadderReport() *results.Report {
	var runs []results.Run
	for _, l := range []struct {
		c        int
		rps, p95 float64
	}{{8, 900, 9.5}, {16, 1700, 10.2}, {32, 2100, 16.0}, {64, 2150, 30.1}, {128, 2120, 61.0}} {
		s := SyncSpec()
		s.Level, s.RPS, s.P95, s.P99 = l.c, l.rps, l.p95, l.p95*1.6
		runs = append(runs, MakeRun(s))
	}
	r := NewReport(runs...)
	r.Ladders = results.BuildLadders(runs)
	return r
}

// PoolLadderReport is a pool ladder (--pool-levels 4,16,64) of sync and async-compact, its
// ladders built with the objective sloP99Ms (0: none): sync's throughput peaks at 16 and its p99
// is within 40 ms at 4 and 16 only; at 64 the pool wait is gone and the lock waiters rise.
// async-compact's throughput rises with the pool, its p99 under 2 ms throughout.
func PoolLadderReport(sloP99Ms float64) *results.Report {
	var runs []results.Run
	for _, l := range []struct {
		mode                  string
		pool                  int
		rps, p99, wait, locks float64
	}{
		{"sync", 4, 1500, 35, 30, 3}, {"sync", 16, 2100, 38, 9, 15}, {"sync", 64, 2000, 60, 0.4, 63},
		{"async-compact", 4, 90000, 1.9, 1.2, 0}, {"async-compact", 16, 150000, 1.4, 0.3, 1}, {"async-compact", 64, 160000, 1.35, 0.1, 2},
	} {
		s := SyncSpec()
		if l.mode != "sync" {
			s = AsyncCompactSpec()
		}
		s.RPS, s.P99 = l.rps, l.p99
		r := MakeRun(s)
		r.Config.SLOP99Ms = sloP99Ms
		OnLadder(&r, results.AxisPool, float64(l.pool), 4, 16, 64)
		r.Load.AcquireWaitMs = results.Latency{P95: l.wait * 0.7, P99: l.wait, Max: l.wait * 2}
		r.LockMonitor.MaxLockWaiters, r.LockMonitor.MaxLockWaitMs = int64(l.locks), l.locks*2
		runs = append(runs, r)
	}
	rep := NewReport(runs...)
	rep.Ladders = results.BuildLadders(runs)
	return rep
}

// OnLadder puts run r on a ladder over axis a at value v: its config takes v, and records that
// its invocation stepped over the axis, at values (v alone when none are given).
func OnLadder(r *results.Run, a *results.Axis, v float64, values ...float64) {
	a.Set(&r.Config, results.Number(v))
	if len(values) == 0 {
		values = []float64{v}
	}
	list := make([]results.Value, len(values))
	for i, x := range values {
		list[i] = results.Number(x)
	}
	ladder := map[string][]results.Value{a.Name: list}
	for k, l := range r.Config.Ladder {
		if k != a.Name {
			ladder[k] = l
		}
	}
	r.Config.Ladder = ladder
}

// Degraded is a copy of rep with a third of the throughput and three times the latency.
func Degraded(rep *results.Report) *results.Report {
	out := *rep
	out.Runs = nil
	for _, r := range rep.Runs {
		r.Load.ThroughputRPS /= 3
		r.Load.LatencyMs.P50 *= 3
		r.Load.LatencyMs.P95 *= 3
		r.Load.LatencyMs.P99 *= 3
		out.Runs = append(out.Runs, r)
	}
	if rep.Summaries != nil {
		out.Summaries = results.Summarize(out.Runs)
	}
	return &out
}

// I64 points at v.
func I64(v int64) *int64 { return &v }

// Samples is a few seconds of monitor samples for the two runs of SingleReport.
func Samples() []results.Sample {
	var out []results.Sample
	for i := 0; i < 20; i++ {
		t := Start.Add(time.Duration(i) * 100 * time.Millisecond)
		w := int64(i % 13)
		out = append(out, results.Sample{Time: t, Run: 0, Mode: "sync", ElapsedMs: float64(i * 100),
			LockWaiters: w + 1, WaitersByRelation: map[string]int64{"api_keys": w, "providers": 1},
			PoolAcquired: 32, PoolMax: 32, PoolUsageBasisPts: 10000, CompletedRequests: int64(i * 210)})
	}
	for i := 0; i < 20; i++ {
		t := Start.Add(time.Minute + time.Duration(i)*100*time.Millisecond)
		out = append(out, results.Sample{Time: t, Run: 1, Mode: "async-compact", ElapsedMs: float64(i * 100),
			PoolAcquired: 8, PoolMax: 32, PoolUsageBasisPts: 2500, QueueDepth: I64(int64(4096 - i*200)),
			QueuePendingDepth: I64(int64(i * 10)), CompletedRequests: int64(i * 16000)})
	}
	return out
}

// RateLadderReport is an open-loop ladder of sync and async-compact judged at p99 ≤ 200 ms:
// sync holds 400/s within it and not 800/s (its p99 explodes once it falls behind);
// async-compact holds every rate up to 16,000/s.
func RateLadderReport() *results.Report {
	var runs []results.Run
	step := func(spec RunSpec, rate, achieved, p99, service float64) {
		spec.RPS, spec.P99, spec.P95 = achieved, p99, p99*0.8
		r := MakeRun(spec)
		r.Config.SLOP99Ms, r.Config.Arrivals = 200, "poisson"
		OnLadder(&r, results.AxisRate, rate, 100, 200)
		share := min(1, achieved/rate)
		r.Load.OpenLoop = &results.OpenLoop{TargetRPS: rate, AchievedRPS: achieved, SentShare: share, HeldRate: results.HeldRate(share),
			Arrivals: "poisson", ServiceMs: results.Latency{P99: service}}
		runs = append(runs, r)
	}
	for _, s := range []struct{ rate, achieved, p99, service float64 }{
		{100, 100, 20, 19}, {200, 199, 45, 30}, {400, 396, 150, 60}, {800, 520, 9000, 120},
	} {
		step(SyncSpec(), s.rate, s.achieved, s.p99, s.service)
	}
	for _, s := range []struct{ rate, achieved, p99, service float64 }{
		{1000, 1000, 1, 0.5}, {4000, 3999, 1.2, 0.6}, {16000, 15900, 2, 0.8},
	} {
		step(AsyncCompactSpec(), s.rate, s.achieved, s.p99, s.service)
	}
	rep := NewReport(runs...)
	rep.Ladders = results.BuildLadders(runs)
	return rep
}

// SlotRuns is a sync slot ladder out of order (16, 1, 4, 64 slots): throughput rising and
// levelling off after 16, the waiters on one physical row of api_keys falling with the slots,
// and the read of a total slowing with them.
func SlotRuns() []results.Run {
	var runs []results.Run
	for _, l := range []struct {
		slots         int
		rps           float64
		perRow, table int64
	}{{16, 960, 3, 48}, {1, 240, 63, 63}, {4, 700, 15, 60}, {64, 990, 1, 40}} {
		r := MakeRun(SyncSpec())
		r.Load.ThroughputRPS = l.rps
		OnLadder(&r, results.AxisSlots, float64(l.slots), 1, 4, 16, 64)
		r.LockMonitor.MaxWaitersByRelation = map[string]int64{"api_keys": l.table, "providers": 2}
		r.LockMonitor.MaxWaitersPerRowByRelation = map[string]int64{"api_keys": l.perRow, "providers": 1}
		r.LockMonitor.TotalReadMs = &results.Latency{Count: 10, P50: float64(l.slots) / 100, P99: float64(l.slots) / 10}
		runs = append(runs, r)
	}
	return runs
}
