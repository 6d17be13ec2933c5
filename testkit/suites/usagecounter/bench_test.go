package usagecounter

import (
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
)

// BenchmarkSyncTx is one sync request of the counter suite, end to end on one pooled
// connection of the shared test server: the pool's acquire, BEGIN, the claim and the four
// counter UPDATEs, COMMIT. Its allocs/op is the client's cost per request on the request
// path (ns/op is mostly the server's, and the machine's).
func BenchmarkSyncTx(b *testing.B) {
	ctx := b.Context()
	s := New()
	target := testdb.New(b, s.Info().SQL)
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 1, AppName: "hotspotkit-bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	r := engine.Standalone{Mode: testkit.Sync, Config: testkit.Config{HotKeys: 1}, Pool: sqldb.PgxPool(pool)}.Run(ctx, target.Target())
	if err := s.Seed(ctx, r); err != nil {
		b.Fatal(err)
	}
	wl, err := s.Workload(ctx, r)
	if err != nil {
		b.Fatal(err)
	}
	req := &testkit.Request{}
	for range 100 { // the connection's statements prepared, out of the measurement
		if err := wl.Op(ctx, req); err != nil {
			b.Fatal(err)
		}
		req.Index++
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := wl.Op(ctx, req); err != nil {
			b.Fatal(err)
		}
		req.Index++
	}
}
