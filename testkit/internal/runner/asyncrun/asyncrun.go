// Package asyncrun is a suite's typed side of the run's async queue: it erases a suite's
// record and key types into the Spec the run's backend opens a queue from (runenv.QueueOpener:
// the in-process queue or a Redis stream, chosen by the engine), and gives the opened queue
// back typed — the op that enqueues a request's records as one unit under --max-tries, or a
// Queue a suite's own background work enqueues into. It knows nothing of suites, backends or
// Redis: testkit.AsyncWorkload hands it the suite's records, keys and writer.
package asyncrun

import (
	"context"
	"errors"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Spec is a suite's async write path for one run (testkit.AsyncSpec with the run's
// compaction chosen): its records, the queue options it sets (Key, Worker, Spread, Merge,
// Compare; the flags set the rest), the batch writer and the Redis codec (nil:
// queue.DefaultCodec).
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

// TypedQueue is the run's opened queue, typed, as code of the run's own enqueues into it: the
// requests' op (Open), or a suite's background work (testkit.OpenQueue).
type TypedQueue[T any] struct{ runenv.OpenedQueue }

// Open opens the run's queue for spec on env's backend and returns the op that enqueues
// request i's records (spec.Records).
func Open[K comparable, T any](ctx context.Context, env *runenv.Env, spec Spec[K, T]) (*Workload, error) {
	q, err := OpenQueue(ctx, env, spec)
	if err != nil {
		return nil, err
	}
	offset := q.Offset()
	return &Workload{
		Op: func(ctx context.Context, req *load.Request) error {
			return enqueueAll(ctx, req, spec.Records(offset+req.Index), q.Enqueue)
		},
		Drain: q.Drain, Close: q.Close, Faults: q.Faults(),
	}, nil
}

// OpenQueue opens the run's queue for spec on env's backend (spec.Records is not used).
func OpenQueue[K comparable, T any](ctx context.Context, env *runenv.Env, spec Spec[K, T]) (*TypedQueue[T], error) {
	q, err := env.Opener.OpenQueue(ctx, env, erase(spec))
	if err != nil {
		return nil, err
	}
	return &TypedQueue[T]{q}, nil
}

// Enqueue hands recs to the queue as one unit (runenv.OpenedQueue.EnqueueAll): as they are
// where the queue takes them so (the in-process queue's), else each in an any.
func (q *TypedQueue[T]) Enqueue(ctx context.Context, recs []T) (queue.Outcome, error) {
	if te, ok := q.OpenedQueue.(runenv.TypedEnqueuer[T]); ok {
		return te.EnqueueTyped(ctx, recs)
	}
	boxed := make([]any, len(recs))
	for i, r := range recs {
		boxed[i] = r
	}
	return q.EnqueueAll(ctx, boxed)
}

// erase is spec with its record and key types erased, for a backend that stores records
// itself (a Redis stream), and with its typed opener for the queue in this process
// (backend.NewInProcess), whose records stay T's. A record in an any is a T, so
// a merge folds into a copy (the queue keeps a batch's source records apart from its compacted
// ones, to write them one by one when the batch fails), as the typed queue's would.
func erase[K comparable, T any](spec Spec[K, T]) runenv.Spec {
	k := spec.Keys
	s := runenv.Spec{Spread: k.Spread, Compact: spec.Compact, Writer: erasedWriter[T]{spec.Writer},
		InProcess: func(ctx context.Context, env *runenv.Env) (runenv.OpenedQueue, error) {
			return backend.NewInProcess(ctx, env, k, spec.Writer, spec.Compact)
		}}
	if k.Key != nil {
		s.Key = func(rec any) any { return k.Key(rec.(T)) }
	}
	if k.Worker != nil {
		s.Worker = func(key any, workers int) int { return k.Worker(key.(K), workers) }
	}
	if k.Merge != nil {
		s.Merge = func(pending *any, newer any) {
			p := (*pending).(T)
			k.Merge(&p, newer.(T))
			*pending = p
		}
	}
	if k.Compare != nil {
		s.Compare = func(a, b any) int { return k.Compare(a.(K), b.(K)) }
	}
	codec := spec.Codec
	if codec == nil {
		codec, s.CodecErr = queue.DefaultCodec[T]()
	}
	if codec != nil {
		s.Codec = erasedCodec[T]{codec}
	}
	return s
}

// erasedWriter is a suite's batch writer over records in anys.
type erasedWriter[T any] struct{ w queue.TxWriter[T] }

func (e erasedWriter[T]) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []any) (int, error) {
	typed := make([]T, len(recs))
	for i, r := range recs {
		typed[i] = r.(T)
	}
	return e.w.WriteBatch(ctx, tx, typed)
}

// erasedCodec is a suite's Redis codec over records in anys.
type erasedCodec[T any] struct{ c queue.Codec[T] }

func (e erasedCodec[T]) Encode(rec any) ([]byte, error) { return e.c.Encode(rec.(T)) }

func (e erasedCodec[T]) Decode(b []byte) (any, error) {
	rec, err := e.c.Decode(b)
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// ErrDropped fails a request whose record the full queue dropped (--queue-full drop); it is
// counted under the error class "dropped".
var ErrDropped error = droppedError{}

type droppedError struct{}

func (droppedError) Error() string      { return "queue full: record dropped" }
func (droppedError) ErrorClass() string { return "dropped" }

// enqueueAll enqueues a request's records as one unit (all accepted, or none), tried again as
// a whole under --max-tries (load.Request.Try) when the enqueue fails with a retryable class:
// in practice an inline write under --queue-full sync, or the Redis producer's call. So a
// failed request leaves none of its records queued. Records are idempotent by their request
// in every suite's writer, so a retry after an unknown outcome counts nothing twice. A request
// the full queue dropped fails (ErrDropped, not retried).
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
