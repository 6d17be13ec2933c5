package sqldb_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// testRoundTrip drives every handle of one database through the same portable statements
// (written once, with $n): a pool, a connection it lends, a dedicated connection, and the
// transactions of each. table is a fresh name.
func testRoundTrip(t *testing.T, pool sqldb.Pool, conn sqldb.Conn, table string) {
	t.Helper()
	ctx := t.Context()
	d := pool.Dialect()
	if conn.Dialect() != d {
		t.Fatalf("the pool speaks %s, the connection %s", d, conn.Dialect())
	}
	q := d.QuoteIdent(table)
	if _, err := pool.Exec(ctx, `CREATE TABLE `+q+` (id int PRIMARY KEY, n int NOT NULL, label varchar(20))`); err != nil {
		t.Fatal(err)
	}
	count := func(db sqldb.Querier) (n int64) {
		t.Helper()
		if err := db.QueryRow(ctx, `SELECT count(*) FROM `+q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("exec counts the rows affected", func(t *testing.T) {
		n, err := pool.Exec(ctx, `INSERT INTO `+q+` (id, n, label) VALUES ($1, $2, $3), ($4, $2, $3), ($5, $2, '$1 stays')`, 1, 10, "a", 2, 3)
		if err != nil || n != 3 {
			t.Fatalf("insert: %d rows, %v", n, err)
		}
		// Rows matched, not rows changed: setting a column to its own value still counts.
		n, err = pool.Exec(ctx, `UPDATE `+q+` SET n = n WHERE id IN ($1, $2)`, 1, 2)
		if err != nil || n != 2 {
			t.Errorf("an update that changes nothing: %d rows, %v; want the 2 matched", n, err)
		}
		var label string
		if err := pool.QueryRow(ctx, `SELECT label FROM `+q+` WHERE id = $1`, 3).Scan(&label); err != nil || label != "$1 stays" {
			t.Errorf("a $1 inside a string: %q, %v", label, err)
		}
	})

	t.Run("query and query row", func(t *testing.T) {
		rows, err := pool.Query(ctx, `SELECT id, n FROM `+q+` WHERE n = $1 ORDER BY id`, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		var id, n int64
		if err := sqldb.ForEachRow(rows, []any{&id, &n}, func() error { ids = append(ids, id); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, []int64{1, 2, 3}) {
			t.Errorf("ids %v", ids)
		}
		rows, err = conn.Query(ctx, `SELECT label FROM `+q+` WHERE id < $2 AND n = $1 ORDER BY id`, 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		if labels, err := sqldb.CollectRows[string](rows); err != nil || !slices.Equal(labels, []string{"a", "a"}) {
			t.Errorf("labels %q, %v (arguments reordered)", labels, err)
		}
		if err := conn.QueryRow(ctx, `SELECT n FROM `+q+` WHERE id = $1`, 99).Scan(&n); !errors.Is(err, sqldb.ErrNoRows) {
			t.Errorf("no row: %v, want ErrNoRows", err)
		}
	})

	t.Run("commit and rollback", func(t *testing.T) {
		for _, db := range []sqldb.DB{pool, conn} {
			tx, err := db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+q+` (id, n) VALUES ($1, 0)`, 100); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(ctx); err == nil {
				t.Error("a second rollback did not say the transaction was closed")
			}
			if got := count(db); got != 3 {
				t.Errorf("%d rows after a rollback, want 3", got)
			}
			err = sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO `+q+` (id, n) VALUES ($1, 0)`, 100)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := count(db); got != 4 {
				t.Errorf("%d rows after a commit, want 4", got)
			}
			if _, err := db.Exec(ctx, `DELETE FROM `+q+` WHERE id = $1`, 100); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("a unique violation inside a transaction", func(t *testing.T) {
		_, tx := pooledTx(t, pool)
		if _, err := tx.Exec(ctx, `INSERT INTO `+q+` (id, n) VALUES ($1, 0)`, 200); err != nil {
			t.Fatal(err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+q+` (id, n) VALUES ($1, 0)`, 1)
		if !sqldb.IsUniqueViolation(err) || sqldb.CommitOutcomeUnknown(err) {
			t.Fatalf("a duplicate key: %v (class %s), want a unique violation, a server's error", err, sqldb.Classify(err))
		}
		// What becomes of the transaction is the database's own: PostgreSQL's is aborted,
		// MySQL's goes on with the failed statement rolled back.
		_, err = tx.Exec(ctx, `UPDATE `+q+` SET n = n + 1 WHERE id = $1`, 200)
		switch d {
		case sqldb.Postgres:
			if sqldb.Classify(err) != "25P02" {
				t.Errorf("a statement after the violation: %v, want 25P02 (transaction aborted)", err)
			}
		case sqldb.MySQL:
			if err != nil {
				t.Errorf("a statement after the violation: %v, want the transaction to go on", err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			var n int64
			if err := pool.QueryRow(ctx, `SELECT n FROM `+q+` WHERE id = $1`, 200).Scan(&n); err != nil || n != 1 {
				t.Errorf("row 200 after the commit: n = %d, %v; want 1", n, err)
			}
			if _, err := pool.Exec(ctx, `DELETE FROM `+q+` WHERE id = $1`, 200); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("a statement in error is not sent", func(t *testing.T) {
		if _, err := pool.Exec(ctx, `SELECT $1, $2`, 1); err == nil {
			t.Error("a statement with too few arguments ran")
		}
	})

	t.Run("escape hatches", func(t *testing.T) {
		pc, tx := pooledTx(t, pool)
		if pc.IsClosed() {
			t.Error("a pooled connection in use says it is closed")
		}
		for _, h := range []any{pool, pc, tx, conn} {
			_, isPgx := sqldb.AsPgx(h)
			_, isSQL := sqldb.AsSQL(h)
			if isPgx != (d == sqldb.Postgres) || isSQL != (d == sqldb.MySQL) {
				t.Errorf("%T on %s: AsPgx %v, AsSQL %v", h, d, isPgx, isSQL)
			}
		}
		if _, ok := sqldb.AsPgx(struct{}{}); ok {
			t.Error("AsPgx took a value of no adapter")
		}
	})

	if pool.MaxConns() != 4 {
		t.Errorf("MaxConns %d, want 4", pool.MaxConns())
	}
	if conn.IsClosed() {
		t.Error("an open connection says it is closed")
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !conn.IsClosed() {
		t.Error("a closed connection says it is open")
	}
}

// pooledTx is a transaction on a connection of pool's, rolled back and given back when the
// test ends.
func pooledTx(t *testing.T, pool sqldb.Pool) (sqldb.PoolConn, sqldb.Tx) {
	t.Helper()
	pc, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Release)
	tx, err := pc.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Rollback(context.Background(), tx) })
	return pc, tx
}

// lockedRows are two rows and two transactions each holding a lock on one, for provoking the
// lock errors (deadlock, lock timeout) for real.
func lockedRows(t *testing.T, db sqldb.DB, table string) (a, b sqldb.Tx) {
	t.Helper()
	ctx := t.Context()
	q := db.Dialect().QuoteIdent(table)
	if _, err := db.Exec(ctx, `CREATE TABLE `+q+` (id int PRIMARY KEY, n int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO `+q+` (id, n) VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}
	var err error
	if a, err = db.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Rollback(context.Background(), a) })
	if b, err = db.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Rollback(context.Background(), b) })
	for i, tx := range []sqldb.Tx{a, b} {
		if _, err := tx.Exec(ctx, `UPDATE `+q+` SET n = n + 1 WHERE id = $1`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// deadlock has a and b (lockedRows') each wait for the other's row, and returns the error of
// the one the server chose to roll back (the other's update then goes through).
func deadlock(t *testing.T, a, b sqldb.Tx, table string) error {
	t.Helper()
	ctx := t.Context()
	q := a.Dialect().QuoteIdent(table)
	errs := make(chan error, 2)
	go func() {
		_, err := a.Exec(ctx, `UPDATE `+q+` SET n = n + 1 WHERE id = 2`)
		errs <- err
	}()
	go func() {
		_, err := b.Exec(ctx, `UPDATE `+q+` SET n = n + 1 WHERE id = 1`)
		errs <- err
	}()
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) {
		t.Fatalf("a deadlock with errors %v and %v, want exactly one", e1, e2)
	}
	return errors.Join(e1, e2)
}
