// Package asyncrun builds the async queue an async mode's workload writes through, from the
// run's flags (runenv.Env): the queue in this process (package queue) or a Redis stream in
// this process's role (package queue/redisq, redis.go), the op that enqueues a request's
// records as one unit under --max-tries, and the kill-flusher and kill-consumer faults. It
// registers the queue with the run (Env.Backend) for the engine to report on. It knows
// nothing of suites: testkit.AsyncWorkload hands it the suite's records, keys and writer.
package asyncrun

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runenv"
)

// Spec is a suite's async write path for one run (testkit.AsyncSpec with the run's
// compaction chosen): its records, the queue options it sets (Key, Worker, Spread, Merge, Compare;
// the flags set the rest), the batch writer and the Redis codec (nil: queue.DefaultCodec).
type Spec[K comparable, T any] struct {
	Records func(i int64) []T
	Keys    queue.Options[K, T]
	Writer  queue.TxWriter[T]
	Codec   queue.Codec[T]
	Compact bool
}

// Workload is the run's side of the queue: the op that enqueues a request's records, the drain
// (closing the queue writes everything it accepted), the cleanup and the faults the queue
// takes.
type Workload struct {
	Op     load.Op
	Drain  func(ctx context.Context) error
	Close  func() error
	Faults map[string]faults.Hook
}

// Queue is the run's queue as code of the run's own enqueues into it: the requests' op
// (Open), or a suite's background work (testkit.OpenQueue).
type Queue[T any] struct {
	// Enqueue hands a group of records to the queue as one unit (queue.Backend.EnqueueAll); an
	// enqueue to Redis whose reply was lost fails with an error load classes as an unknown
	// outcome.
	Enqueue func(ctx context.Context, recs []T) (queue.Outcome, error)
	// Offset is the index of this process's first request: a producer's in a split run, else 0.
	Offset int64
	// Drain closes the queue, which writes everything it accepted; Close releases what it
	// holds (idempotent, after Drain at once).
	Drain  func(ctx context.Context) error
	Close  func() error
	Faults map[string]faults.Hook
}

// Open builds the queue the flags choose for env's run, registers it as env.Backend, and
// returns the op that enqueues request i's records (spec.Records).
func Open[K comparable, T any](ctx context.Context, env *runenv.Env, spec Spec[K, T]) (*Workload, error) {
	q, err := OpenQueue(ctx, env, spec)
	if err != nil {
		return nil, err
	}
	return &Workload{
		Op: func(ctx context.Context, req *load.Request) error {
			return enqueueAll(ctx, req, spec.Records(q.Offset+req.Index), q.Enqueue)
		},
		Drain: q.Drain, Close: q.Close, Faults: q.Faults,
	}, nil
}

// OpenQueue builds the queue the flags choose for env's run and registers it as env.Backend
// (spec.Records is not used).
func OpenQueue[K comparable, T any](ctx context.Context, env *runenv.Env, spec Spec[K, T]) (*Queue[T], error) {
	if env.Queue.Backend == redisrun.BackendRedis {
		return openRedis(ctx, env, spec) // redis.go
	}
	flushPool, err := newFlushPool(ctx, env)
	if err != nil {
		return nil, err
	}
	killer := &flushKiller[T]{TxWriter: spec.Writer, target: env.Target}               // --fault kill-flusher (killflusher.go)
	flusher := slowFlushes(queue.PgFlusher(flushPool, killer), env.Queue.SlowFlushPct) // --debug-slow-flush-pct (slowflush.go)
	o := options(env, spec)
	o.Pipeline = true // a worker writes its next batch while the previous one commits
	q, err := queue.New(flusher, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	var backend queue.Backend[T] = q
	env.Backend = &runenv.Backend{
		Name:       redisrun.BackendMemory,
		Compaction: spec.Compact,
		FullPolicy: env.Queue.FullPolicy,
		FlushPool:  flushPool,
		Metrics:    backend.Metrics,
		PersistLag: backend.PersistLag,
		Pause:      backend.Pause,
		Resume:     backend.Resume,

		FlushTimes:     q.FlushTimes,
		FlushDurations: q.FlushDurations,
	}
	return &Queue[T]{
		Enqueue: backend.EnqueueAll,
		Drain:   backend.Close,
		Faults:  map[string]faults.Hook{faults.KillFlusher: killer.arm},
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

// options are the options every queue backend reads the same way, from the run's flags:
// records a caller writes itself (PolicySync, queue full) go through the request path's pool.
func options[K comparable, T any](env *runenv.Env, spec Spec[K, T]) queue.Options[K, T] {
	c, o := env.Queue, spec.Keys
	o.Capacity, o.BatchSize, o.FlushInterval, o.Workers = c.Capacity, c.BatchSize, c.FlushInterval, c.Workers
	o.FullPolicy, o.Compaction, o.Inline = c.FullPolicy, spec.Compact, queue.PgFlusher(env.Pool, spec.Writer)
	o.MaxRetries, o.RetryBackoff, o.FlushTimeout = c.Retries, c.RetryBackoff, c.FlushTimeout
	return o
}

// newFlushPool opens the queue workers' (or consumers') own pool: two connections per worker
// (a pipelined worker's batch committing and its next one being written) and two for the
// one-by-one fallback, so flushing never waits behind the request path for a connection. Requests that write inline (--queue-full sync) use the load's pool, as a
// gateway's handlers would.
func newFlushPool(ctx context.Context, env *runenv.Env) (*pgxpool.Pool, error) {
	return env.Target.NewPool(ctx, database.PoolOptions{
		MaxConns: int32(2*env.Queue.Workers + 2),
		AppName:  "hotspotkit-flush",
		Settings: env.Queue.Settings,
	})
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
