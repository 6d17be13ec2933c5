package pooler_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/pgbouncertest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/pooler"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestNoPooler is the contract of a nil *Pooler, an invocation without one: every method says
// there is none, and a fault that needs one fails with why.
func TestNoPooler(t *testing.T) {
	ctx := context.Background()
	var p *pooler.Pooler
	if p.Mode() != "" || p.PoolSize() != 0 || p.Sampler() != nil || p.Release(ctx, nil) != nil {
		t.Errorf("no pooler: mode %q, pool %d, a sampler or sessions to release", p.Mode(), p.PoolSize())
	}
	w := p.Begin(ctx)
	if w != nil || w.Report(ctx, results.Pooler{}, pooler.Hops{}) != nil {
		t.Error("no pooler: a window, or a report of one")
	}
	if _, err := p.Restart(ctx); err == nil {
		t.Error("no pooler: pooler-restart struck")
	}
	if _, err := p.Pause(ctx, time.Millisecond); err == nil {
		t.Error("no pooler: pooler-pause struck")
	}
	if _, err := p.Path(); err == nil {
		t.Error("no pooler: a path to strike")
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
}

// TestTemporaryPooler puts a temporary PgBouncer in front of a schema and follows one run
// through it: the service lands in the run's schema, the samples and the window see its
// transactions, RECONNECT releases the server connections it held, a restart and a pause
// strike it, and Close stops it.
func TestTemporaryPooler(t *testing.T) {
	pgbouncertest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	target := testdb.New(t)
	p, err := pooler.Start(ctx, target, pooler.Config{Mode: "transaction", PoolSize: 2, ServiceConns: 4,
		Settings: map[string]string{"lock_timeout": "5s"}, ProxyHop: true, RTT: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !target.Pooled() || p.Mode() != "transaction" || p.PoolSize() != 2 {
		t.Fatalf("pooled %v, mode %q, pool size %d", target.Pooled(), p.Mode(), p.PoolSize())
	}
	if _, err := p.Path(); err != nil {
		t.Errorf("the hop to the pooler: %v", err)
	}

	w := p.Begin(ctx)
	conn, err := target.Connect(ctx, "hotspotkit-load")
	if err != nil {
		t.Fatal(err)
	}
	var lockTimeout string
	if err := conn.QueryRow(ctx, "SHOW lock_timeout", pgx.QueryExecModeSimpleProtocol).Scan(&lockTimeout); err != nil || lockTimeout != "5s" {
		t.Errorf("the server connection's lock_timeout %q (%v), want the session setting 5s", lockTimeout, err)
	}
	for range 5 {
		if _, err := conn.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.Sampler()(ctx)
	if err != nil || s.ServersActive+s.ServersIdle < 1 {
		t.Errorf("sample %+v (%v): want the server connection the client used", s, err)
	}
	conn.Close(ctx)
	time.Sleep(1100 * time.Millisecond) // SHOW STATS is updated every second (stats_period)
	rep := w.Report(ctx, results.Pooler{MaxClientsActive: 7}, pooler.Hops{Pooler: time.Millisecond, DB: 2 * time.Millisecond})
	if rep.Kind != "pgbouncer" || !rep.Managed || rep.Mode != "transaction" || rep.PoolSize != 2 || rep.MaxClientsActive != 7 ||
		rep.PoolerRTTMs != 1 || rep.DBRTTMs != 2 || rep.Transactions < 5 {
		t.Errorf("report %+v", *rep)
	}

	pids := p.Release(ctx, target.Admin())
	if len(pids) == 0 {
		t.Fatal("RECONNECT released no server connection")
	}
	waitGone(ctx, t, target, pids)

	if detail, err := p.Restart(ctx); err != nil || !strings.Contains(detail, "SIGKILL") {
		t.Errorf("restart: %q, %v", detail, err)
	}
	if detail, err := p.Pause(ctx, 100*time.Millisecond); err != nil || !strings.Contains(detail, "RESUME") {
		t.Errorf("pause: %q, %v", detail, err)
	}
	after, err := target.Connect(ctx, "hotspotkit-load")
	if err != nil {
		t.Fatalf("through the pooler after its restart and pause: %v", err)
	}
	after.Close(ctx)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitGone waits until none of pids is a backend of target's server any more.
func waitGone(ctx context.Context, t *testing.T, target *database.Postgres, pids []uint32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var left int
		if err := target.Admin().QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d server connections RECONNECT released are still there", left, len(pids))
		}
	}
}

// TestPoolAboveTheServerIsBadInput refuses a pool the server cannot hold before a PgBouncer
// starts.
func TestPoolAboveTheServerIsBadInput(t *testing.T) {
	target := testdb.New(t)
	_, err := pooler.Start(context.Background(), target, pooler.Config{Mode: "transaction", PoolSize: 100000, ServiceConns: 4})
	var bad pooler.BadInput
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "--pooler-pool-size 100000") {
		t.Fatalf("got %v, want the pool size refused as bad input", err)
	}
	if target.Pooled() {
		t.Error("the service goes through a pooler that was refused")
	}
}
