package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// A pool with a minimum and an idle time keeps its minimum open without being asked, and
// closes the connections idle past the idle time down to it within a run (its health check
// runs often enough); with neither, an idle connection stays open.
func TestPoolMinimumAndIdleTime(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 4, MinConns: 2, MaxConnIdle: 150 * time.Millisecond, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	waitFor(t, "the minimum of 2 opened", func() bool { return pool.Stat().TotalConns() >= 2 })
	conns := make([]*pgxpool.Conn, 4)
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		c.Release()
	}
	waitFor(t, "the idle connections closed down to the minimum", func() bool {
		s := pool.Stat()
		return s.TotalConns() == 2 && s.MaxIdleDestroyCount() >= 2
	})

	plain, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 1, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	c, err := plain.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	time.Sleep(300 * time.Millisecond) // twice the other pool's idle time, which this one has not
	if s := plain.Stat(); s.TotalConns() != 1 || s.MaxIdleDestroyCount() != 0 || s.MaxLifetimeDestroyCount() != 0 {
		t.Errorf("a pool without an idle time or lifetime closed a connection: %d open, %d idle closes, %d lifetime closes",
			s.TotalConns(), s.MaxIdleDestroyCount(), s.MaxLifetimeDestroyCount())
	}
}

// waitFor polls cond until it holds, failing the test after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 15 s", what)
		}
	}
}
