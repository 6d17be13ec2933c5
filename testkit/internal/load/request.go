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
