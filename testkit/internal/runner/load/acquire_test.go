package load

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func TestClosedPoolIsClassified(t *testing.T) {
	// A pool connects lazily, so this needs no server.
	cfg, err := pgxpool.ParseConfig("postgres://hotspotkit@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	_, err = (&Request{}).Acquire(context.Background(), sqldb.PgxPool(pool))
	if got := Classify(err); got != ClassPoolClosed {
		t.Errorf("Classify(%v) = %q, want %q", err, got, ClassPoolClosed)
	}
}

// TestAcquireWaitWithARealPool runs on the managed test server (internal/testhelp/testdb).
func TestAcquireWaitWithARealPool(t *testing.T) {
	dsn := testdb.Server(t).DSN()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	const requests = 200
	res := run(t, ctx, Config{Concurrency: 16, Requests: requests}, func(ctx context.Context, r *Request) error {
		conn, err := r.Acquire(ctx, sqldb.PgxPool(pool))
		if err != nil {
			return err
		}
		defer conn.Release()
		_, err = conn.Exec(ctx, "SELECT pg_sleep(0.002)")
		return err
	})
	if res.Completed != requests {
		t.Fatalf("completed %d of %d: %v", res.Completed, requests, res.ErrorSamples)
	}
	if res.AcquireWait.Count() != requests {
		t.Errorf("acquire waits recorded %d, want %d", res.AcquireWait.Count(), requests)
	}
	// 16 workers share 2 connections that each hold one for at least 2 ms, so the typical
	// request queues behind several others; and a request's latency includes its wait.
	wait, latency := res.AcquireWait.ValueAtQuantile(50), res.Latency.ValueAtQuantile(50)
	if wait < 2*time.Millisecond {
		t.Errorf("median acquire wait %v: 16 workers on 2 connections must queue", wait)
	}
	if latency < wait {
		t.Errorf("median latency %v below median acquire wait %v", latency, wait)
	}
	t.Logf("median acquire wait %v, median latency %v", wait, latency)
}
