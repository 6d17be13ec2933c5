package suitetest

import (
	"context"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// BenchRequests is a benchmark of suite s's request path in mode as a run drives it: b.N
// requests by workers workers through the load engine, each try under a request timeout and
// a cancellable context, on a pool of workers connections of the shared test server with the
// request path's statement tracer (as the engine's), after every connection's statements were
// prepared. cfg is the suite's configuration (Validate, Prepare); a Preparer is prepared on a
// fresh schema first. Beside ns/op and allocs/op (the whole process's, so the load engine's
// included) it reports the process's processor time per request, in all and its user and
// system parts (cpu-µs/op, user-µs/op, sys-µs/op): the client's cost of a request, where
// ns/op is mostly the server's.
func BenchRequests(b *testing.B, s testkit.Suite, mode testkit.Mode, cfg testkit.Config, workers int) {
	ctx := b.Context()
	if v, ok := s.(testkit.Validator); ok {
		if err := v.Validate(cfg); err != nil {
			b.Fatal(err)
		}
	}
	target := testdb.New(b, s.Info().SQL)
	if p, ok := s.(testkit.Preparer); ok {
		if err := p.Prepare(ctx, testkit.PrepareEnv{Admin: sqldb.PgxConn(target.Admin()), Schema: target.Schema(), Config: cfg}); err != nil {
			b.Fatal(err)
		}
	}
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: int32(workers), AppName: "hotspotkit-load", Tracer: stmttime.New()})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	r := engine.Standalone{Mode: mode, Config: cfg, Pool: sqldb.PgxPool(pool)}.Run(ctx, target.Target())
	if err := s.Seed(ctx, r); err != nil {
		b.Fatal(err)
	}
	wl, err := s.Workload(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	if wl.Close != nil {
		defer wl.Close()
	}
	opCtx, cancel := context.WithCancel(ctx) // the engine's ops run under a context it can cancel
	defer cancel()
	run := func(n int) {
		res, err := load.Run(ctx, load.Config{Concurrency: workers, Requests: int64(n), RequestTimeout: 30 * time.Second, OpContext: opCtx}, wl.Op)
		if err != nil {
			b.Fatal(err)
		}
		if res.Completed != int64(n) {
			b.Fatalf("%d of %d requests completed: %v", res.Completed, n, res.ErrorSamples)
		}
	}
	run(100 * workers) // every connection opened and its statements prepared, out of the measurement
	b.ReportAllocs()
	b.ResetTimer()
	stop := CPUPerOp(b)
	run(b.N)
	b.StopTimer()
	stop()
}

// CPUPerOp starts reading the process's processor time for b's ops; the stop it returns,
// called once they are over, reports it per op, in all and its user and system parts
// (cpu-µs/op, user-µs/op, sys-µs/op): the client's cost of an op, where ns/op on a shared
// machine is also everyone else's.
func CPUPerOp(b *testing.B) (stop func()) {
	user, sys := clientcost.ProcessCPU()
	return func() {
		user1, sys1 := clientcost.ProcessCPU()
		n := float64(b.N)
		b.ReportMetric(float64(user1-user+sys1-sys)/1e3/n, "cpu-µs/op")
		b.ReportMetric(float64(user1-user)/1e3/n, "user-µs/op")
		b.ReportMetric(float64(sys1-sys)/1e3/n, "sys-µs/op")
	}
}
