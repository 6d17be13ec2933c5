package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotspotkit/hotspotkit/hist"
)

// Metric names. Units are in the names (seconds, records, entries, connections), counters
// end in _total, and every metric carries the run's labels (suite, mode, role, run, level).
const (
	RequestsCompleted = "hotspotkit_requests_completed_total"
	RequestsFailed    = "hotspotkit_requests_failed_total"
	RequestErrors     = "hotspotkit_request_errors_total" // label class
	RequestsInFlight  = "hotspotkit_requests_in_flight"
	RequestDuration   = "hotspotkit_request_duration_seconds"
	AcquireWait       = "hotspotkit_pool_acquire_wait_seconds"

	LockWaiters           = "hotspotkit_lock_waiters"
	LockWaitersByRelation = "hotspotkit_lock_waiters_by_relation"  // label relation
	LockWaitersByLockType = "hotspotkit_lock_waiters_by_lock_type" // label lock_type
	// ServerLockWaits is every session's row lock waits on the server (InnoDB's; absent on
	// PostgreSQL).
	ServerLockWaits = "hotspotkit_server_lock_waits"

	PoolAcquired = "hotspotkit_pool_acquired_connections"
	PoolIdle     = "hotspotkit_pool_idle_connections"
	PoolMax      = "hotspotkit_pool_max_connections"

	// ServerSessions is the service's sessions on PostgreSQL; the Pooler ones are a pooler's
	// between the service and PostgreSQL (--pooler), from its console.
	ServerSessions       = "hotspotkit_server_sessions"
	PoolerClientsActive  = "hotspotkit_pooler_clients_active"
	PoolerClientsWaiting = "hotspotkit_pooler_clients_waiting"
	PoolerServersActive  = "hotspotkit_pooler_servers_active"
	PoolerServersIdle    = "hotspotkit_pooler_servers_idle"
	PoolerMaxWait        = "hotspotkit_pooler_max_wait_seconds"

	QueueCapacity  = "hotspotkit_queue_capacity_records"
	QueueDepth     = "hotspotkit_queue_depth_records"
	QueuePending   = "hotspotkit_queue_pending_records"
	QueueEnqueued  = "hotspotkit_queue_enqueued_records_total"
	QueueFlushed   = "hotspotkit_queue_flushed_records_total"
	QueueCompacted = "hotspotkit_queue_compacted_records_total"
	QueueDropped   = "hotspotkit_queue_dropped_records_total"
	QueueInline    = "hotspotkit_queue_inline_records_total"
	QueueRejected  = "hotspotkit_queue_rejected_records_total"
	QueueBatches   = "hotspotkit_queue_flush_batches_total"
	QueueRetries   = "hotspotkit_queue_flush_retries_total"
	PersistLag     = "hotspotkit_queue_persist_lag_seconds"

	OutboxPending = "hotspotkit_outbox_pending_records"

	StreamLength  = "hotspotkit_redis_stream_length_entries"
	StreamPending = "hotspotkit_redis_stream_pending_entries"

	// ClientCPU is the processor time this process — the load generator — used since the run
	// began, and ClientCPUShare its share of the machine's processors between the monitor's
	// latest two samples.
	ClientCPU      = "hotspotkit_client_cpu_seconds_total"
	ClientCPUShare = "hotspotkit_client_cpu_share"

	RunFinished = "hotspotkit_run_finished"
)

type metricDef struct {
	name, help string
	kind       prometheus.ValueType // GaugeValue, CounterValue; UntypedValue marks a histogram
	extra      string               // a label beyond the run's
}

const histogram = prometheus.UntypedValue

var defs = []metricDef{
	{RequestsCompleted, "Requests that succeeded (warm-up included).", prometheus.CounterValue, ""},
	{RequestsFailed, "Requests that failed, unknown outcomes included (warm-up included).", prometheus.CounterValue, ""},
	{RequestErrors, "Failed requests by error class: a SQLSTATE, dropped, conn_closed, ... (a class appears once it occurred).", prometheus.CounterValue, "class"},
	{RequestsInFlight, "Requests started and not yet finished.", prometheus.GaugeValue, ""},
	{RequestDuration, "Whole-request time of the measured requests that succeeded.", histogram, ""},
	{AcquireWait, "Time measured requests waited for a connection of the load's pool.", histogram, ""},
	{LockWaiters, "Sessions of the run waiting for a lock (latest monitor sample).", prometheus.GaugeValue, ""},
	{LockWaitersByRelation, "Lock waiters by the table they queue on (latest monitor sample).", prometheus.GaugeValue, "relation"},
	{LockWaitersByLockType, "Lock waiters by lock type: pg_locks' locktype, InnoDB's lock type and mode (latest monitor sample).", prometheus.GaugeValue, "lock_type"},
	{ServerLockWaits, "Row lock waits of every session of the server, the run's and others' (InnoDB's Innodb_row_lock_current_waits, latest monitor sample; absent on PostgreSQL).", prometheus.GaugeValue, ""},
	{PoolAcquired, "Connections of the load's pool in use.", prometheus.GaugeValue, ""},
	{PoolIdle, "Idle connections of the load's pool.", prometheus.GaugeValue, ""},
	{PoolMax, "Size of the load's pool (--max-connections).", prometheus.GaugeValue, ""},
	{ServerSessions, "Sessions of the service the database holds, idle ones too: through a pooler, its server connections (latest monitor sample).", prometheus.GaugeValue, ""},
	{PoolerClientsActive, "Client connections of the pooler linked to a server connection or idle (SHOW POOLS cl_active, latest monitor sample).", prometheus.GaugeValue, ""},
	{PoolerClientsWaiting, "Client connections waiting in the pooler for a server connection (SHOW POOLS cl_waiting, latest monitor sample).", prometheus.GaugeValue, ""},
	{PoolerServersActive, "The pooler's server connections linked to a client (SHOW POOLS sv_active, latest monitor sample).", prometheus.GaugeValue, ""},
	{PoolerServersIdle, "The pooler's idle server connections (SHOW POOLS sv_idle + sv_used, latest monitor sample).", prometheus.GaugeValue, ""},
	{PoolerMaxWait, "How long the oldest client waiting in the pooler has waited (SHOW POOLS maxwait, latest monitor sample).", prometheus.GaugeValue, ""},
	{QueueCapacity, "Records the queue holds before its full policy applies (--queue-capacity).", prometheus.GaugeValue, ""},
	{QueueDepth, "Records waiting in the queue.", prometheus.GaugeValue, ""},
	{QueuePending, "Records accepted and not yet committed (queued or in a batch in hand).", prometheus.GaugeValue, ""},
	{QueueEnqueued, "Records offered to the queue.", prometheus.CounterValue, ""},
	{QueueFlushed, "Records committed by batch flushes.", prometheus.CounterValue, ""},
	{QueueCompacted, "Writes saved by compaction (records folded into another of the same slot).", prometheus.CounterValue, ""},
	{QueueDropped, "Records dropped because the queue was full (--queue-full drop).", prometheus.CounterValue, ""},
	{QueueInline, "Records written outside the batches: inline by the request when the queue was full (--queue-full sync; a request's records in one transaction), or one by one after a batch failed its retries.", prometheus.CounterValue, ""},
	{QueueRejected, "Records of Enqueue calls that returned an error.", prometheus.CounterValue, ""},
	{QueueBatches, "Committed batch flush transactions.", prometheus.CounterValue, ""},
	{QueueRetries, "Flush attempts that re-sent records whose previous attempt failed.", prometheus.CounterValue, ""},
	{PersistLag, "Commit time minus enqueue time of every written record.", histogram, ""},
	{OutboxPending, "Outbox deltas not yet applied (latest monitor count, every second).", prometheus.GaugeValue, ""},
	{StreamLength, "Entries in the Redis stream (not yet acknowledged).", prometheus.GaugeValue, ""},
	{StreamPending, "Entries delivered to a consumer and not yet acknowledged.", prometheus.GaugeValue, ""},
	{ClientCPU, "Processor time (user and system) this process, the load generator, used since the run began.", prometheus.CounterValue, ""},
	{ClientCPUShare, "This process's processor time over the machine's processors between the monitor's latest two samples (0.5 on 2 processors: one busy).", prometheus.GaugeValue, ""},
	{RunFinished, "1 once the run has drained and been counted: its values are final.", prometheus.GaugeValue, ""},
}

var (
	descs    = map[string]*prometheus.Desc{}
	kinds    = map[string]prometheus.ValueType{}
	allDescs []*prometheus.Desc
)

func init() {
	for _, d := range defs {
		labels := labelNames
		if d.extra != "" {
			labels = append(append([]string(nil), labelNames...), d.extra)
		}
		desc := prometheus.NewDesc(d.name, d.help, labels, nil)
		descs[d.name] = desc
		kinds[d.name] = d.kind
		allDescs = append(allDescs, desc)
	}
}

// Bucket bounds: request times from 50 µs to about 52 s, persist lag from 1 ms to about 17 min.
var (
	requestBuckets = prometheus.ExponentialBuckets(0.00005, 2, 21)
	lagBuckets     = prometheus.ExponentialBuckets(0.001, 2, 21)
)

// emitter builds one run's metrics.
type emitter struct {
	labels []string
	out    []prometheus.Metric
}

func (e *emitter) value(name string, v float64, extra ...string) {
	e.out = append(e.out, prometheus.MustNewConstMetric(descs[name], kinds[name], v, append(e.labels, extra...)...))
}

func (e *emitter) byLabel(name string, m map[string]int64) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.value(name, float64(m[k]), k)
	}
}

func (e *emitter) histogram(name string, h *hist.Histogram, bounds []float64) {
	micros := make([]int64, len(bounds))
	for i, b := range bounds {
		micros[i] = int64(b * 1e6)
	}
	counts, sum := h.Cumulative(micros)
	buckets := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		buckets[b] = counts[i]
	}
	e.out = append(e.out, prometheus.MustNewConstHistogram(descs[name], uint64(h.Count()), sum/1e6, buckets, e.labels...))
}

// metrics reads the source once; finished says whether this is the run's final reading.
func (s Source) metrics(finished bool) []prometheus.Metric {
	e := &emitter{labels: s.Labels.values()}
	e.value(RunFinished, map[bool]float64{false: 0, true: 1}[finished])
	live := s.Live
	e.value(RequestsCompleted, float64(live.Completed()))
	e.value(RequestsFailed, float64(live.Failed()))
	e.byLabel(RequestErrors, live.FailedByClass())
	e.value(RequestsInFlight, float64(live.InFlight()))
	e.histogram(RequestDuration, live.Latency(), requestBuckets)
	e.histogram(AcquireWait, live.AcquireWait(), requestBuckets)
	if s.Monitor != nil {
		m := s.Monitor()
		e.value(LockWaiters, float64(m.LockWaiters))
		byRel := map[string]int64{}
		for _, t := range s.HotTables {
			byRel[t] = 0 // always there, so that a graph of a hot table has no gaps
		}
		for t, n := range m.WaitersByRelation {
			byRel[t] = n
		}
		e.byLabel(LockWaitersByRelation, byRel)
		e.byLabel(LockWaitersByLockType, m.WaitersByLockType)
		if m.ServerLockWaits != nil {
			e.value(ServerLockWaits, float64(*m.ServerLockWaits))
		}
		if m.OutboxPending != nil {
			e.value(OutboxPending, float64(*m.OutboxPending))
		}
		e.value(ServerSessions, float64(m.ServerSessions))
		e.value(ClientCPUShare, m.ClientCPUShare)
		if p := m.Pooler; p != nil {
			e.value(PoolerClientsActive, float64(p.ClientsActive))
			e.value(PoolerClientsWaiting, float64(p.ClientsWaiting))
			e.value(PoolerServersActive, float64(p.ServersActive))
			e.value(PoolerServersIdle, float64(p.ServersIdle))
			e.value(PoolerMaxWait, p.MaxWaitMs/1000)
		}
	}
	if s.ClientCPU != nil {
		e.value(ClientCPU, s.ClientCPU().Seconds())
	}
	if s.Pool != nil {
		p := s.Pool()
		e.value(PoolAcquired, float64(p.Acquired))
		e.value(PoolIdle, float64(p.Idle))
		e.value(PoolMax, float64(p.Max))
	}
	if s.Queue != nil {
		q := s.Queue()
		e.value(QueueCapacity, float64(q.Capacity))
		e.value(QueueDepth, float64(q.Depth))
		e.value(QueuePending, float64(q.PendingDepth))
		e.value(QueueEnqueued, float64(q.EnqueuedTotal))
		e.value(QueueFlushed, float64(q.FlushedTotal))
		e.value(QueueCompacted, float64(q.CompactedTotal))
		e.value(QueueDropped, float64(q.DroppedTotal))
		e.value(QueueInline, float64(q.SyncFallbackTotal))
		e.value(QueueRejected, float64(q.RejectedTotal))
		e.value(QueueBatches, float64(q.FlushBatchesTotal))
		e.value(QueueRetries, float64(q.RetriesTotal))
	}
	if s.PersistLag != nil {
		e.histogram(PersistLag, s.PersistLag(), lagBuckets)
	}
	if s.Stream != nil {
		if st := s.Stream(); st != nil {
			e.value(StreamLength, float64(st.Length))
			e.value(StreamPending, float64(st.PendingEntries))
		}
	}
	return e.out
}
