package stmttime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// Every connection the pool opens marks the one request that runs its first statement as a
// cold session's, whether the pool opened it at first or to replace one past its lifetime:
// the requests on a cold session are exactly the connections opened. With a lifetime far
// shorter than the run, the pool opens more than its size.
func TestTracerMarksTheRequestOnEachNewSession(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t)
	var opened atomic.Int64
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-stmttime-test", Tracer: stmttime.New(),
		MaxConnLifetime: 30 * time.Millisecond, Connected: func() { opened.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// 60 requests of at least 10 ms each over 2 workers run 300 ms at least: ten lifetimes.
	res, err := load.Run(ctx, load.Config{Concurrency: 2, Requests: 60}, func(ctx context.Context, r *load.Request) error {
		_, err := pool.Exec(ctx, "SELECT pg_sleep(0.01)")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 60 {
		t.Fatalf("%d of 60 requests completed: %v", res.Completed, res.ErrorSamples)
	}
	pool.Close() // no more opens: Connected and the pool's count are final
	if n := pool.Stat().NewConnsCount(); res.ColdSessions != n || opened.Load() != n {
		t.Errorf("%d requests on a cold session, %d connections opened (Connected saw %d); want them equal", res.ColdSessions, n, opened.Load())
	}
	if res.ColdSessions <= 2 {
		t.Errorf("%d cold-session requests with a 30 ms lifetime over a 300 ms run; want more than the pool's 2", res.ColdSessions)
	}
	if res.ColdLatency.Count() != res.ColdSessions {
		t.Errorf("%d cold latencies for %d cold requests (all succeeded)", res.ColdLatency.Count(), res.ColdSessions)
	}
}
