// Package backend owns a run's async queue as the engine drives it: the Backend interface the
// in-process queue (Memory, here) and the Redis stream (package redisrun) each implement, in
// this process's role — opening the queue for a suite's write path, warming its connections,
// running this process's part of the load, what the run verifies, the queue's figures, its
// fault hooks and the servers it needs — and Inline, the backend of a mode without a queue.
// The engine picks a Backend per run and never asks which one it has; what only one backend
// can do (the Redis faults) is an interface of its own that the engine finds by type
// assertion (faults.RedisTarget).
package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Backend is one run's async queue and this process's part in the run.
type Backend interface {
	// OpenQueue opens the run's queue for a suite's write path (through package asyncrun).
	runenv.QueueOpener
	// Warm opens, before the measured window, the connections the run will use: n of the
	// load's pool, where this process runs the load, and the queue workers' pool whole.
	Warm(ctx context.Context, loadPool sqldb.Pool, n int) error
	// RunLoad runs this process's part of the load with run; pool is the load's.
	RunLoad(ctx context.Context, pool sqldb.Pool, run func() (*load.Result, error)) (*load.Result, error)
	// Figures are the opened queue's figures (nil when the run opened none).
	Figures() Figures
	// Flushers is the pause gate of the queue's workers (ok false without a queue).
	Flushers() (pause, resume func(), ok bool)
	// Release closes the queue workers' idle connections, so that their backends exit and
	// flush their statistics before the run's cost is read.
	Release()
	// Verification is what this process verifies the run with: res, or the run-wide outcomes
	// (which may change env.Requests); its checks of the queue's own go to check. OwnPart
	// says the suite's checks are not this process's to run.
	Verification(ctx context.Context, env *runenv.Env, res *load.Result, check Check) (_ *load.Result, ownPart bool, _ error)
	// Server is a server besides PostgreSQL the run needs, and how to reach it (name "" and
	// nil: none).
	Server() (name string, ping func(context.Context) error)
	// AbortOn makes what waits on that server fail at once when hard ends; stop ends the watch.
	AbortOn(hard context.Context) (stop func())
}

// Check records one check of the queue's: want compared with got.
type Check func(name string, want, got int64)

// Figures are an opened queue's figures, read while the run goes on and once it is over.
type Figures interface {
	Metrics() queue.Metrics
	PersistLag() *hist.Histogram
	// Stream is the Redis stream's own counters (nil for the in-process queue).
	Stream() *results.Stream
	// Report is the run's queue section.
	Report() *results.Queue
}

// Inline is the backend of a run without a queue (sync, the outbox, a suite's own modes): the
// load runs in this process, there is nothing to open or verify. Memory and Redis's
// backend embed it for what they do the same.
type Inline struct{}

func (Inline) OpenQueue(context.Context, *runenv.Env, runenv.Spec) (runenv.OpenedQueue, error) {
	return nil, errors.New("this mode does not go through the queue")
}

func (Inline) Warm(ctx context.Context, loadPool sqldb.Pool, n int) error {
	return warmLoad(ctx, loadPool, n)
}

func (Inline) RunLoad(_ context.Context, _ sqldb.Pool, run func() (*load.Result, error)) (*load.Result, error) {
	return run()
}

func (Inline) Figures() Figures                              { return nil }
func (Inline) Flushers() (pause, resume func(), ok bool)     { return nil, nil, false }
func (Inline) Release()                                      {}
func (Inline) Server() (string, func(context.Context) error) { return "", nil }
func (Inline) AbortOn(context.Context) func()                { return func() {} }

func (Inline) Verification(_ context.Context, _ *runenv.Env, res *load.Result, _ Check) (*load.Result, bool, error) {
	return res, false, nil
}

// Opened is what Memory and Redis's backend do alike with the queue they opened: its pause
// gate, its figures and its workers' pool. Its zero value is a run that opened none.
type Opened struct {
	Inline
	q         openedQueue
	flushPool sqldb.Pool
}

// openedQueue is what both backends' queues have (queue.Queue's and redisq.Queue's).
type openedQueue interface {
	Pause()
	Resume()
	Metrics() queue.Metrics
	PersistLag() *hist.Histogram
}

// Open records q and its workers' pool as the run's.
func (o *Opened) Open(q openedQueue, flushPool sqldb.Pool) { o.q, o.flushPool = q, flushPool }

// WorkersPool is the opened queue's workers' pool (nil: none opened).
func (o *Opened) WorkersPool() sqldb.Pool { return o.flushPool }

// Warm opens n of the load's connections and the queue workers' pool whole.
func (o *Opened) Warm(ctx context.Context, loadPool sqldb.Pool, n int) error {
	if err := warmLoad(ctx, loadPool, n); err != nil {
		return err
	}
	return o.WarmWorkers(ctx)
}

// WarmWorkers opens the queue workers' pool whole (none opened yet: nothing).
func (o *Opened) WarmWorkers(ctx context.Context) error {
	if o.flushPool == nil {
		return nil
	}
	if err := sqldb.Warm(ctx, o.flushPool, o.flushPool.MaxConns()); err != nil {
		return fmt.Errorf("opening the queue workers' connections: %w", err)
	}
	return nil
}

func (o *Opened) Flushers() (pause, resume func(), ok bool) {
	if o.q == nil {
		return nil, nil, false
	}
	return o.q.Pause, o.q.Resume, true
}

func (o *Opened) Release() {
	if p, ok := sqldb.AsPgx(o.flushPool); ok { // PostgreSQL flushes a backend's statistics as it exits
		p.(*pgxpool.Pool).Reset()
	}
}

func (o *Opened) Metrics() queue.Metrics      { return o.q.Metrics() }
func (o *Opened) PersistLag() *hist.Histogram { return o.q.PersistLag() }

// Options are the queue options every backend reads the same way, from the run's flags:
// records a caller writes itself (PolicySync, queue full) go through the request path's pool.
// keys (Key, Worker, Spread, Merge, Compare) are the suite's.
func Options[K comparable, T any](env *runenv.Env, keys queue.Options[K, T], writer queue.TxWriter[T], compact bool) queue.Options[K, T] {
	c := &env.Config
	retries := c.QueueRetries
	if retries == 0 { // --queue-retries 0 is none; queue.Options.MaxRetries 0 is the default
		retries = -1
	}
	o := keys
	o.Capacity, o.BatchSize, o.Workers = c.QueueCapacity, c.FlushBatchSize, c.QueueWorkers
	o.FlushInterval, o.FullPolicy = time.Duration(c.FlushIntervalMs)*time.Millisecond, FullPolicy(env)
	o.Compaction, o.Inline, o.MaxRetries = compact, queue.TxFlusher(env.Pool, writer), retries
	o.RetryBackoff = time.Duration(c.QueueRetryBackoffMs) * time.Millisecond
	o.FlushTimeout = results.Duration(c.RequestTimeoutMs) // a flush is bounded as a request's try is
	return o
}

// ErasedKeys are the erased spec's key options.
func ErasedKeys(spec runenv.Spec) queue.Options[any, any] {
	return queue.Options[any, any]{Key: spec.Key, Worker: spec.Worker, Spread: spec.Spread, Merge: spec.Merge, Compare: spec.Compare}
}

// FullPolicy is --queue-full (validated by the plan).
func FullPolicy(env *runenv.Env) queue.FullPolicy {
	p, _ := queue.ParseFullPolicy(env.Config.QueueFull)
	return p
}

// FlushPool opens the queue workers' (or consumers') own pool: two connections per worker
// (a pipelined worker's batch committing and its next one being written) and two for the
// one-by-one fallback, so flushing never waits behind the request path for a connection.
// Requests that write inline (--queue-full sync) use the load's pool, as a gateway's handlers
// would.
func FlushPool(ctx context.Context, env *runenv.Env) (sqldb.Pool, error) {
	pool, err := env.Target.NewPool(ctx, database.PoolOptions{
		MaxConns: int32(2*env.Config.QueueWorkers + 2),
		AppName:  "hotspotkit-flush",
		Settings: env.SessionSettings,
	})
	if err != nil {
		return nil, err
	}
	return pool.SQL(), nil
}

// warmLoad opens n of the load's connections. A service's pools are warm; a connection's
// set-up (a server process forked, authenticated, its catalogs read) is not the write path's
// cost, and pgbench leaves it out of its rate too ("without initial connection time").
func warmLoad(ctx context.Context, pool sqldb.Pool, n int) error {
	if most := pool.MaxConns(); most > 0 {
		n = min(most, n)
	}
	if err := sqldb.Warm(ctx, pool, n); err != nil {
		return fmt.Errorf("opening the load's connections: %w", err)
	}
	return nil
}

// Report is the report's queue section from what a queue counted. The queue owns its metrics
// and knows nothing of reports; the conversions keep the two field for field the same (they
// do not compile otherwise).
func Report(name string, compact bool, policy queue.FullPolicy, m queue.Metrics, lag *hist.Histogram, stream *results.Stream) *results.Queue {
	out := &results.Queue{
		Backend: name, Compaction: compact, FullPolicy: policy.String(),
		QueueMetrics: results.QueueMetrics(m),
		PersistLagMs: results.Latency(lag.Summary()), Stream: stream,
	}
	if enc, err := lag.Encode(); err == nil {
		out.PersistLagHistogram = enc
	}
	out.WritesPerUpdate = out.QueueMetrics.WritesPerUpdate()
	return out
}
