package queue

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// counterWriter upserts summed deltas into a counters table with one statement per batch
// (unnest over arrays), the shape the suites use for hot rows.
type counterWriter struct{ table string }

func (w counterWriter) WriteBatch(ctx context.Context, tx pgx.Tx, recs []rec) (int, error) {
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

// TestPgFlusher runs the queue against a real Postgres when HOTSPOTKIT_TEST_DSN is set.
func TestPgFlusher(t *testing.T) {
	dsn := os.Getenv("HOTSPOTKIT_TEST_DSN")
	if dsn == "" {
		t.Skip("HOTSPOTKIT_TEST_DSN not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// One connection: a *pgx.Conn is not safe for concurrent use, so the queue gets one worker
	// and PolicyBlock (no inline writes from callers).
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	table := fmt.Sprintf("queue_test_counters_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, n bigint NOT NULL)`, table)); err != nil {
		t.Fatalf("create table: %v", err)
	}
	defer conn.Exec(context.Background(), "DROP TABLE "+table)

	var merges violationLog
	q, err := New(PgFlusher(conn, TxWriter[rec](counterWriter{table})), Options[int, rec]{
		Key: recKey, Merge: mergeRec(&merges, true), Compare: cmp.Compare[int], Compaction: true,
		Workers: 1, BatchSize: 256, FlushInterval: 5 * time.Millisecond, FullPolicy: PolicyBlock,
	})
	if err != nil {
		t.Fatal(err)
	}
	const slots, n = 10, 5000
	seq := map[int]int{}
	for i := range n {
		s := i % slots
		seq[s]++
		if _, err := q.Enqueue(ctx, rec{Slot: s, First: seq[s], Last: seq[s], Sum: 2}); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	if err := q.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m := q.Metrics()
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
	bad := PgFlusher(conn, TxWriter[rec](counterWriter{table + "_missing"}))
	if _, err := bad.Flush(ctx, []rec{{Slot: 1, Sum: 1}}); err == nil {
		t.Error("Flush into a missing table succeeded")
	}
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("connection unusable after a failed flush: %v", err)
	}
}
