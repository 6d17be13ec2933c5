package usagecounter

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// Zipfian hot keys (θ = 0.99 over 100 sets): every mode verifies, and the hottest set took the
// distribution's share of the writes (suitetest.HotKeysSkewed). The share the report gives is
// also what the database holds: the busiest api key row's requests over all of them, read
// from the run's schema, kept for it.
func TestSkewedHotKeys(t *testing.T) {
	suitetest.HotKeysSkewed(t, New())

	const schema = "usage_counter_skew"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testdb.Server(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
		conn.Close(context.Background())
	})
	code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "3000", "--concurrency", "50", "--hot-keys", "100",
		"--hot-key-dist", "zipf:0.99", "--modes", "async-compact", "--schema", schema, "--keep-schema")
	if code != 0 || len(rep.Runs) != 1 || rep.Runs[0].HotSets == nil {
		t.Fatalf("exit %d, runs %+v\n%s", code, rep.Runs, stderr)
	}
	var hottest string
	var most, all int64
	if err := conn.QueryRow(ctx, `SELECT id, total_requests, sum(total_requests) OVER () FROM `+schema+`.api_keys
		ORDER BY total_requests DESC LIMIT 1`).Scan(&hottest, &most, &all); err != nil {
		t.Fatal(err)
	}
	if h := rep.Runs[0].HotSets; hottest != "key-hot-0" || all != 3000 || float64(most)/float64(all) != h.HottestShare {
		t.Errorf("the database's hottest api key %s took %d of %d requests; the report says %+v", hottest, most, all, h)
	}
}

// Compaction merges more writes into each UPDATE the more the requests crowd on few keys. One
// queue worker takes batches of 100 records, and a partial batch waits for the rest (a 60 s
// interval): every batch but the last holds 100 enqueues, whatever the machine's speed.
// Uniform over 100 keys, 100 enqueues in request order meet about 100 keys (1 write per
// UPDATE; were they shuffled at random, still about 63: 1.6); zipf:1.2 draws 100 times from
// one distribution, which meets about 35 keys whatever the order: near 3.
func TestSkewMergesMoreWritesPerUpdate(t *testing.T) {
	perUpdate := map[string]float64{}
	for _, dist := range []string{"uniform", "zipf:1.2"} {
		code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "5000", "--concurrency", "50", "--hot-keys", "100",
			"--hot-key-dist", dist, "--modes", "async-compact", "--queue-workers", "1", "--flush-batch-size", "100",
			"--flush-interval-ms", "60000")
		if code != 0 || len(rep.Runs) != 1 || rep.Runs[0].Queue == nil {
			t.Fatalf("%s: exit %d\n%s", dist, code, stderr)
		}
		suitetest.Verified(t, rep.Runs[0])
		q := rep.Runs[0].Queue
		if q.FlushedTotal+q.SyncFallbackTotal != 5000 || q.WritesPerUpdate != q.QueueMetrics.WritesPerUpdate() || q.FlushBatchesTotal < 50 {
			t.Errorf("%s: writes per update %v in %d batches, the counters give %v: %+v", dist, q.WritesPerUpdate,
				q.FlushBatchesTotal, q.QueueMetrics.WritesPerUpdate(), q.QueueMetrics)
		}
		perUpdate[dist] = q.WritesPerUpdate
	}
	if u, z := perUpdate["uniform"], perUpdate["zipf:1.2"]; !(z > u) || u < 1 {
		t.Errorf("writes per UPDATE: uniform %v, zipf:1.2 %v; want skew to merge more", u, z)
	}
	t.Logf("writes per UPDATE over 100 keys, batches of 100: %v", perUpdate)
}
