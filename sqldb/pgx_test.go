package sqldb_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// TestMain stops the shared servers, PostgreSQL's and MariaDB's, once the tests have run.
func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// pgHandles are a pool of 4 and a dedicated connection on a fresh schema of the shared test
// PostgreSQL, as sqldb's handles.
func pgHandles(t *testing.T) (*database.Postgres, sqldb.Pool, sqldb.Conn) {
	t.Helper()
	target := testdb.New(t)
	pool, err := target.NewPool(t.Context(), database.PoolOptions{MaxConns: 4, AppName: "hotspotkit-sqldb-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	conn, err := target.Connect(t.Context(), "hotspotkit-sqldb-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return target, sqldb.PgxPool(pool), sqldb.PgxConn(conn)
}

func TestPgxRoundTrip(t *testing.T) {
	_, pool, conn := pgHandles(t)
	testRoundTrip(t, pool, conn, "round_trip")
}

// TestPgxEscapeHatch: AsPgx hands back the very pgx handle, and a pgx.Tx adapted by PgxTx
// (a caller's own, as the queue's lazily begun one) is given back as it was.
func TestPgxEscapeHatch(t *testing.T) {
	ctx := t.Context()
	target, _, _ := pgHandles(t)
	raw, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-sqldb-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	pool := sqldb.PgxPool(raw)
	if p, ok := sqldb.AsPgx(pool); !ok || p != sqldb.Pgx(raw) {
		t.Errorf("AsPgx(PgxPool(p)) = %v, %v; want p", p, ok)
	}
	pc, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	if p, ok := sqldb.AsPgx(pc); !ok {
		t.Errorf("AsPgx(a pooled connection) = %T, %v", p, ok)
	}
	tx, err := pc.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Rollback(ctx, tx)
	under, _ := sqldb.AsPgx(tx)
	ptx, ok := under.(pgx.Tx)
	if !ok {
		t.Fatalf("AsPgx(a transaction) = %T", under)
	}
	sp, err := ptx.Begin(ctx) // a savepoint, through pgx
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := sqldb.AsPgx(sqldb.PgxTx(sp)); again != sqldb.Pgx(sp) {
		t.Error("PgxTx's transaction is not the one AsPgx gives back")
	}
	if err := sp.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClassifyPostgresErrors: Classify, IsUniqueViolation and CommitOutcomeUnknown on errors as
// pgx really returns them, a deadlock and a lock timeout provoked for real.
func TestClassifyPostgresErrors(t *testing.T) {
	ctx := t.Context()
	_, pool, _ := pgHandles(t)
	conn := func(t *testing.T) sqldb.PoolConn {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release)
		return c
	}
	t.Run("deadlock", func(t *testing.T) {
		a, b := lockedRows(t, pool, "deadlocked")
		if _, err := a.Exec(ctx, "SET LOCAL deadlock_timeout = '20ms'"); err != nil {
			t.Fatal(err)
		}
		err := deadlock(t, a, b, "deadlocked")
		if got := sqldb.Classify(err); got != "40P01" || sqldb.CommitOutcomeUnknown(err) {
			t.Errorf("deadlock: %v classed %q, want 40P01, a server's refusal", err, got)
		}
	})
	t.Run("lock timeout", func(t *testing.T) {
		a, _ := lockedRows(t, pool, "lock_timeout")
		if _, err := a.Exec(ctx, "SET LOCAL lock_timeout = '20ms'"); err != nil {
			t.Fatal(err)
		}
		_, err := a.Exec(ctx, `UPDATE lock_timeout SET n = n + 1 WHERE id = 2`)
		if got := sqldb.Classify(err); got != "55P03" {
			t.Errorf("lock timeout: %v classed %q, want 55P03", err, got)
		}
	})
	t.Run("statement timeout", func(t *testing.T) {
		_, err := conn(t).Exec(ctx, "SET statement_timeout = 1; SELECT pg_sleep(1)")
		if got := sqldb.Classify(err); got != "57014" {
			t.Errorf("statement timeout: %v classed %q", err, got)
		}
	})
	t.Run("context deadline during a query", func(t *testing.T) {
		c := conn(t)
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := c.Exec(dctx, "SELECT pg_sleep(1)")
		if got := sqldb.Classify(err); got != sqldb.ClassDeadlineExceeded {
			t.Errorf("deadline: %v classed %q", err, got)
		}
	})
	t.Run("a killed connection", func(t *testing.T) {
		c := conn(t)
		_, err := c.Exec(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
		if got := sqldb.Classify(err); got != "57P01" {
			t.Errorf("the statement that was killed: %v classed %q, want 57P01", err, got)
		}
		_, err = c.Exec(ctx, "SELECT 1")
		if got := sqldb.Classify(err); got != sqldb.ClassConnClosed || !sqldb.CommitOutcomeUnknown(err) {
			t.Errorf("a statement after: %v classed %q, want conn_closed, an unknown outcome", err, got)
		}
		if !c.IsClosed() {
			t.Error("the killed pooled connection says it is open")
		}
	})
	t.Run("unique violation", func(t *testing.T) {
		c := conn(t)
		_, err := c.Exec(ctx, "CREATE TABLE dupes (id int PRIMARY KEY); INSERT INTO dupes VALUES (1), (1)")
		if !sqldb.IsUniqueViolation(err) || sqldb.Classify(err) != "23505" {
			t.Errorf("a duplicate key: %v", err)
		}
	})
}
