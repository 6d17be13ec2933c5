package backend

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runenv"
)

// NameMemory and NameRedis are the backends' names (--queue-backend, the report's).
const (
	NameMemory = testkit.BackendMemory
	NameRedis  = testkit.BackendRedis
)

// Memory is the backend of a run whose queue lives in this process (package queue): its
// workers write batches through a pool of their own; the kill-flusher fault and the hidden
// --debug-slow-flush-pct act on their flushes.
type Memory struct {
	Opened
	q       *queue.Queue[any, any]
	compact bool
	policy  queue.FullPolicy
}

// memoryQueue is the Memory backend's queue as asyncrun sees it.
type memoryQueue struct {
	q         *queue.Queue[any, any]
	flushPool *pgxpool.Pool
	killer    *flushKiller
}

func (m *Memory) OpenQueue(ctx context.Context, env *runenv.Env, spec runenv.Spec) (runenv.OpenedQueue, error) {
	if m.q != nil {
		return nil, errors.New("the run's queue is open already")
	}
	flushPool, err := FlushPool(ctx, env)
	if err != nil {
		return nil, err
	}
	killer := &flushKiller{TxWriter: spec.Writer, target: env.Target}                        // --fault kill-flusher (killflusher.go)
	flusher := slowFlushes(queue.PgFlusher(flushPool, killer), env.Config.DebugSlowFlushPct) // --debug-slow-flush-pct (slowflush.go)
	o := Options(env, spec)
	o.Pipeline = true // a worker writes its next batch while the previous one commits
	q, err := queue.New(flusher, o)
	if err != nil {
		flushPool.Close()
		return nil, err
	}
	m.q, m.compact, m.policy = q, spec.Compact, FullPolicy(env)
	m.Open(q, flushPool)
	return &memoryQueue{q: q, flushPool: flushPool, killer: killer}, nil
}

func (q *memoryQueue) EnqueueAll(ctx context.Context, recs []any) (queue.Outcome, error) {
	return q.q.EnqueueAll(ctx, recs)
}

func (q *memoryQueue) Offset() int64                   { return 0 }
func (q *memoryQueue) Drain(ctx context.Context) error { return q.q.Close(ctx) }

func (q *memoryQueue) Close() error {
	// The queue's Close is idempotent; after a drain it returns at once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = q.q.Close(ctx)
	q.flushPool.Close()
	return nil
}

func (q *memoryQueue) Faults() map[string]faults.Hook {
	return map[string]faults.Hook{faults.KillFlusher: q.killer.arm}
}

func (m *Memory) Figures() Figures {
	if m.q == nil {
		return nil
	}
	return m
}

func (m *Memory) Stream() *results.Stream { return nil }

func (m *Memory) Report() *results.Queue {
	out := Report(NameMemory, m.compact, m.policy, m.q.Metrics(), m.q.PersistLag(), nil)
	out.FlushTime = flushTime(m.q.FlushTimes(), m.q.FlushDurations())
	return out
}
