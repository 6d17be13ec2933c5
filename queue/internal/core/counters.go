package core

import (
	"sync/atomic"
	"time"
)

// Metrics has exactly queue.Metrics' fields, in its order, so that a snapshot converts to it
// (queue.Metrics(c.Metrics(…))); the field docs and JSON names are queue's.
type Metrics struct {
	Capacity             int64
	Depth                int64
	PendingDepth         int64
	MaxDepth             int64
	EnqueuedTotal        int64
	FlushedTotal         int64
	FlushBatchesTotal    int64
	FlushSQLOpsTotal     int64
	FlushSQLRecordsTotal int64
	CompactedTotal       int64
	DroppedTotal         int64
	FlushFailedTotal     int64
	RetriesTotal         int64
	SyncFallbackTotal    int64
	RejectedTotal        int64
	AbandonedTotal       int64
}

// closedBit marks Counters.intake once Close has begun; the bits below it count Enqueue calls
// that passed the closed check and may still hand a record to a worker or write inline.
const closedBit = int64(1) << 62

// Counters are the atomics behind queue.Metrics. Every backend keeps one set, counts with it
// what queue's package doc defines and takes its snapshot with Metrics, so the counters mean
// the same whatever the backend. They are grouped by who writes them, so that the Enqueue hot
// path touches one cache line and the workers' once-per-batch updates do not invalidate it.
// The zero value is ready to use.
type Counters struct {
	_        [64]byte
	intake   atomic.Int64 // closedBit | Enqueue calls in flight
	Enqueued atomic.Int64
	// Pending is the in-memory queue's pending_depth (the Redis one reads the stream's length).
	Pending atomic.Int64
	_       [64]byte
	// MaxDepth is max_depth, written only when a new maximum is seen (NoteDepth).
	MaxDepth     atomic.Int64
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
		cur := c.MaxDepth.Load()
		if v <= cur || c.MaxDepth.CompareAndSwap(cur, v) {
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
		MaxDepth:             c.MaxDepth.Load(),
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
