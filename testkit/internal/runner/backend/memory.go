package backend

import (
	"context"
	"errors"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// NameMemory and NameRedis are the backends' names (--queue-backend, the report's; the same
// as testkit.BackendMemory and testkit.BackendRedis).
const (
	NameMemory = "memory"
	NameRedis  = "redis"
)

// Memory is the backend of a run whose queue lives in this process (package queue): its
// workers write batches through a pool of their own; the kill-flusher fault and the hidden
// --debug-slow-flush-pct act on their flushes. The queue keeps the suite's own record type
// (NewInProcess): nothing is boxed on the request path or in a batch.
type Memory struct {
	Opened
	q inProcessQueue
}

// inProcessQueue is a queue NewInProcess opened, whatever its record type.
type inProcessQueue interface {
	runenv.OpenedQueue
	openedQueue
	report() *results.Queue
	workersPool() sqldb.Pool
}

func (m *Memory) OpenQueue(ctx context.Context, env *runenv.Env, spec runenv.Spec) (runenv.OpenedQueue, error) {
	if m.q != nil {
		return nil, errors.New("the run's queue is open already")
	}
	if spec.InProcess == nil {
		return nil, errors.New("the in-process queue needs the suite's typed spec (runenv.Spec.InProcess)")
	}
	q, err := spec.InProcess(ctx, env)
	if err != nil {
		return nil, err
	}
	iq, ok := q.(inProcessQueue)
	if !ok {
		_ = q.Close()
		return nil, errors.New("runenv.Spec.InProcess opened no queue of NewInProcess's")
	}
	m.q = iq
	m.Open(iq, iq.workersPool())
	return q, nil
}

func (m *Memory) Figures() Figures {
	if m.q == nil {
		return nil
	}
	return m
}

func (m *Memory) Stream() *results.Stream { return nil }
func (m *Memory) Report() *results.Queue  { return m.q.report() }

// NewInProcess opens run env's queue in this process for a suite's typed write path: what
// runenv.Spec.InProcess calls (package asyncrun makes it), with keys the suite's key options.
func NewInProcess[K comparable, T any](ctx context.Context, env *runenv.Env, keys queue.Options[K, T], writer queue.TxWriter[T], compact bool) (runenv.OpenedQueue, error) {
	flushPool, err := FlushPool(ctx, env)
	if err != nil {
		return nil, err
	}
	killer := &flushKiller[T]{TxWriter: writer, target: env.Target}                                             // --fault kill-flusher (killflusher.go)
	flusher := slowFlushes(queue.TxFlusher(flushPool, queue.TxWriter[T](killer)), env.Config.DebugSlowFlushPct) // --debug-slow-flush-pct (slowflush.go)
	o := Options(env, keys, writer, compact)
	o.Pipeline = true // a worker writes its next batch while the previous one commits
	q, err := queue.New(flusher, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	return &memQueue[K, T]{Queue: q, flushPool: flushPool, killer: killer, compact: compact, policy: o.FullPolicy}, nil
}

// memQueue is an in-process queue of T's, as asyncrun and the Memory backend see it.
type memQueue[K comparable, T any] struct {
	*queue.Queue[K, T]
	flushPool sqldb.Pool
	killer    *flushKiller[T]
	compact   bool
	policy    queue.FullPolicy
}

// EnqueueTyped takes the suite's records as they are (runenv.TypedEnqueuer).
func (q *memQueue[K, T]) EnqueueTyped(ctx context.Context, recs []T) (queue.Outcome, error) {
	return q.Queue.EnqueueAll(ctx, recs)
}

// EnqueueAll takes records in anys (each a T).
func (q *memQueue[K, T]) EnqueueAll(ctx context.Context, recs []any) (queue.Outcome, error) {
	typed := make([]T, len(recs))
	for i, r := range recs {
		typed[i] = r.(T)
	}
	return q.Queue.EnqueueAll(ctx, typed)
}

func (q *memQueue[K, T]) Offset() int64                   { return 0 }
func (q *memQueue[K, T]) Drain(ctx context.Context) error { return q.Queue.Close(ctx) }
func (q *memQueue[K, T]) workersPool() sqldb.Pool         { return q.flushPool }

func (q *memQueue[K, T]) Close() error {
	// The queue's Close is idempotent; after a drain it returns at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = q.Queue.Close(ctx)
	q.flushPool.Close()
	return nil
}

func (q *memQueue[K, T]) Faults() map[string]faults.Hook {
	return map[string]faults.Hook{faults.KillFlusher: q.killer.arm}
}

func (q *memQueue[K, T]) report() *results.Queue {
	out := Report(NameMemory, q.compact, q.policy, q.Metrics(), q.PersistLag(), nil)
	out.FlushTime = flushTime(q.FlushTimes(), q.FlushDurations())
	return out
}
