package queue

import "sync/atomic"

// Metrics is a snapshot of a backend's counters; the package doc defines every field and the
// invariant that ties them together.
type Metrics struct {
	Capacity             int64 `json:"capacity"`
	Depth                int64 `json:"depth"`
	PendingDepth         int64 `json:"pending_depth"`
	MaxDepth             int64 `json:"max_depth"`
	EnqueuedTotal        int64 `json:"enqueued_total"`
	FlushedTotal         int64 `json:"flushed_total"`
	FlushBatchesTotal    int64 `json:"flush_batches_total"`
	FlushSQLOpsTotal     int64 `json:"flush_sql_ops_total"`
	FlushSQLRecordsTotal int64 `json:"flush_sql_records_total"`
	CompactedTotal       int64 `json:"compacted_total"`
	DroppedTotal         int64 `json:"dropped_total"`
	FlushFailedTotal     int64 `json:"flush_failed_total"`
	RetriesTotal         int64 `json:"retries_total"`
	SyncFallbackTotal    int64 `json:"sync_fallback_total"`
	RejectedTotal        int64 `json:"rejected_total"`
	AbandonedTotal       int64 `json:"abandoned_total"`
}

// Accounted is the right-hand side of the invariant: records that reached a final outcome.
// After Close it equals EnqueuedTotal.
func (m Metrics) Accounted() int64 {
	return m.FlushedTotal + m.SyncFallbackTotal + m.DroppedTotal + m.RejectedTotal + m.AbandonedTotal
}

// closedBit marks counters.state once Close has begun; the bits below it count Enqueue calls
// that passed the closed check and may still send on a channel or write inline.
const closedBit = int64(1) << 62

// counters groups the atomics by who writes them, so that the Enqueue hot path touches one
// cache line and the workers' once-per-batch updates do not invalidate it.
type counters struct {
	_            [64]byte
	state        atomic.Int64 // closedBit | Enqueue calls in flight
	enqueued     atomic.Int64
	pending      atomic.Int64
	_            [64]byte
	maxPending   atomic.Int64 // written only when a new maximum is seen
	_            [64]byte
	dropped      atomic.Int64
	rejected     atomic.Int64
	syncFallback atomic.Int64
	_            [64]byte
	flushed      atomic.Int64
	batches      atomic.Int64
	sqlOps       atomic.Int64
	sqlRecords   atomic.Int64
	compacted    atomic.Int64
	flushFailed  atomic.Int64
	retries      atomic.Int64
	abandoned    atomic.Int64
}

// notePending raises maxPending to v if v is larger.
func (c *counters) notePending(v int64) {
	for {
		cur := c.maxPending.Load()
		if v <= cur || c.maxPending.CompareAndSwap(cur, v) {
			return
		}
	}
}
