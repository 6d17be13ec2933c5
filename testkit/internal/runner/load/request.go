package load

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Request is the request an Op is running. The engine reuses one per worker, so an Op must
// not keep it, nor call its methods from another goroutine, after returning.
type Request struct {
	// Index is the 0-based request index: unique and dense over the run.
	Index int64
	// Worker is the index of the worker running the request, 0 ≤ Worker < Concurrency.
	Worker int

	shard       int
	acquireWait time.Duration
	acquired    bool
	// cold is set when the request ran a statement on a session's first use
	// (NoteColdSession); opCtx carries it.
	cold atomic.Bool

	// Set by Try: the run's policy and the worker's tallies; this request's retries, whether
	// a try's outcome was unknown, and whether it ran out of tries.
	retry      *Retry
	stats      *retryStats
	retries    int
	unknown    bool
	outOfTries bool

	// The request timeout (Config.RequestTimeout; 0: none), the run's context (with the
	// worker's cold mark in it) and start, and the try the watchdog times (timeout.go).
	timeout time.Duration
	opCtx   context.Context
	start   time.Time
	attempt attempt
}

// beginTry starts timing a try under the request timeout and returns the context it runs
// under: ctx itself when the run has no timeout.
func (r *Request) beginTry(ctx context.Context) context.Context {
	if r.timeout == 0 {
		return ctx
	}
	ctx = r.attempt.context(r.opCtx)
	r.attempt.begin(time.Since(r.start))
	return ctx
}

// endTry ends the timing of a try and returns err as a request timeout's when the watchdog
// cancelled the try and it failed (a try that succeeded as it was cancelled succeeded).
func (r *Request) endTry(err error) error {
	if r.timeout == 0 || !r.attempt.end() || err == nil {
		return err
	}
	return &timeoutError{after: r.timeout, err: Unknown(err)}
}

// Acquire takes a connection from pool and records the time spent waiting for it (also when
// the acquire fails) in the acquire-wait histogram, apart from the operation's latency, so a
// reader can tell queueing for a connection from time in the database.
func (r *Request) Acquire(ctx context.Context, pool sqldb.Pool) (sqldb.PoolConn, error) {
	began := time.Now()
	conn, err := pool.Acquire(ctx)
	r.RecordAcquireWait(time.Since(began))
	return conn, err
}

// RecordAcquireWait records d as time spent waiting for a connection, for an Op that
// acquires by other means. Several waits within one request add up: the histogram holds
// one value per request, its total wait.
func (r *Request) RecordAcquireWait(d time.Duration) {
	r.acquireWait += d
	r.acquired = true
}

// coldKey is the context key of a request's cold mark (NoteColdSession).
type coldKey struct{}

// NoteColdSession marks the request whose context ctx is (an Op's, or one derived from it) as
// one that ran a statement on a session's first use: a connection just opened, whose first
// statement pays for what a used one has cached (the server's catalog caches, the driver's
// prepared statements). The request path's tracer calls it (testkit/internal/measure/stmttime); the
// run counts such requests and times them apart (Result.ColdSessions, ColdLatency). Outside a
// request it does nothing.
func NoteColdSession(ctx context.Context) {
	if mark, ok := ctx.Value(coldKey{}).(*atomic.Bool); ok {
		mark.Store(true)
	}
}
