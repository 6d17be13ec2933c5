package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// roundTrips records what a pool sends: each statement sent alone, and each batch's statements.
type roundTrips struct {
	mu      sync.Mutex
	alone   []string
	batches [][]string
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.alone = append(r.alone, strings.ToLower(strings.TrimSpace(d.SQL)))
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []string
	for _, q := range d.Batch.QueuedQueries {
		b = append(b, strings.ToLower(strings.TrimSpace(q.SQL)))
	}
	r.batches = append(r.batches, b)
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) reset() (alone []string, batches [][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	alone, batches = r.alone, r.batches
	r.alone, r.batches = nil, nil
	return alone, batches
}

// batchWriter writes its records' ids in one batch; fail makes the batch's second statement
// fail, and recover (with fail) does what a pipelined claim does on a repeat: it rolls back to
// the batch's savepoint and writes again with a statement of its own.
type batchWriter struct {
	table         string
	fail, recover bool
}

func (w batchWriter) WriteBatch(ctx context.Context, stx sqldb.Tx, recs []int64) (int, error) {
	tx := pgxOf(stx)
	var b pgx.Batch
	b.Queue("SAVEPOINT lazy_test")
	if w.fail {
		b.Queue("SELECT 1/0")
	}
	b.Queue(fmt.Sprintf(`INSERT INTO %s SELECT unnest($1::bigint[])`, w.table), recs)
	err := tx.SendBatch(ctx, &b).Close()
	if err == nil || !w.recover {
		return b.Len(), err
	}
	if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT lazy_test"); err != nil {
		return b.Len(), err
	}
	_, err = tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s SELECT unnest($1::bigint[])`, w.table), recs)
	return b.Len() + 2, err
}

// execWriter writes with statements sent alone, the first of which begins the transaction.
type execWriter struct{ table string }

func (w execWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []int64) (int, error) {
	sp, err := pgxOf(tx).Begin(ctx) // a savepoint: the transaction begins first
	if err != nil {
		return 0, err
	}
	if _, err := sp.Exec(ctx, fmt.Sprintf(`INSERT INTO %s SELECT unnest($1::bigint[])`, w.table), recs); err != nil {
		return 1, err
	}
	return 2, sp.Commit(ctx)
}

// A TxFlusher on a pgx pool sends BEGIN with the writer's first batch: one round trip for the
// batch (and one for COMMIT), no BEGIN of its own; failures roll back and give the connection
// back, a savepoint inside the batch can be rolled back to, and a writer that sends statements
// alone gets a transaction begun before the first.
func TestTxFlusherOnAPgxPoolBeginsWithTheFirstStatement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	trips := &roundTrips{}
	pool := testPool(ctx, t, testdb.New(t), database.PoolOptions{MaxConns: 2, Tracer: trips})
	const table = "lazy_begin"
	if _, err := pool.Exec(ctx, `CREATE TABLE `+table+` (id bigint PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	rows := func() (n int64) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	flush := func(w TxWriter[int64], ids ...int64) error {
		t.Helper()
		trips.reset()
		_, err := PgFlusher[int64](pool, w).Flush(ctx, ids)
		if got := pool.Stat().AcquiredConns(); got != 0 {
			t.Errorf("%d connections still taken after the flush", got)
		}
		return err
	}

	if err := flush(batchWriter{table: table}, 1, 2); err != nil {
		t.Fatal(err)
	}
	alone, batches := trips.reset()
	if len(batches) != 1 || len(batches[0]) != 3 || batches[0][0] != "begin" {
		t.Errorf("batches sent %q, want one: begin, the savepoint, the insert", batches)
	}
	if len(alone) != 1 || alone[0] != "commit" {
		t.Errorf("statements sent alone %q, want commit only", alone)
	}
	if n := rows(); n != 2 {
		t.Errorf("%d rows after the first flush, want 2", n)
	}

	if err := flush(batchWriter{table: table, fail: true}, 3); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("a failing batch flushed with error %v", err)
	}
	if n := rows(); n != 2 {
		t.Errorf("%d rows after a failed flush, want 2: it must roll back", n)
	}

	if err := flush(batchWriter{table: table, fail: true, recover: true}, 3); err != nil {
		t.Fatalf("a batch rolled back to its savepoint and written again: %v", err)
	}
	if n := rows(); n != 3 {
		t.Errorf("%d rows after the recovered flush, want 3", n)
	}

	if err := flush(execWriter{table}, 4, 5); err != nil {
		t.Fatal(err)
	}
	if alone, _ := trips.reset(); len(alone) < 3 || alone[0] != "begin" || alone[len(alone)-1] != "commit" {
		t.Errorf("statements sent alone %q, want begin first and commit last", alone)
	}
	if n := rows(); n != 5 {
		t.Errorf("%d rows after the statement-by-statement flush, want 5", n)
	}

	// A batch that repeats a key fails inside the batch, and is rolled back too.
	if err := flush(batchWriter{table: table}, 5); err == nil {
		t.Error("a batch repeating a key flushed without error")
	}
	if n := rows(); n != 5 {
		t.Errorf("%d rows after the repeating flush, want 5", n)
	}
}

// A lazy transaction behaves as pgx's once it is closed, and commits nothing it never sent.
func TestLazyTxClosedAndEmpty(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := testPool(ctx, t, testdb.New(t), database.PoolOptions{MaxConns: 1})
	tx, err := beginLazily(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Errorf("committing an empty transaction: %v", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("second commit: %v, want ErrTxClosed", err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("exec after commit: %v, want ErrTxClosed", err)
	}
	if err := tx.SendBatch(ctx, &pgx.Batch{}).Close(); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("batch after commit: %v, want ErrTxClosed", err)
	}
	// The one connection is back: a second transaction gets it, and a failed one reports it.
	tx, err = beginLazily(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 did not fail")
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("committing a failed transaction: %v, want ErrTxCommitRollback", err)
	}
	if got := pool.Stat().AcquiredConns(); got != 0 {
		t.Errorf("%d connections still taken", got)
	}
}

// pgxOf is the pgx transaction under a TxFlusher's on PostgreSQL.
func pgxOf(tx sqldb.Tx) sqldb.Pgx {
	p, ok := sqldb.AsPgx(tx)
	if !ok {
		panic("not a pgx transaction")
	}
	return p
}

// A lazy transaction's statements are watched once for the end of the context it began with:
// ending it cuts a statement in flight (the connection is dropped, none stays taken), and an
// end that comes once they are over, as a pipelined batch's staging context may, leaves its
// COMMIT, under a context of its own, to commit.
func TestLazyTxWatchesItsContextOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	target := testdb.New(t)
	pool := testPool(ctx, t, target, database.PoolOptions{MaxConns: 1})
	if _, err := target.Admin().Exec(ctx, `CREATE TABLE watched (id int)`); err != nil {
		t.Fatal(err)
	}

	stage, end := context.WithCancel(ctx)
	tx, err := beginLazily(stage, pool)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, end)
	began := time.Now()
	if _, err := tx.Exec(stage, "SELECT pg_sleep(30)"); err == nil {
		t.Fatal("a statement in flight outlived its context's end")
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the cut statement returned after %v", took)
	}
	_ = tx.Rollback(ctx)
	// pgxpool destroys a broken connection on a goroutine of its own.
	waitFor(t, "the cut connection given back", 5*time.Second, func() bool { return pool.Stat().AcquiredConns() == 0 })

	stage, end = context.WithCancel(ctx)
	tx, err = beginLazily(stage, pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(stage, "INSERT INTO watched VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	end() // the staging is over; its context ends before the COMMIT
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("COMMIT after the staging's context ended: %v", err)
	}
	var n int
	if err := target.Admin().QueryRow(ctx, `SELECT count(*) FROM watched`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d rows committed (%v), want 1", n, err)
	}
}

// testPool is a pool of the queue's tests on target (o's AppName theirs), closed when the test
// ends.
func testPool(ctx context.Context, t *testing.T, target *database.Postgres, o database.PoolOptions) *pgxpool.Pool {
	t.Helper()
	o.AppName = "hotspotkit-queue-test"
	pool, err := target.NewPool(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
