package database_test

import (
	"context"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// TestPoolSeatsAreDistinctAndReused: a pool's open connections hold the seats 0..n-1, one
// each, and a connection that replaces a closed one takes the seat it left (what
// --slot-pick session relies on to keep the sessions evenly over the slots after a fault).
func TestPoolSeatsAreDistinctAndReused(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 4, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conns := make([]*pgxpool.Conn, 4)
	seats := make([]int, 4)
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		seats[i] = database.Seat(conns[i].Conn())
	}
	if sorted := slices.Sorted(slices.Values(seats)); !slices.Equal(sorted, []int{0, 1, 2, 3}) {
		t.Fatalf("seats of 4 open connections: %v, want 0..3 once each", seats)
	}
	// Close the connection on seat 2 under the pool: on release the pool destroys it.
	victim := slices.Index(seats, 2)
	if err := conns[victim].Conn().Close(ctx); err != nil {
		t.Fatal(err)
	}
	conns[victim].Release()
	for deadline := time.Now().Add(10 * time.Second); pool.Stat().TotalConns() > 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the closed connection was not destroyed: %d connections", pool.Stat().TotalConns())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := database.Seat(c.Conn()); got != 2 {
		t.Errorf("the replacement connection took seat %d, want 2 (the one freed)", got)
	}
	c.Release()
	for i, conn := range conns {
		if i != victim {
			conn.Release()
		}
	}
	admin, err := target.Connect(ctx, "hotspotkit-monitor")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if got := database.Seat(admin); got != -1 {
		t.Errorf("a dedicated connection's seat is %d, want -1 (no pool's)", got)
	}
}

// TestPoolPingsOnlyConnectionsLeftIdle: a pool pings a connection idle for over a second
// when it hands it out (pgxpool's rule, each ping a transaction the server counts), and
// Pings counts them; a connection just opened is not pinged, however long it took to open
// (pgxpool counts the set-up as idle time: a pool warmed before a run, on a busy machine,
// pinged every connection, and the run's figures counted the pings as its commits); one used
// and then left idle for over a second is.
func TestPoolPingsOnlyConnectionsLeftIdle(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	var d net.Dialer
	target.Route(func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(1200 * time.Millisecond) // a connection that takes over a second to open
		return d.DialContext(ctx, network, addr)
	})
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 1, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	before := target.Pings()
	acquire := func() {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	acquire()
	if n := target.Pings() - before; n != 0 {
		t.Errorf("a connection just opened (in 1.2 s) was pinged %d times, want none", n)
	}
	acquire() // idle for no time
	time.Sleep(1100 * time.Millisecond)
	acquire() // idle for over a second
	if n := target.Pings() - before; n != 1 {
		t.Errorf("pings after one acquire of a connection left idle for 1.1 s: %d, want 1", n)
	}
}
