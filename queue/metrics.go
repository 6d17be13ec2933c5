package queue

import (
	"sync/atomic"
	"time"
)

// Metrics is a snapshot of a backend's counters; the package doc defines every field and the
// invariant that ties them together (Accounted is its right-hand side). The JSON names are the
// report's: results.QueueMetrics converts from Metrics field for field.
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
// Once the queue is closed it equals EnqueuedTotal.
func (m Metrics) Accounted() int64 {
	return m.FlushedTotal + m.SyncFallbackTotal + m.DroppedTotal + m.RejectedTotal + m.AbandonedTotal
}

// closedBit marks Counters.intake once Close has begun; the bits below it count Enqueue calls
// that passed the closed check and may still hand a record to a worker or write inline.
const closedBit = int64(1) << 62

// Counters are the atomics behind Metrics. Every backend keeps one set, counts with it what
// the package doc defines and takes its snapshot with Metrics, so the counters mean the same
// whatever the backend. They are grouped by who writes them, so that the Enqueue hot path
// touches one cache line and the workers' once-per-batch updates do not invalidate it. The
// zero value is ready to use.
type Counters struct {
	_            [64]byte
	intake       atomic.Int64 // closedBit | Enqueue calls in flight
	Enqueued     atomic.Int64
	pending      atomic.Int64 // the in-memory Queue's pending_depth
	_            [64]byte
	maxDepth     atomic.Int64 // written only when a new maximum is seen
	_            [64]byte
	Dropped      atomic.Int64
	Rejected     atomic.Int64
	SyncFallback atomic.Int64
	_            [64]byte
	Flushed      atomic.Int64
	Batches      atomic.Int64
	SQLOps       atomic.Int64
	SQLRecords   atomic.Int64
	Compacted    atomic.Int64
	FlushFailed  atomic.Int64
	Retries      atomic.Int64
	Abandoned    atomic.Int64
}

// Enter counts an Enqueue call in flight unless Close has begun; then it counts the call's
// records rejected and reports false. A call that entered must Leave.
func (c *Counters) Enter(records int64) bool {
	// The load keeps callers of a closed queue off the in-flight count: if they kept bumping
	// it, Close could wait a long time for a moment when it reads zero.
	if c.intake.Load()&closedBit != 0 {
		c.Rejected.Add(records)
		return false
	}
	if c.intake.Add(1)&closedBit != 0 { // Close began between the two
		c.intake.Add(-1)
		c.Rejected.Add(records)
		return false
	}
	return true
}

// Leave ends an Enqueue call that entered.
func (c *Counters) Leave() { c.intake.Add(-1) }

// CloseIntake makes every later Enter fail; Close calls it first.
func (c *Counters) CloseIntake() { c.intake.Or(closedBit) }

// AwaitInFlight waits, after CloseIntake, until every Enqueue call that entered has left.
func (c *Counters) AwaitInFlight() {
	for c.intake.Load() != closedBit {
		time.Sleep(50 * time.Microsecond)
	}
}

// NoteDepth raises the max_depth counter to v if v is larger.
func (c *Counters) NoteDepth(v int64) {
	for {
		cur := c.maxDepth.Load()
		if v <= cur || c.maxDepth.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Metrics reads the counters one by one, with the backend's own capacity, depth and pending
// depth (what it holds is its own business).
func (c *Counters) Metrics(capacity, depth, pendingDepth int64) Metrics {
	return Metrics{
		Capacity:             capacity,
		Depth:                depth,
		PendingDepth:         pendingDepth,
		MaxDepth:             c.maxDepth.Load(),
		EnqueuedTotal:        c.Enqueued.Load(),
		FlushedTotal:         c.Flushed.Load(),
		FlushBatchesTotal:    c.Batches.Load(),
		FlushSQLOpsTotal:     c.SQLOps.Load(),
		FlushSQLRecordsTotal: c.SQLRecords.Load(),
		CompactedTotal:       c.Compacted.Load(),
		DroppedTotal:         c.Dropped.Load(),
		FlushFailedTotal:     c.FlushFailed.Load(),
		RetriesTotal:         c.Retries.Load(),
		SyncFallbackTotal:    c.SyncFallback.Load(),
		RejectedTotal:        c.Rejected.Load(),
		AbandonedTotal:       c.Abandoned.Load(),
	}
}
