package render

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

// Fixtures: realistic reports of the usage-counter suite, built with the report types.

const fixtureSuite = "usage_counter_hotspot_baseline"

var fixtureStart = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

type runSpec struct {
	mode       string
	rep, level int
	rps        float64
	p50, p95   float64
	p99        float64
	failed     int64
	waiters    map[string]int64 // by hot table
	poolBP     int64
	queue      bool
	lagP99     float64
	sqlOps     int64
	compacted  int64
	verified   bool
	requests   int
	concurr    int
	// The database's cost per request, and efficiency (0: none recorded).
	walPerReq, commitsPerReq, stmtsPerReq float64
	efficiency                            float64
}

func makeRun(s runSpec) results.Run {
	if s.requests == 0 {
		s.requests = 100000
	}
	if s.concurr == 0 {
		s.concurr = 64
	}
	if s.level > 0 {
		s.concurr = s.level
	}
	byRel := map[string]int64{"api_keys": 0, "providers": 0}
	var total int64
	for t, n := range s.waiters {
		byRel[t] = n
		total += n
	}
	r := results.Run{
		Mode:       s.mode,
		Repetition: s.rep,
		Level:      s.level,
		Config: map[string]any{
			"requests":          s.requests,
			"concurrency":       s.concurr,
			"pool-size":         32,
			"flush-interval-ms": 50,
			"output":            "/tmp/out.json",
			"seed":              42,
			"repeat":            3,
		},
		StartedAt: fixtureStart,
		Load: results.Load{
			DurationMs:        float64(s.requests) / s.rps * 1000,
			ThroughputRPS:     s.rps,
			Concurrency:       s.concurr,
			CompletedRequests: int64(s.requests) - s.failed,
			FailedRequests:    s.failed,
			LatencyMs:         results.Latency{Count: int64(s.requests), P50: s.p50, P95: s.p95, P99: s.p99, Max: s.p99 * 2},
		},
		Pool:         results.Pool{MaxConns: 32, MaxAcquired: int32(s.poolBP * 32 / 10000), MaxUsageBasisPoints: s.poolBP},
		LockMonitor:  results.LockMonitor{Samples: 300, IntervalMs: 100, MaxLockWaiters: total, MaxWaitersByRelation: byRel},
		Verification: results.Verification{Passed: s.verified, Checks: []results.Check{{Name: "usage total", Expected: 100000, Actual: 100000, OK: s.verified}}},
	}
	if s.walPerReq > 0 {
		r.Database = &results.Database{WALSource: "pg_stat_wal", Statements: &results.Statements{},
			WALBytes: int64(s.walPerReq * float64(s.requests)), XactCommit: int64(s.commitsPerReq * float64(s.requests)),
			PerRequest:   results.PerRequest{WALBytes: s.walPerReq, Commits: s.commitsPerReq, Statements: s.stmtsPerReq, RowVersions: 2},
			DatabaseWide: []string{"wal_bytes", "xact_commit", "statements"}}
		r.Database.Statements.Calls = int64(s.stmtsPerReq * float64(s.requests))
	}
	if s.efficiency > 0 {
		r.Efficiency, r.EfficiencyBasis = s.efficiency, "hot_row_update_rps_pool"
		if s.queue {
			r.EfficiencyBasis = "batched_write_rows_per_s"
		}
	}
	r.Reconciliation = &results.Reconciliation{Attempted: int64(s.requests), Acknowledged: int64(s.requests) - s.failed,
		Persisted: int64(s.requests) - s.failed}
	if s.queue {
		r.Queue = &results.Queue{Backend: "memory", Compaction: s.compacted > 0, FullPolicy: "block",
			QueueMetrics: results.QueueMetrics{Capacity: 65536, EnqueuedTotal: int64(s.requests), FlushedTotal: int64(s.requests),
				FlushSQLOpsTotal: s.sqlOps, CompactedTotal: s.compacted},
			PersistLagMs: results.Latency{P50: s.lagP99 / 3, P95: s.lagP99 * 0.8, P99: s.lagP99}}
	}
	return r
}

func syncSpec() runSpec {
	return runSpec{mode: "sync", rps: 2100, p50: 12.4, p95: 30.1, p99: 48.7,
		waiters: map[string]int64{"api_keys": 12, "providers": 3}, poolBP: 10000, verified: true,
		walPerReq: 945, commitsPerReq: 1.14, stmtsPerReq: 5, efficiency: 2100.0 / 2104}
}

func asyncCompactSpec() runSpec {
	return runSpec{mode: "async-compact", rps: 160000, p50: 0.21, p95: 0.64, p99: 1.35, poolBP: 2500,
		queue: true, lagP99: 85.3, sqlOps: 1204, compacted: 98796, verified: true,
		walPerReq: 297, commitsPerReq: 0.004, stmtsPerReq: 0.005, efficiency: 160000.0 / 450000}
}

func newReport(runs ...results.Run) *results.Report {
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Suite:         fixtureSuite,
		StartedAt:     fixtureStart,
		FinishedAt:    fixtureStart.Add(2 * time.Minute),
		Environment: results.Environment{GoVersion: "go1.26.8", GOMAXPROCS: 2, NumCPU: 2, CPUModel: "AMD EPYC",
			OS: "linux", Arch: "amd64", MachineClass: "2cpu-24g", PostgresVersion: "17.2", Durability: "on",
			GitRevision: "6c155e1", Hostname: "vm", Calibration: fixtureCalibration(1)},
		Runs: runs,
	}
}

// fixtureCalibration is a calibration of a machine that runs at speed times the fixtures' one.
func fixtureCalibration(speed float64) *results.Calibration {
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

// singleReport has one run per mode: sync with waiters on api_keys, async-compact with none.
func singleReport() *results.Report {
	return newReport(makeRun(syncSpec()), makeRun(asyncCompactSpec()))
}

// repeatedReport has three repetitions per mode and the summaries the engine would store.
func repeatedReport() *results.Report {
	var runs []results.Run
	for i, rps := range []float64{148100, 155020, 152340} {
		s := asyncCompactSpec()
		s.rep, s.rps = i+1, rps
		runs = append(runs, makeRun(s))
	}
	for i, rps := range []float64{2050, 2180, 2100} {
		s := syncSpec()
		s.rep, s.rps = i+1, rps
		runs = append(runs, makeRun(s))
	}
	r := newReport(runs...)
	r.Summaries = results.Summarize(runs)
	return r
}

// ladderReport is a sync ladder that saturates at 32.
func ladderReport() *results.Report {
	var runs []results.Run
	for _, l := range []struct {
		c        int
		rps, p95 float64
	}{{8, 900, 9.5}, {16, 1700, 10.2}, {32, 2100, 16.0}, {64, 2150, 30.1}, {128, 2120, 61.0}} {
		s := syncSpec()
		s.level, s.rps, s.p95, s.p99 = l.c, l.rps, l.p95, l.p95*1.6
		runs = append(runs, makeRun(s))
	}
	r := newReport(runs...)
	r.Ladders = []results.Ladder{results.BuildLadder("sync", runs)}
	return r
}

// degraded is a copy of rep with a third of the throughput and three times the latency.
func degraded(rep *results.Report) *results.Report {
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

func i64(v int64) *int64 { return &v }

// fixtureSamples is a few seconds of monitor samples for the two runs of singleReport.
func fixtureSamples() []results.Sample {
	var out []results.Sample
	for i := 0; i < 20; i++ {
		t := fixtureStart.Add(time.Duration(i) * 100 * time.Millisecond)
		w := int64(i % 13)
		out = append(out, results.Sample{Time: t, Run: 0, Mode: "sync", ElapsedMs: float64(i * 100),
			LockWaiters: w + 1, WaitersByRelation: map[string]int64{"api_keys": w, "providers": 1},
			PoolAcquired: 32, PoolMax: 32, PoolUsageBasisPts: 10000, CompletedRequests: int64(i * 210)})
	}
	for i := 0; i < 20; i++ {
		t := fixtureStart.Add(time.Minute + time.Duration(i)*100*time.Millisecond)
		out = append(out, results.Sample{Time: t, Run: 1, Mode: "async-compact", ElapsedMs: float64(i * 100),
			PoolAcquired: 8, PoolMax: 32, PoolUsageBasisPts: 2500, QueueDepth: i64(int64(4096 - i*200)),
			QueuePendingDepth: i64(int64(i * 10)), CompletedRequests: int64(i * 16000)})
	}
	return out
}
