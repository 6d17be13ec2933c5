package queue

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// counterWriter upserts summed deltas into a counters table with one statement per batch
// (unnest over arrays), the shape the suites use for hot rows.
type counterWriter struct{ table string }

func (w counterWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	ids := make([]int64, len(recs))
	deltas := make([]int64, len(recs))
	for i, r := range recs {
		ids[i], deltas[i] = int64(r.Slot), r.Sum
	}
	_, err := tx.Exec(ctx, fmt.Sprintf(`
		INSERT INTO %s AS t (id, n)
		SELECT * FROM unnest($1::bigint[], $2::bigint[])
		ON CONFLICT (id) DO UPDATE SET n = t.n + excluded.n`, w.table), ids, deltas)
	return 1, err
}

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// counterTable creates a counters table in a fresh schema of the shared test server and
// returns a connection to it.
func counterTable(tb testing.TB) (*pgx.Conn, string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := testdb.New(tb).Connect(ctx, "hotspotkit-queue-test")
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn, "queue_test_counters"
}

// TestTxFlusher runs the queue against a real (managed) PostgreSQL.
func TestTxFlusher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// One connection: a *pgx.Conn is not safe for concurrent use, so the queue gets one worker
	// and PolicyBlock (no inline writes from callers).
	conn, table := counterTable(t)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, n bigint NOT NULL)`, table)); err != nil {
		t.Fatalf("create table: %v", err)
	}

	var merges violationLog
	q, err := New(TxFlusher(sqldb.PgxConn(conn), TxWriter[rec](counterWriter{table})), Options[int, rec]{
		Key: recKey, Merge: mergeRec(&merges, true), Compare: cmp.Compare[int], Compaction: true,
		Workers: 1, BatchSize: 256, FlushInterval: 5 * time.Millisecond, FullPolicy: PolicyBlock,
	})
	if err != nil {
		t.Fatal(err)
	}
	const slots, n = 10, 5000
	m, _ := enqueueInOrder(t, ctx, q, n, slots, 2)
	checkInvariant(t, m)
	merges.check(t)
	if m.FlushedTotal != n || m.FlushSQLOpsTotal != m.FlushBatchesTotal || m.FlushSQLRecordsTotal > m.FlushBatchesTotal*slots {
		t.Errorf("metrics %+v", m)
	}

	var rows, total int64
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), coalesce(sum(n), 0) FROM %s`, table)).Scan(&rows, &total); err != nil {
		t.Fatal(err)
	}
	if rows != slots || total != 2*n {
		t.Errorf("table holds %d rows summing to %d, want %d rows summing to %d", rows, total, slots, 2*n)
	}

	// A failing statement rolls the batch back: nothing of it may be visible.
	bad := TxFlusher(sqldb.PgxConn(conn), TxWriter[rec](counterWriter{table + "_missing"}))
	if _, err := bad.Flush(ctx, []rec{{Slot: 1, Sum: 1}}); err == nil {
		t.Error("Flush into a missing table succeeded")
	}
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("connection unusable after a failed flush: %v", err)
	}
}

// BenchmarkPgFlush measures compacted flush transactions against a real (managed)
// PostgreSQL: each iteration flushes one batch of the given number of distinct slots — one
// unnest upsert and one commit with fsync. ns/op is per batch; rows/s is reported too.
func BenchmarkPgFlush(b *testing.B) {
	conn, table := counterTable(b)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, n bigint NOT NULL)`, table)); err != nil {
		b.Fatal(err)
	}
	f := TxFlusher(sqldb.PgxConn(conn), TxWriter[rec](counterWriter{table}))
	for _, slots := range []int{4, 1000} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			batch := make([]rec, slots)
			for i := range batch {
				batch[i] = rec{Slot: i, Sum: 1}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.Flush(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(slots)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
