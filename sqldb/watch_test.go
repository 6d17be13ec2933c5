package sqldb_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// TestWatchOnce: statements under the watched context run, and its cancel interrupts the one
// that waits on the server (a row lock here) at once, leaving the connection closed for the
// pool to drop; a cancel after the last statement leaves it open and usable; a statement under
// a context of its own keeps that context's deadline; the escape hatch gives the pgx handles.
func TestWatchOnce(t *testing.T) {
	ctx := t.Context()
	_, pool, admin := pgHandles(t)
	if _, err := admin.Exec(ctx, "CREATE TABLE watched (id int PRIMARY KEY, n int); INSERT INTO watched VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	acquire := func(t *testing.T) sqldb.PoolConn {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// holdRow locks the row the subtests update, on the admin connection, until the returned
	// function rolls back.
	holdRow := func(t *testing.T) func() {
		t.Helper()
		holder, err := admin.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := holder.Exec(ctx, "UPDATE watched SET n = n + 1 WHERE id = 1"); err != nil {
			sqldb.Rollback(ctx, holder)
			t.Fatal(err)
		}
		return func() { sqldb.Rollback(ctx, holder) }
	}

	t.Run("interrupted", func(t *testing.T) {
		defer holdRow(t)()
		c := acquire(t)
		defer c.Release()
		wctx, cancel := context.WithCancel(ctx)
		wc, unwatch := sqldb.WatchOnce(wctx, c)
		tx, err := wc.Begin(wctx)
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(100*time.Millisecond, cancel)
		began := time.Now()
		_, err = tx.Exec(wctx, "UPDATE watched SET n = n + 1 WHERE id = 1") // waits on holder's lock
		waited := time.Since(began)
		unwatch()
		if err == nil || waited > 20*time.Second {
			t.Fatalf("the waiting statement: %v after %s, want an error once cancelled", err, waited)
		}
		if !wc.IsClosed() || !c.IsClosed() {
			t.Error("the interrupted connection is not closed: the pool would lend it again")
		}
	})

	t.Run("cancelled after", func(t *testing.T) {
		c := acquire(t)
		wctx, cancel := context.WithCancel(ctx)
		wc, unwatch := sqldb.WatchOnce(wctx, c)
		tx, err := wc.Begin(wctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(wctx, "UPDATE watched SET n = n + 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(wctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		time.Sleep(10 * time.Millisecond) // the watch fired: the socket's deadline passed
		unwatch()
		if wc.IsClosed() {
			t.Fatal("a connection whose statements were over is closed")
		}
		var n int
		if err := wc.QueryRow(ctx, "SELECT n FROM watched WHERE id = 1").Scan(&n); err != nil || n != 1 {
			t.Errorf("a statement after the watch: n %d, %v", n, err)
		}
		c.Release()
	})

	t.Run("own deadline", func(t *testing.T) {
		defer holdRow(t)()
		c := acquire(t)
		defer c.Release()
		wc, unwatch := sqldb.WatchOnce(ctx, c)
		defer unwatch()
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := wc.Exec(dctx, "UPDATE watched SET n = n + 1 WHERE id = 1"); sqldb.Classify(err) != sqldb.ClassDeadlineExceeded {
			t.Errorf("a statement under its own deadline: %v, classed %q", err, sqldb.Classify(err))
		}
	})

	t.Run("escape hatch", func(t *testing.T) {
		c := acquire(t)
		defer c.Release()
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wc, unwatch := sqldb.WatchOnce(wctx, c)
		defer unwatch()
		if p, ok := sqldb.AsPgx(wc); !ok || p == nil {
			t.Errorf("AsPgx(a watched connection) = %T, %v", p, ok)
		}
		tx, err := wc.Begin(wctx)
		if err != nil {
			t.Fatal(err)
		}
		defer sqldb.Rollback(ctx, tx)
		p, ok := sqldb.AsPgx(tx)
		if _, isTx := p.(pgx.Tx); !ok || !isTx {
			t.Errorf("AsPgx(a watched transaction) = %T, %v", p, ok)
		}
	})
}
