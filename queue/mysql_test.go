package queue

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// upsertWriter adds each slot's sum to its row with one multi-row INSERT … ON DUPLICATE KEY
// UPDATE per batch, in MySQL's dialect, its placeholders written as $n (two a record).
type upsertWriter struct{ table string }

func (w upsertWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	values := make([]string, len(recs))
	args := make([]any, 0, 2*len(recs))
	for i, r := range recs {
		values[i] = fmt.Sprintf("($%d, $%d)", 2*i+1, 2*i+2)
		args = append(args, int64(r.Slot), r.Sum)
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+w.table+` (id, n) VALUES `+strings.Join(values, ", ")+`
		ON DUPLICATE KEY UPDATE n = n + VALUES(n)`, args...)
	return 1, err
}

// TestMySQLFlusher runs the queue against a real (temporary) MariaDB through database/sql:
// compacted batches from two pipelined workers, each committed at its first attempt, inline
// writes when it is full, and a failed batch rolled back.
func TestMySQLFlusher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connector, err := sqldb.MySQLConnector(sqldb.MySQLOptions{Config: mariadbtest.New(t).Config()})
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	const table = "queue_counters"
	if _, err := db.ExecContext(ctx, `CREATE TABLE `+table+` (id bigint PRIMARY KEY, n bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var merges violationLog
	q, err := New(MySQLFlusher(db, TxWriter[rec](upsertWriter{table})), Options[int, rec]{
		Key: recKey, Merge: mergeRec(&merges, false), Compare: cmp.Compare[int], Compaction: true,
		Workers: 2, BatchSize: 256, FlushInterval: 5 * time.Millisecond, FullPolicy: PolicySync,
		Capacity: 64, Pipeline: true, FlushTimeout: time.Minute, // a flush's context, ended after each
	})
	if err != nil {
		t.Fatal(err)
	}
	const slots, n = 10, 5000
	m, _ := enqueueInOrder(t, ctx, q, n, slots, 2)
	checkInvariant(t, m)
	merges.check(t)
	if m.FlushedTotal+m.SyncFallbackTotal != n || m.FlushBatchesTotal == 0 {
		t.Errorf("metrics %+v", m)
	}
	// database/sql rolls a transaction back when the context it began with ends: a staged
	// batch must still commit (no batch failed, none was retried).
	if m.FlushFailedTotal != 0 || m.RetriesTotal != 0 {
		t.Errorf("%d records' batches failed, %d retries: want none (%+v)", m.FlushFailedTotal, m.RetriesTotal, m)
	}
	var rows, total int64
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(n), 0) FROM `+table).Scan(&rows, &total); err != nil {
		t.Fatal(err)
	}
	if rows != slots || total != 2*n {
		t.Errorf("table holds %d rows summing to %d, want %d rows summing to %d", rows, total, slots, 2*n)
	}

	// A failing statement rolls the batch back: nothing of it may be visible.
	bad := MySQLFlusher(db, TxWriter[rec](writerFunc(func(ctx context.Context, tx sqldb.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE `+table+` SET n = n + 1000`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE `+table+`_missing SET n = 1`)
		return err
	})))
	if _, err := bad.Flush(ctx, []rec{{Slot: 1, Sum: 1}}); err == nil {
		t.Error("Flush into a missing table succeeded")
	}
	if err := db.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM `+table).Scan(&total); err != nil || total != 2*n {
		t.Errorf("after a failed flush the table sums to %d (%v), want %d: it must roll back", total, err, 2*n)
	}
}

// writerFunc is a writer whose every batch runs the function.
type writerFunc func(ctx context.Context, tx sqldb.Tx) error

func (f writerFunc) WriteBatch(ctx context.Context, tx sqldb.Tx, _ []rec) (int, error) {
	return 1, f(ctx, tx)
}
