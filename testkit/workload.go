package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/asyncrun"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// The write paths a suite plugs its SQL into: one transaction per request (SyncTx), and the
// async queue (AsyncWorkload).

// TxFunc writes request i inside tx.
type TxFunc func(ctx context.Context, tx sqldb.Tx, i int64) error

// SyncTx returns an op that runs fn in one transaction per request on a pooled connection,
// tried again under --max-tries (Request.Try) when it fails with a retryable class. The
// wait for the connection is recorded apart from the request's latency. A COMMIT whose
// outcome cannot be known (the connection broke while committing) is reported as such, so the
// run looks the request up afterwards instead of guessing; a retry after it may find the
// request already written, so fn must be idempotent by the request: it applies its changes
// only when the request's own row is new.
func (r *Run) SyncTx(fn TxFunc) Op {
	pool := r.env.Pool
	loseEvery := r.env.Config.DebugLoseCommitEvery // loses the first COMMIT reply of every Nth request
	return func(ctx context.Context, req *load.Request) error {
		lose := loseEvery > 0 && req.Index%loseEvery == 0
		return req.Try(ctx, func(ctx context.Context) error {
			conn, err := req.Acquire(ctx, pool)
			if err != nil {
				return err
			}
			defer conn.Release()
			err = syncTry(ctx, conn, fn, req.Index, &lose)
			if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				// Its statements ran under WatchOnce's: say what ended them.
				err = fmt.Errorf("%w: %w", ctx.Err(), err)
			}
			return err
		})
	}
}

// syncTry is one try of SyncTx's request i on conn: fn in a transaction, its statements
// watched once for ctx's end (sqldb.WatchOnce). lose loses the COMMIT reply of this try.
func syncTry(ctx context.Context, conn sqldb.PoolConn, fn TxFunc, i int64, lose *bool) error {
	conn, unwatch := sqldb.WatchOnce(ctx, conn)
	defer unwatch()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx, i); err != nil {
		sqldb.Rollback(ctx, tx)
		if errors.Is(err, ErrAlreadyWritten) {
			return nil
		}
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		if sqldb.CommitOutcomeUnknown(err) {
			return load.Unknown(err)
		}
		return err
	}
	if *lose { // only the first try's reply is lost
		*lose = false
		return load.Unknown(errCommitReplyLost)
	}
	return nil
}

// ErrAlreadyWritten is what a SyncTx function returns when it finds its request written by an
// earlier try (whose COMMIT's reply was lost): the try rolls back, and the request succeeded.
var ErrAlreadyWritten = errors.New("testkit: the request was written by an earlier try")

// errCommitReplyLost is what --debug-lose-commit-every makes a committed request's first try
// return: the connection broke before the COMMIT's reply arrived (a retryable class).
var errCommitReplyLost = fmt.Errorf("COMMIT reply lost (--debug-lose-commit-every): %w", io.ErrUnexpectedEOF)

// AsyncSpec describes a suite's async write path for AsyncWorkload.
type AsyncSpec[K comparable, T any] struct {
	// Records returns what request i enqueues (one or more records).
	Records func(i int64) []T
	// Key is the record's slot; Merge folds a newer record for a slot into the pending one;
	// Compare orders slots in a compacted batch; Worker (optional) picks the queue worker
	// that owns a slot (counters.Slots.Worker deals a hot row's slots out to different
	// workers); Spread deals each request's records to the next worker instead, for writes
	// whose order does not matter (queue.Options.Spread: the in-memory queue).
	Key     func(T) K
	Worker  func(key K, workers int) int
	Spread  bool
	Merge   func(pending *T, newer T)
	Compare func(a, b K) int
	// Writer writes a batch in the backend's transaction: compacted (one statement per table)
	// or not (every record applied on its own, in order).
	Writer func(compact bool) TxWriter[T]
	// Codec stores a record in a Redis stream entry and reads it back (possibly in another
	// process) for --queue-backend redis. Nil means JSON (queue.JSONCodec, no code per record
	// type): T's fields must then be exported, which the suite's tests check by running on
	// Redis. Write a Codec only where a benchmark shows it pays. Decode must accept every
	// record Encode produced; an entry it refuses ends in the dead-letter stream.
	Codec Codec[T]
}

// AsyncWorkload builds the async queue for r.Mode (compaction when the mode compacts) over the
// backend the flags choose, and an op that enqueues request i's records and returns. Drain
// closes the queue, which writes everything it accepted (bounded by --drain-timeout).
func AsyncWorkload[K comparable, T any](ctx context.Context, r *Run, spec AsyncSpec[K, T]) (*Workload, error) {
	s, err := asyncSpec(r, spec)
	if err != nil {
		return nil, err
	}
	wl, err := asyncrun.Open(ctx, r.env, s)
	if err != nil {
		return nil, err
	}
	return &Workload{Op: wl.Op, Drain: wl.Drain, Close: wl.Close, Faults: wl.Faults}, nil
}

// asyncSpec is spec for the queue of r.Mode.
func asyncSpec[K comparable, T any](r *Run, spec AsyncSpec[K, T]) (asyncrun.Spec[K, T], error) {
	if !r.mode.Async() {
		return asyncrun.Spec[K, T]{}, fmt.Errorf("the %s mode does not go through the queue", r.mode)
	}
	compact := r.mode.Compacts()
	return asyncrun.Spec[K, T]{Records: spec.Records, Writer: spec.Writer(compact),
		Keys:  queue.Options[K, T]{Key: spec.Key, Worker: spec.Worker, Spread: spec.Spread, Merge: spec.Merge, Compare: spec.Compare},
		Codec: spec.Codec, Compact: compact}, nil
}

// Queue is a run's async queue that the suite's own background work enqueues into (OpenQueue),
// where AsyncWorkload's requests enqueue their own records: a job queue's workers hand it the
// completion of each job they ran. The engine reports on it, and its faults strike it, as
// AsyncWorkload's.
type Queue[T any] struct{ q *asyncrun.TypedQueue[T] }

// OpenQueue builds the async queue for r.Mode (compaction when the mode compacts) over the
// backend the flags choose, as AsyncWorkload does; spec.Records is not used. The suite
// enqueues into it from its own work, drains it in its Workload's Drain once that work is
// done, closes it in the Workload's Close and hands its Faults on in the Workload's. A split
// run (--role producer or consumer) is not for it: a suite that opens one refuses
// Config.SplitRun.
func OpenQueue[K comparable, T any](ctx context.Context, r *Run, spec AsyncSpec[K, T]) (*Queue[T], error) {
	s, err := asyncSpec(r, spec)
	if err != nil {
		return nil, err
	}
	q, err := asyncrun.OpenQueue(ctx, r.env, s)
	if err != nil {
		return nil, err
	}
	return &Queue[T]{q}, nil
}

// ErrQueueDropped is what Enqueue returns when the full queue dropped the records
// (--queue-full drop).
var ErrQueueDropped = asyncrun.ErrDropped

// Enqueue hands recs to the queue as one unit and returns once it accepted them (or, when it
// is full, once --queue-full had its way: waited, written them inline, or dropped them:
// ErrQueueDropped). An error that load classes as an unknown outcome means the records may
// or may not have been queued.
func (q *Queue[T]) Enqueue(ctx context.Context, recs ...T) error {
	out, err := q.q.Enqueue(ctx, recs)
	if err != nil {
		return err
	}
	if out == queue.Dropped {
		return ErrQueueDropped
	}
	return nil
}

// Drain closes the queue; it returns once everything it accepted is written (or ctx ends).
func (q *Queue[T]) Drain(ctx context.Context) error { return q.q.Drain(ctx) }

// Close releases what the queue holds (after Drain, at once).
func (q *Queue[T]) Close() error { return q.q.Close() }

// Faults are the fault hooks the queue takes (kill-flusher, kill-consumer), for the
// Workload's Faults.
func (q *Queue[T]) Faults() map[string]FaultHook { return q.q.Faults() }

// TxWriter writes a batch of records inside the queue's transaction and returns the number of
// statements it sent (queue.TxWriter).
type TxWriter[T any] = queue.TxWriter[T]

// Codec stores a record in a Redis stream entry and reads it back (queue.Codec).
type Codec[T any] = queue.Codec[T]

// DefaultQueueCapacity is --queue-capacity's default, in records: a suite whose requests
// enqueue several records sizes its own default from it (Info.Defaults).
const DefaultQueueCapacity = queue.DefaultCapacity
