package load

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

	// Set by Try: the run's policy and the worker's tallies; this request's retries, whether
	// a try's outcome was unknown, and whether it ran out of tries.
	retry      *Retry
	stats      *retryStats
	retries    int
	unknown    bool
	outOfTries bool

	// The request timeout (Config.RequestTimeout; 0: none), the run's context and start, and
	// the try the watchdog times (timeout.go).
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
func (r *Request) Acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
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
