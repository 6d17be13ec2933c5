package sqldb

import (
	"context"
	"sync"
)

// WarmAtOnce is the most connections Warm opens side by side. A thousand connects at once
// overflow a server's listen queue (MariaDB's back_log is 80 + max_connections / 5 unless set):
// the kernel resets the ones it drops, and go-sql-driver reports "invalid connection" — 30 to
// 580 of 1,000 in a burst here. A pool that is filled before a run gains nothing from more at
// once on a machine of a few cores: each connection costs the server a thread or a process.
const WarmAtOnce = 32

// Warm has pool hold n connections at once, opened WarmAtOnce at a time, then gives them back
// idle: a service's pool is warm, and opening a connection (a server process forked, a
// thread started, a session authenticated) is not the write path's cost. The error is the
// first connection's that could not be opened.
func Warm(ctx context.Context, pool Pool, n int) error {
	conns := make([]PoolConn, n)
	errs := make([]error, n)
	slots := make(chan struct{}, WarmAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			conns[i], errs[i] = pool.Acquire(ctx)
		})
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
