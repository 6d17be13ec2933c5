package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
)

// warmPools opens, before the run's measured window and its database figures begin, the
// connections the run will use: the load's pool up to the connections its workers can hold at
// once (none in a consumer process, which runs no load), and the queue workers' pool whole. A
// service's pools are warm; a connection's set-up (a server process forked, authenticated, its
// catalogs read) is not the write path's cost, and pgbench leaves it out of its rate too
// ("without initial connection time"). Opened inside the window, it would weigh on the first
// requests and on a short run's rate, by more on a busier machine.
func (e *engine) warmPools(ctx context.Context, r *run) error {
	if sr := r.Backend.StreamOf(); sr == nil || sr.Role != redisq.RoleConsumer {
		if err := warm(ctx, r.Pool, min(int(r.Pool.Config().MaxConns), r.concurrency)); err != nil {
			return fmt.Errorf("opening the load's connections: %w", err)
		}
	}
	if q := r.Backend; q != nil && q.FlushPool != nil {
		if err := warm(ctx, q.FlushPool, int(q.FlushPool.Config().MaxConns)); err != nil {
			return fmt.Errorf("opening the queue workers' connections: %w", err)
		}
	}
	return nil
}

// warm has pool hold n connections at once (opened side by side), then gives them back idle.
func warm(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { conns[i], errs[i] = pool.Acquire(ctx) })
	}
	wg.Wait()
	var first error
	for i, c := range conns {
		if c != nil {
			c.Release()
		} else if first == nil {
			first = errs[i]
		}
	}
	return first
}
