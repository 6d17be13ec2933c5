package results

// The metrics of a run: what the table, the summaries, the ladders and the comparison read of
// it, each under one name (runMetrics), and the spreads of a group of runs (spread.go).

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
	// On MySQL and MariaDB (runs whose Database has InnoDB's figures): the redo per request
	// instead of the WAL, InnoDB's fsyncs per request, and its deadlocks and lock wait
	// timeouts over the run; the server process's CPU per request where it was read.
	MetricRedoBytesPerRequest = "redo_bytes_per_request"
	MetricFsyncsPerRequest    = "fsyncs_per_request"
	MetricDeadlocks           = "deadlocks"
	MetricLockWaitTimeouts    = "lock_wait_timeouts"
	MetricServerCPUPerRequest = "server_cpu_us_per_request"
	MetricEfficiency          = "efficiency"
	MetricLost                = "lost"
	MetricDuplicated          = "duplicated"
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
	MetricServerCPUShare        = "server_cpu_share"
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
		switch {
		case d.InnoDB == nil:
			m[MetricWALBytesPerRequest] = d.PerRequest.WALBytes
		case d.Read("redo_bytes"):
			m[MetricRedoBytesPerRequest] = d.PerRequest.RedoBytes
		}
		if d.Read("xact_commit") {
			m[MetricCommitsPerRequest] = d.PerRequest.Commits
		}
		if d.Read("tables") {
			m[MetricRowVersionsPerRequest] = d.PerRequest.RowVersions
		}
		if d.Statements != nil {
			m[MetricStatementsPerRequest] = d.PerRequest.Statements
		}
		if i := d.InnoDB; i != nil {
			m[MetricFsyncsPerRequest] = d.PerRequest.Fsyncs
			if d.Read("innodb.deadlocks") {
				m[MetricDeadlocks] = float64(i.Deadlocks)
			}
			if d.Read("innodb.lock_wait_timeouts") {
				m[MetricLockWaitTimeouts] = float64(i.LockWaitTimeouts)
			}
		}
		if d.ServerCPUSeconds > 0 {
			m[MetricServerCPUPerRequest] = d.PerRequest.ServerCPUMicros
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
			m[MetricServerCPUPerRequest] = g.Server.PerRequestUs
			m[MetricServerCPUShare] = g.Server.MachineShare
		}
	}
	if n := r.Network; n != nil && n.Postgres != nil && n.Postgres.Probes > 0 {
		m[MetricRTTP50Ms] = n.Postgres.RTTMs.P50
		m[MetricRTTP99Ms] = n.Postgres.RTTMs.P99
	}
	return m
}
