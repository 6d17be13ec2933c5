package queue

import (
	"sync/atomic"
	"time"
)

// FlushTimes says where an in-memory queue's flushing time went, in nanoseconds summed over
// every worker, so that a reader can tell a queue that keeps the database busy from one that
// waits on itself. The worker's own time (BuildNs, PipelineWaitNs, RetryNs, WaitNs, IdleNs)
// and the committed batches' phases (BeginNs to CommitNs, from FlushResult.Phases) are both
// counted; with Options.Pipeline a batch's phases overlap the worker's next batch, so their
// sum may exceed the run's length times Workers. Failed attempts count in RetryNs only.
type FlushTimes struct {
	// Batches is the number of committed batch flushes whose phases are counted.
	Batches int64 `json:"batches"`
	// BuildNs: building batches to hand to the Flusher (copying out, compacting, sorting).
	BuildNs int64 `json:"build_ns"`
	// BeginNs, CopyNs, StatementsNs, CommitNs: the committed flushes' phases.
	BeginNs      int64 `json:"begin_ns"`
	CopyNs       int64 `json:"copy_ns"`
	StatementsNs int64 `json:"statements_ns"`
	CommitNs     int64 `json:"commit_ns"`
	// PipelineWaitNs: a worker, its next batch written, waiting for its previous batch's
	// COMMIT (Options.Pipeline), which it must see succeed before it commits the next.
	PipelineWaitNs int64 `json:"pipeline_wait_ns"`
	// RetryNs: failed attempts, the backoffs between them and one-by-one fallback writes.
	RetryNs int64 `json:"retry_ns"`
	// WaitNs: a partial batch in hand, waiting for more records or for its flush interval.
	WaitNs int64 `json:"wait_ns"`
	// IdleNs: nothing in hand, waiting for a first record.
	IdleNs int64 `json:"idle_ns"`
}

// flushClock holds the atomics behind FlushTimes, shared by a queue's workers.
type flushClock struct {
	batches, build, begin, copy, statements, commit, pipelineWait, retry, wait, idle atomic.Int64
}

// committed counts a committed batch's phases.
func (c *flushClock) committed(p FlushPhases) {
	c.batches.Add(1)
	c.begin.Add(int64(p.Begin))
	c.copy.Add(int64(p.Copy))
	c.statements.Add(int64(p.Statements))
	c.commit.Add(int64(p.Commit))
}

// since adds the time since began to the counter d and returns now.
func since(d *atomic.Int64, began time.Time) time.Time {
	now := time.Now()
	d.Add(int64(now.Sub(began)))
	return now
}

func (c *flushClock) times() FlushTimes {
	return FlushTimes{
		Batches: c.batches.Load(), BuildNs: c.build.Load(), BeginNs: c.begin.Load(), CopyNs: c.copy.Load(),
		StatementsNs: c.statements.Load(), CommitNs: c.commit.Load(), PipelineWaitNs: c.pipelineWait.Load(),
		RetryNs: c.retry.Load(), WaitNs: c.wait.Load(), IdleNs: c.idle.Load(),
	}
}
