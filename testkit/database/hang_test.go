package database_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// blackholed is a pool of the service's connections to the test server through a proxy that
// then holds every byte both ways (nothing answered, no RST), and its target.
func blackholed(t *testing.T) (*database.Postgres, func()) {
	t.Helper()
	target := testdb.New(t)
	u, err := url.Parse(target.DSN())
	if err != nil {
		t.Fatal(err)
	}
	p, err := netdelay.New(netdelay.Config{Upstream: u.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Heal(); _ = p.Close() })
	target.Route(p.DialContext)
	return target, func() {
		if err := p.Blackhole(time.Hour); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancelReachesTheSocket: a statement waiting on a peer that never answers returns once its
// context is cancelled (pgx turns the cancellation into a deadline on the socket): what makes
// --request-timeout end a hung request. Not assumed: pgx could as well wait for the reply.
func TestCancelReachesTheSocket(t *testing.T) {
	target, partition := blackholed(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 1, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	partition()
	qctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	_, err = conn.Exec(qctx, "SELECT 1")
	if took := time.Since(began); err == nil || took > 5*time.Second {
		t.Fatalf("Exec on a silent peer returned %v after %s, want an error soon after the cancel", err, took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the cancellation", err)
	}
}

// TestCutSocketsEndsWhatWaits: CutSockets fails at once what waits on the service's sockets,
// even without a context that ends, and closing the pool then does not wait for the peer.
func TestCutSocketsEndsWhatWaits(t *testing.T) {
	target, partition := blackholed(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	partition()
	done := make(chan error, 1)
	go func() { _, err := conn.Exec(ctx, "SELECT 1"); conn.Release(); done <- err }()
	time.Sleep(200 * time.Millisecond)
	if n := target.CutSockets(); n < 1 {
		t.Fatalf("cut %d sockets, want the pool's", n)
	}
	select {
	case err := <-done:
		var netErr net.Error
		if err == nil || errors.As(err, &netErr) && netErr.Timeout() {
			t.Errorf("Exec after the cut: %v, want the closed socket's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Exec still waits on a cut socket")
	}
	began := time.Now()
	pool.Close()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("closing the pool took %s after the cut", took)
	}
}
