package results

import (
	"sort"
	"strings"
)

// Metric names: the keys of Summary.Metrics, and the metrics the table and the comparison read.
// Units live in the names, as everywhere in a report.
const (
	MetricThroughputRPS   = "throughput_rps"
	MetricP50Ms           = "p50_ms"
	MetricP95Ms           = "p95_ms"
	MetricP99Ms           = "p99_ms"
	MetricPersistLagP50Ms = "persist_lag_p50_ms" // runs with a queue only
	MetricPersistLagP95Ms = "persist_lag_p95_ms" // runs with a queue only
	MetricPersistLagP99Ms = "persist_lag_p99_ms" // runs with a queue only
	MetricMaxLockWaiters  = "max_lock_waiters"
	MetricFailedRequests  = "failed_requests"
	// The metrics below go beyond the key ones so that a summary row of the table can show
	// every column without going back to the runs.
	MetricPoolMaxUsageBasisPoints = "pool_max_usage_basis_points"
	MetricFlushSQLOps             = "flush_sql_ops" // runs with a queue only
	MetricCompacted               = "compacted"     // runs with a queue only
	MetricQueueInline             = "queue_inline"  // records written inline (sync fallback); queue runs only
	MetricQueueDropped            = "queue_dropped" // records dropped by a full queue; queue runs only
	// MetricWritesPerUpdate is Queue.WritesPerUpdate (queue runs that wrote only), and
	// MetricHottestShare HotSets.HottestShare (runs of a suite with hot key sets only).
	MetricWritesPerUpdate = "writes_per_update"
	MetricHottestShare    = "hottest_share"
	// The database's cost per completed request (runs with Database only; statements only when
	// pg_stat_statements was loaded), efficiency (runs measured after a calibration only), and
	// the reconciliation's lost and duplicated requests (runs with a reconciliation only).
	MetricWALBytesPerRequest    = "wal_bytes_per_request"
	MetricCommitsPerRequest     = "commits_per_request"
	MetricStatementsPerRequest  = "statements_per_request"
	MetricRowVersionsPerRequest = "row_versions_per_request"
	MetricEfficiency            = "efficiency"
	MetricLost                  = "lost"
	MetricDuplicated            = "duplicated"
	// Open-loop runs only (--rate): the rate achieved, the service time's p99 (latency from
	// the actual start), and the arrivals sent late or skipped.
	MetricAchievedRPS  = "achieved_rps"
	MetricSentShare    = "sent_share"
	MetricServiceP99Ms = "service_p99_ms"
	MetricLate         = "late"
	MetricSkipped      = "skipped"
	// MetricMaxWaitersPrefix followed by a table name is the max waiters queued on that table.
	MetricMaxWaitersPrefix = "max_waiters."
	// MetricMaxWaitersPerRowPrefix followed by a table name is the max waiters queued on any
	// one physical row of it (runs with LockMonitor.MaxWaitersPerRowByRelation only).
	MetricMaxWaitersPerRowPrefix = "max_waiters_per_row."
	// MetricTotalReadP50Ms and MetricTotalReadP99Ms time the read of a hot row's total (a sum
	// over its slots) during the run (runs with LockMonitor.TotalReadMs only).
	MetricTotalReadP50Ms = "total_read_p50_ms"
	MetricTotalReadP99Ms = "total_read_p99_ms"
	// MetricMaxLockWaitMs is the longest a session waited on a lock; MetricRTTP50Ms and
	// MetricRTTP99Ms the probe's round trip to PostgreSQL over the service's path.
	MetricMaxLockWaitMs = "max_lock_wait_ms"
	MetricRTTP50Ms      = "rtt_p50_ms"
	MetricRTTP99Ms      = "rtt_p99_ms"
	// Runs through a pooler only (--pooler): the most clients waiting in it at once, the
	// longest such wait, and the average wait per pooled transaction. MetricServerSessions is
	// the most sessions of the service PostgreSQL held at once (every run that measured it).
	MetricPoolerMaxWaiting = "pooler_max_waiting"
	MetricPoolerMaxWaitMs  = "pooler_max_wait_ms"
	MetricPoolerAvgWaitMs  = "pooler_avg_wait_ms"
	MetricServerSessions   = "max_server_sessions"
	// MetricAcquireWaitP95Ms and MetricAcquireWaitP99Ms are the load's wait for a pool
	// connection.
	MetricAcquireWaitP95Ms = "acquire_wait_p95_ms"
	MetricAcquireWaitP99Ms = "acquire_wait_p99_ms"
	// The generator's processor time per request and its share of the machine over the run's
	// window, and the local server's beside it (runs with Generator only; the server's where
	// it was read).
	MetricClientCPUPerRequestUs = "client_cpu_us_per_request"
	MetricClientCPUShare        = "client_cpu_share"
	MetricServerCPUPerRequestUs = "server_cpu_us_per_request"
	MetricServerCPUShare        = "server_cpu_share"
)

// Knee detection thresholds; see FindKnee.
const (
	KneeMaxThroughputGain = 0.05
	KneeMinP95Rise        = 0.05
)

// RateHeldFraction is the share of its arrivals an open-loop run must send to have held its
// rate, and a rate-ladder step to count toward max_rate_at_slo. It is judged on the arrivals
// the schedule drew, not on the target rate, which a Poisson draw misses by chance.
const RateHeldFraction = 0.95

// HeldRate says whether a run that sent sentShare of its arrivals held its rate.
func HeldRate(sentShare float64) bool { return sentShare >= RateHeldFraction }

// runMetrics is the one place that reads the metrics of a run out of its report fields.
func runMetrics(r Run) map[string]float64 {
	m := map[string]float64{
		MetricThroughputRPS:           r.Load.ThroughputRPS,
		MetricP50Ms:                   r.Load.LatencyMs.P50,
		MetricP95Ms:                   r.Load.LatencyMs.P95,
		MetricP99Ms:                   r.Load.LatencyMs.P99,
		MetricMaxLockWaiters:          float64(r.LockMonitor.MaxLockWaiters),
		MetricFailedRequests:          float64(r.Load.FailedRequests),
		MetricPoolMaxUsageBasisPoints: float64(r.Pool.MaxUsageBasisPoints),
		MetricAcquireWaitP95Ms:        r.Load.AcquireWaitMs.P95,
		MetricAcquireWaitP99Ms:        r.Load.AcquireWaitMs.P99,
	}
	if q := r.Queue; q != nil {
		m[MetricPersistLagP50Ms] = q.PersistLagMs.P50
		m[MetricPersistLagP95Ms] = q.PersistLagMs.P95
		m[MetricPersistLagP99Ms] = q.PersistLagMs.P99
		m[MetricFlushSQLOps] = float64(q.FlushSQLOpsTotal)
		m[MetricCompacted] = float64(q.CompactedTotal)
		m[MetricQueueInline] = float64(q.SyncFallbackTotal)
		m[MetricQueueDropped] = float64(q.DroppedTotal)
		if q.WritesPerUpdate > 0 {
			m[MetricWritesPerUpdate] = q.WritesPerUpdate
		}
	}
	if h := r.HotSets; h != nil {
		m[MetricHottestShare] = h.HottestShare
	}
	if d := r.Database; d != nil {
		m[MetricWALBytesPerRequest] = d.PerRequest.WALBytes
		m[MetricCommitsPerRequest] = d.PerRequest.Commits
		m[MetricRowVersionsPerRequest] = d.PerRequest.RowVersions
		if d.Statements != nil {
			m[MetricStatementsPerRequest] = d.PerRequest.Statements
		}
	}
	if r.Efficiency > 0 {
		m[MetricEfficiency] = r.Efficiency
	}
	if ol := r.Load.OpenLoop; ol != nil {
		m[MetricAchievedRPS] = ol.AchievedRPS
		m[MetricSentShare] = ol.SentShare
		m[MetricServiceP99Ms] = ol.ServiceMs.P99
		m[MetricLate] = float64(ol.Late)
		m[MetricSkipped] = float64(ol.Skipped)
	}
	if rc := r.Reconciliation; rc != nil {
		m[MetricLost] = float64(rc.Lost)
		m[MetricDuplicated] = float64(rc.Duplicated)
	}
	for table, n := range r.LockMonitor.MaxWaitersByRelation {
		m[MetricMaxWaitersPrefix+table] = float64(n)
	}
	for table, n := range r.LockMonitor.MaxWaitersPerRowByRelation {
		m[MetricMaxWaitersPerRowPrefix+table] = float64(n)
	}
	if read := r.LockMonitor.TotalReadMs; read != nil {
		m[MetricTotalReadP50Ms] = read.P50
		m[MetricTotalReadP99Ms] = read.P99
	}
	m[MetricMaxLockWaitMs] = r.LockMonitor.MaxLockWaitMs
	if p := r.Pooler; p != nil {
		m[MetricPoolerMaxWaiting] = float64(p.MaxClientsWaiting)
		m[MetricPoolerMaxWaitMs] = p.MaxWaitMs
		m[MetricPoolerAvgWaitMs] = p.AvgWaitMs
	}
	if r.Pool.MaxServerSessions > 0 {
		m[MetricServerSessions] = float64(r.Pool.MaxServerSessions)
	}
	if g := r.Generator; g != nil && g.Requests > 0 {
		m[MetricClientCPUPerRequestUs] = g.Client.PerRequestUs
		m[MetricClientCPUShare] = g.Client.MachineShare
		if g.Server != nil {
			m[MetricServerCPUPerRequestUs] = g.Server.PerRequestUs
			m[MetricServerCPUShare] = g.Server.MachineShare
		}
	}
	if n := r.Network; n != nil && n.Postgres != nil && n.Postgres.Probes > 0 {
		m[MetricRTTP50Ms] = n.Postgres.RTTMs.P50
		m[MetricRTTP99Ms] = n.Postgres.RTTMs.P99
	}
	return m
}

// RunSpreads is the spread of a single run, by metric (a table row of one run): median, min and max are the value itself.
func RunSpreads(r Run) map[string]Spread {
	out := make(map[string]Spread)
	for k, v := range runMetrics(r) {
		out[k] = Spread{Median: v, Min: v, Max: v}
	}
	return out
}

// Summarize groups runs by (mode, level, slots, rate, round trip, pool size), in the order each group first appears, and gives the
// median, min and max of every metric named by the Metric constants (including one
// MetricMaxWaitersPrefix entry per hot table). A metric that only some runs have (persist lag
// when a run had no queue) is summarised over the runs that have it. Verified is true when the
// verification of every run of the group passed.
func Summarize(runs []Run) []Summary {
	type group struct {
		mode               string
		level, slots, pool int
		rate, rtt          float64
	}
	var order []group
	byGroup := make(map[group][]Run)
	for _, r := range runs {
		g := group{r.Mode, r.Level, r.Slots, r.PoolSize, r.Rate, r.RTTMs}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], r)
	}
	out := make([]Summary, 0, len(order))
	for _, g := range order {
		out = append(out, SummarizeGroup(g.mode, g.level, byGroup[g]))
	}
	return out
}

// SummarizeGroup is the summary of the runs of one group (one mode, level, slot count, rate,
// round trip and pool size; all but the mode and level are read from its runs).
func SummarizeGroup(mode string, level int, runs []Run) Summary {
	values := make(map[string][]float64)
	verified := len(runs) > 0
	for _, r := range runs {
		for k, v := range runMetrics(r) {
			values[k] = append(values[k], v)
		}
		verified = verified && r.Verification.Passed
	}
	metrics := make(map[string]Spread, len(values))
	for k, vs := range values {
		metrics[k] = spreadOf(vs)
	}
	s := Summary{Mode: mode, Level: level, Repetitions: len(runs), Verified: verified, Metrics: metrics}
	if len(runs) > 0 {
		s.Slots, s.Rate, s.RTTMs, s.PoolSize = runs[0].Slots, runs[0].Rate, runs[0].RTTMs, runs[0].PoolSize
	}
	return s
}

// spreadOf returns median (the mean of the two middle values for an even count), min and max.
func spreadOf(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[n-1]}
}

// FindKnee returns the concurrency of the saturation knee of a ladder, 0 when there is none.
//
// With the levels in increasing concurrency, the knee is the lowest level L whose next level N
// brings both
//   - a throughput gain below 5% (KneeMaxThroughputGain): T(N) < 1.05 × T(L), a drop included;
//   - a p95 rise of at least 5% (KneeMinP95Rise): P95(N) ≥ 1.05 × P95(L).
//
// That is: L already delivers all the throughput the system has, and concurrency beyond it only
// queues. The p95 condition keeps a ladder that is flat from the start with noisy latency (no
// response to concurrency at all) from reporting a knee; the 5% floor on the rise keeps
// measurement noise from counting as "p95 keeps rising". A level whose throughput is 0 cannot
// be a knee. The last level never is: nothing after it shows that it saturated.
func FindKnee(levels []ConcurrencyLevel) int {
	sorted := append([]ConcurrencyLevel(nil), levels...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Concurrency < sorted[j].Concurrency })
	for i := 0; i+1 < len(sorted); i++ {
		cur, next := sorted[i], sorted[i+1]
		if cur.ThroughputRPS <= 0 {
			continue
		}
		flat := next.ThroughputRPS < cur.ThroughputRPS*(1+KneeMaxThroughputGain)
		queues := next.P95Ms >= cur.P95Ms*(1+KneeMinP95Rise) && next.P95Ms > cur.P95Ms
		if flat && queues {
			return cur.Concurrency
		}
	}
	return 0
}

// BuildLadder builds the concurrency ladder of one mode from its runs: every run of that mode
// with a Level (ladder runs), grouped by level, each level holding the medians over its
// repetitions, in increasing concurrency, with the knee found by FindKnee marked on its level
// and recorded in KneeConcurrency. Runs of other modes and runs outside a ladder (Level 0) are
// ignored.
func BuildLadder(mode string, runs []Run) ConcurrencyLadder {
	sums := ladderSummaries(mode, runs, func(r Run) bool { return r.Level > 0 })
	levels := make([]ConcurrencyLevel, 0, len(sums))
	for _, s := range sums {
		levels = append(levels, ConcurrencyLevel{Concurrency: s.Level, LevelFigures: levelFigures(s.Metrics)})
	}
	knee := FindKnee(levels)
	for i := range levels {
		levels[i].Knee = knee != 0 && levels[i].Concurrency == knee
	}
	return ConcurrencyLadder{Mode: mode, Levels: levels, KneeConcurrency: knee}
}

// ladderSummaries summarises the runs of mode that stand on a ladder, one Summary per rung
// (medians over its repetitions), in increasing concurrency, slots, round trip, pool size or
// rate.
func ladderSummaries(mode string, runs []Run, onLadder func(Run) bool) []Summary {
	var mine []Run
	for _, r := range runs {
		if r.Mode == mode && onLadder(r) {
			mine = append(mine, r)
		}
	}
	sums := Summarize(mine)
	sort.SliceStable(sums, func(i, j int) bool {
		a, b := sums[i], sums[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		if a.Slots != b.Slots {
			return a.Slots < b.Slots
		}
		if a.RTTMs != b.RTTMs {
			return a.RTTMs < b.RTTMs
		}
		if a.PoolSize != b.PoolSize {
			return a.PoolSize < b.PoolSize
		}
		return a.Rate < b.Rate
	})
	return sums
}

// BuildSlotLadder builds the slot ladder of one mode (--slots-levels): one level per slot
// count, in increasing slots, with the lock waits, the cost of reading a total and the persist
// lag beside throughput and latency. KneeSlots is the first count after which more slots add
// less than 5% throughput (KneeMaxThroughputGain): where they stop paying; 0 when they never
// did within the ladder.
func BuildSlotLadder(mode string, runs []Run) SlotLadder {
	sums := ladderSummaries(mode, runs, func(r Run) bool { return r.Slots > 0 })
	levels := make([]SlotLevel, 0, len(sums))
	for _, s := range sums {
		m := s.Metrics
		levels = append(levels, SlotLevel{Slots: s.Slots, LevelFigures: levelFigures(m),
			MaxWaiters:       maxWithPrefix(m, MetricMaxWaitersPrefix),
			MaxWaitersPerRow: maxWithPrefix(m, MetricMaxWaitersPerRowPrefix),
			TotalReadP50Ms:   m[MetricTotalReadP50Ms].Median,
			TotalReadP99Ms:   m[MetricTotalReadP99Ms].Median,
			PersistLagP99Ms:  m[MetricPersistLagP99Ms].Median,
		})
	}
	knee := 0
	for i := 0; i+1 < len(levels) && knee == 0; i++ {
		if cur := levels[i]; cur.ThroughputRPS > 0 && levels[i+1].ThroughputRPS < cur.ThroughputRPS*(1+KneeMaxThroughputGain) {
			knee = cur.Slots
			levels[i].Knee = true
		}
	}
	return SlotLadder{Mode: mode, Levels: levels, KneeSlots: knee}
}

// BuildRTTLadder builds the RTT ladder of one mode (--rtt-levels): one level per round trip
// added to PostgreSQL, in increasing order, with the lock waits and the persist lag beside
// throughput and latency; every run of mode stands on it.
func BuildRTTLadder(mode string, runs []Run) RTTLadder {
	sums := ladderSummaries(mode, runs, func(Run) bool { return true })
	levels := make([]RTTLevel, 0, len(sums))
	for _, s := range sums {
		m := s.Metrics
		levels = append(levels, RTTLevel{RTTMs: s.RTTMs, LevelFigures: levelFigures(m),
			MaxWaiters:      maxWithPrefix(m, MetricMaxWaitersPrefix),
			MaxLockWaitMs:   m[MetricMaxLockWaitMs].Median,
			PersistLagP99Ms: m[MetricPersistLagP99Ms].Median,
		})
	}
	return RTTLadder{Mode: mode, Levels: levels}
}

// BuildPoolLadder builds the pool-size ladder of one mode (--pool-levels): one level per pool
// size, in increasing order, with the wait for a pool connection and the lock waits beside
// throughput and latency. It names the mode's best size: with sloP99Ms > 0, the verified size of
// highest throughput whose p99 is within it (0 when none is); without, the verified size of
// highest throughput, stated as such (BestBy). The smaller size wins a tie.
func BuildPoolLadder(mode string, runs []Run, sloP99Ms float64) PoolLadder {
	sums := ladderSummaries(mode, runs, func(r Run) bool { return r.PoolSize > 0 })
	l := PoolLadder{Mode: mode, SLOP99Ms: sloP99Ms, Levels: make([]PoolLevel, 0, len(sums)), BestBy: PoolBestByThroughput}
	if sloP99Ms > 0 {
		l.BestBy = PoolBestBySLO
	}
	best := -1
	for i, s := range sums {
		m := s.Metrics
		lv := PoolLevel{Pool: s.PoolSize, LevelFigures: levelFigures(m),
			AcquireWaitP95Ms: m[MetricAcquireWaitP95Ms].Median,
			AcquireWaitP99Ms: m[MetricAcquireWaitP99Ms].Median,
			MaxLockWaiters:   m[MetricMaxLockWaiters].Median,
			MaxLockWaitMs:    m[MetricMaxLockWaitMs].Median,
			PersistLagP99Ms:  m[MetricPersistLagP99Ms].Median,
			Verified:         s.Verified,
		}
		lv.MetSLO = sloP99Ms > 0 && lv.Verified && lv.P99Ms <= sloP99Ms
		if (lv.MetSLO || sloP99Ms == 0 && lv.Verified) && (best < 0 || lv.ThroughputRPS > l.Levels[best].ThroughputRPS) {
			best = i
		}
		l.Levels = append(l.Levels, lv)
	}
	if best >= 0 {
		l.Levels[best].Best = true
		l.BestPool = l.Levels[best].Pool
	}
	return l
}

// levelFigures are the medians every ladder level shows.
func levelFigures(m map[string]Spread) LevelFigures {
	return LevelFigures{ThroughputRPS: m[MetricThroughputRPS].Median, P50Ms: m[MetricP50Ms].Median,
		P95Ms: m[MetricP95Ms].Median, P99Ms: m[MetricP99Ms].Median}
}

// BuildRateLadder builds the open-loop rate ladder of one mode from its runs at a rate (the
// runs of a --rates ladder), one step per rate in increasing order, and, when sloP99Ms > 0,
// finds the highest rate whose p99 stayed within it while at least RateHeldFraction of the
// arrivals were sent (max_rate_at_slo). A rate above one that failed may still meet the
// objective (noise, or a mode that batches better under load); the highest that met it is
// named, and the steps say which met it.
func BuildRateLadder(mode string, runs []Run, sloP99Ms float64) RateLadder {
	sums := ladderSummaries(mode, runs, func(r Run) bool { return r.Rate > 0 && r.Level == 0 })
	l := RateLadder{Mode: mode, SLOP99Ms: sloP99Ms, Rates: make([]RateStep, 0, len(sums))}
	best := -1
	for i, s := range sums {
		med := func(k string) float64 { return s.Metrics[k].Median }
		step := RateStep{TargetRPS: s.Rate, AchievedRPS: med(MetricAchievedRPS), SentShare: med(MetricSentShare), P50Ms: med(MetricP50Ms), P95Ms: med(MetricP95Ms),
			P99Ms: med(MetricP99Ms), ServiceP99Ms: med(MetricServiceP99Ms), Late: med(MetricLate), Skipped: med(MetricSkipped)}
		step.MetSLO = sloP99Ms > 0 && step.P99Ms <= sloP99Ms && HeldRate(step.SentShare)
		if step.MetSLO {
			best = i
		}
		l.Rates = append(l.Rates, step)
	}
	if best >= 0 {
		l.Rates[best].MaxAtSLO = true
		l.MaxRateAtSLO = l.Rates[best].TargetRPS
	}
	return l
}

// maxWithPrefix is the largest median of the metrics named prefix+table: the worst table.
func maxWithPrefix(m map[string]Spread, prefix string) float64 {
	var v float64
	for k, s := range m {
		if strings.HasPrefix(k, prefix) {
			v = max(v, s.Median)
		}
	}
	return v
}
