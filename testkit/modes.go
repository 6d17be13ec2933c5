package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
)

// TxFunc writes request i inside tx.
type TxFunc func(ctx context.Context, tx pgx.Tx, i int64) error

// SyncTx returns an op that runs fn in one transaction per request on a pooled connection,
// tried again under --max-tries (load.Request.Try) when it fails with a retryable class. The
// wait for the connection is recorded apart from the request's latency. A COMMIT whose
// outcome cannot be known (the connection broke while committing) is reported as such, so the
// run looks the request up afterwards instead of guessing; a retry after it may find the
// request already written, so fn must be idempotent by the request: it applies its changes
// only when the request's own row is new.
func (r *Run) SyncTx(fn TxFunc) load.Op {
	pool := r.Pool
	loseEvery := r.Config.loseCommitEvery
	return func(ctx context.Context, req *load.Request) error {
		lose := loseEvery > 0 && req.Index%loseEvery == 0
		return req.Try(ctx, func(ctx context.Context) error {
			conn, err := req.Acquire(ctx, pool)
			if err != nil {
				return err
			}
			defer conn.Release()
			tx, err := conn.Begin(ctx)
			if err != nil {
				return err
			}
			if err := fn(ctx, tx, req.Index); err != nil {
				queue.Rollback(ctx, tx)
				return err
			}
			if err := tx.Commit(ctx); err != nil {
				if queue.CommitOutcomeUnknown(err) {
					return load.Unknown(err)
				}
				return err
			}
			if lose { // only the first try's reply is lost
				lose = false
				return load.Unknown(errCommitReplyLost)
			}
			return nil
		})
	}
}

// errCommitReplyLost is what --debug-lose-commit-every makes a committed request's first try
// return: the connection broke before the COMMIT's reply arrived (a retryable class).
var errCommitReplyLost = fmt.Errorf("COMMIT reply lost (--debug-lose-commit-every): %w", io.ErrUnexpectedEOF)

func (r *Run) flushInterval() time.Duration {
	return time.Duration(r.Config.FlushIntervalMs) * time.Millisecond
}

// AsyncSpec describes a suite's async write path for AsyncWorkload.
type AsyncSpec[K comparable, T any] struct {
	// Records returns what request i enqueues (one or more records).
	Records func(i int64) []T
	// Key is the record's slot; Merge folds a newer record for a slot into the pending one;
	// Compare orders slots in a compacted batch; Worker (optional) picks the queue worker
	// that owns a slot (queue.Options.Worker; counters.Slots.Worker deals a hot row's slots
	// out to different workers).
	Key     func(T) K
	Worker  func(key K, workers int) int
	Merge   func(pending *T, newer T)
	Compare func(a, b K) int
	// Writer writes a batch in the backend's transaction: compacted (one statement per table)
	// or not (every record applied on its own, in order).
	Writer func(compact bool) queue.TxWriter[T]
	// Codec stores a record in a Redis stream entry and reads it back (possibly in another
	// process) for --queue-backend redis. Nil means queue.DefaultCodec (JSON, no code per
	// record type): T's fields must then be exported, which the suite's tests check by
	// running on Redis. Write a queue.Codec only where a benchmark shows it pays. Decode must
	// accept every record Encode produced; an entry it refuses ends in the dead-letter stream.
	Codec queue.Codec[T]
}

// retries maps --queue-retries (0 = none) onto queue.Options.MaxRetries (0 = default, <0 = none).
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// ErrDropped fails a request whose record the full queue dropped (--queue-full drop); it is
// counted under the error class "dropped".
var ErrDropped error = droppedError{}

type droppedError struct{}

func (droppedError) Error() string      { return "queue full: record dropped" }
func (droppedError) ErrorClass() string { return "dropped" }

// enqueueAll enqueues a request's records as one unit (queue.Backend.EnqueueAll: all
// accepted, or none), tried again as a whole under --max-tries (load.Request.Try) when the
// enqueue fails with a retryable class: in practice an inline write under --queue-full sync,
// or the Redis producer's call. So a failed request leaves none of its records queued. Records
// are idempotent by their request in every suite's writer, so a retry after an unknown
// outcome counts nothing twice. A request the full queue dropped fails (ErrDropped, not
// retried).
func enqueueAll[T any](ctx context.Context, req *load.Request, recs []T, enqueue func(context.Context, []T) (queue.Outcome, error)) error {
	return req.Try(ctx, func(ctx context.Context) error {
		out, err := enqueue(ctx, recs)
		if errors.Is(err, queue.ErrCommitUnknown) { // an inline write lost its COMMIT's reply
			return load.Unknown(err)
		}
		if err != nil {
			return err
		}
		if out == queue.Dropped {
			return ErrDropped
		}
		return nil
	})
}

// AsyncWorkload builds the async queue for r.Mode (compaction when the mode compacts) over the
// backend the flags choose, and an op that enqueues request i's records and returns. Drain
// closes the queue, which writes everything it accepted (bounded by --drain-timeout).
func AsyncWorkload[K comparable, T any](ctx context.Context, r *Run, spec AsyncSpec[K, T]) (*Workload, error) {
	if !r.Mode.Async() {
		return nil, fmt.Errorf("AsyncWorkload: the %s mode does not go through the queue", r.Mode)
	}
	compact := r.Mode.Compacts()
	c := r.Config
	if c.QueueBackend == BackendRedis {
		return redisWorkload(ctx, r, spec, compact) // redisqueue.go
	}
	flushPool, err := r.newFlushPool(ctx)
	if err != nil {
		return nil, err
	}
	writer := spec.Writer(compact)
	killer := &flushKiller[T]{TxWriter: writer, target: r.Target} // --fault kill-flusher (killflusher.go)
	q, err := queue.New(queue.PgFlusher(flushPool, killer), queueOptions(r, spec, writer, compact))
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	var backend queue.Backend[T] = q
	op := func(ctx context.Context, req *load.Request) error {
		return enqueueAll(ctx, req, spec.Records(req.Index), backend.EnqueueAll)
	}
	return &Workload{
		Op: op,
		Queue: &QueueHandle{
			Backend:    "memory",
			Compaction: compact,
			FullPolicy: c.QueueFull,
			flushPool:  flushPool,
			Metrics:    backend.Metrics,
			PersistLag: backend.PersistLag,
			Pause:      backend.Pause,
			Resume:     backend.Resume,
		},
		Drain:  backend.Close,
		Faults: map[string]faults.Hook{faults.KillFlusher: killer.arm},
		Close: func() error {
			// Close is idempotent; after a drain it returns at once.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = backend.Close(ctx)
			flushPool.Close()
			return nil
		},
	}, nil
}

// queueOptions are the options every queue backend reads the same way, from the run's
// configuration: records a caller writes itself (PolicySync, queue full) go through the
// request path's pool.
func queueOptions[K comparable, T any](r *Run, spec AsyncSpec[K, T], writer queue.TxWriter[T], compact bool) queue.Options[K, T] {
	c := r.Config
	return queue.Options[K, T]{
		Key:           spec.Key,
		Worker:        spec.Worker,
		Merge:         spec.Merge,
		Compare:       spec.Compare,
		Capacity:      c.QueueCapacity,
		BatchSize:     c.FlushBatchSize,
		FlushInterval: r.flushInterval(),
		Workers:       c.QueueWorkers,
		FullPolicy:    c.QueueFull,
		Compaction:    compact,
		Inline:        queue.PgFlusher(r.Pool, writer),
		MaxRetries:    retries(c.QueueRetries),
		RetryBackoff:  time.Duration(c.QueueRetryBackoffMs) * time.Millisecond,
	}
}

// newFlushPool opens the queue workers' (or consumers') own pool: one connection per worker
// and two for the one-by-one fallback, so flushing never waits behind the request path for a
// connection. Requests that write inline (--queue-full sync) use the load's pool, as a
// gateway's handlers would.
func (r *Run) newFlushPool(ctx context.Context) (*pgxpool.Pool, error) {
	return r.Target.NewPool(ctx, database.PoolOptions{
		MaxConns: int32(r.Config.QueueWorkers + 2),
		AppName:  "hotspotkit-flush",
		Settings: faults.SessionSettings(r.Config.faults),
	})
}
