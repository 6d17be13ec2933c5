package sqldb_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlOptions reach a fresh database of its own on the shared MariaDB (mariadbtest), with
// nothing of the kit's driver settings: they are sqldb's to make.
func mysqlOptions(t *testing.T) sqldb.MySQLOptions {
	t.Helper()
	cfg := mariadbtest.New(t).Config()
	cfg.InterpolateParams = false
	return sqldb.MySQLOptions{Config: cfg}
}

// mysqlHandles are a pool of 4 and a dedicated connection on a fresh database of the shared
// MariaDB.
func mysqlHandles(t *testing.T) (sqldb.MySQLOptions, sqldb.Pool, sqldb.Conn) {
	t.Helper()
	o := mysqlOptions(t)
	o.MaxConns = 4
	pool, err := sqldb.OpenMySQL(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	conn, err := sqldb.ConnectMySQL(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return o, pool, conn
}

func TestMySQLRoundTrip(t *testing.T) {
	_, pool, conn := mysqlHandles(t)
	testRoundTrip(t, pool, conn, "round_trip")
}

// A transaction outlives the context it began on, as pgx's does: the queue stages a batch on
// one context and commits it on another (database/sql alone rolls it back when the first
// ends). A COMMIT on a context already done is not sent: the transaction is rolled back.
func TestMySQLTransactionOutlivesItsBeginContext(t *testing.T) {
	ctx := t.Context()
	_, pool, conn := mysqlHandles(t)
	if _, err := conn.Exec(ctx, "CREATE TABLE staged (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for i, db := range []sqldb.DB{pool, conn} {
		bctx, cancel := context.WithCancel(ctx)
		tx, err := db.Begin(bctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(bctx, "INSERT INTO staged (id) VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		cancel()
		time.Sleep(50 * time.Millisecond) // database/sql's rollback on the context's end is asynchronous
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("%T: the commit after the begin's context ended: %v", db, err)
		}
		done, stop := context.WithCancel(ctx)
		tx, err = db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO staged (id) VALUES ($1)", 10+i); err != nil {
			t.Fatal(err)
		}
		stop()
		if err := tx.Commit(done); !errors.Is(err, context.Canceled) {
			t.Errorf("%T: a commit on a done context: %v, want context.Canceled", db, err)
		}
	}
	var ids []int64
	rows, err := conn.Query(ctx, "SELECT id FROM staged ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := sqldb.ForEachRow(rows, []any{&id}, func() error { ids = append(ids, id); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != 0 || ids[1] != 1 {
		t.Errorf("rows %v, want [0 1]: the committed ones and neither of those whose COMMIT's context was done", ids)
	}
}

// sessionStatus reads one of the session's status counters on conn.
func sessionStatus(t *testing.T, conn sqldb.Querier, name string) int64 {
	t.Helper()
	var n int64
	var got string
	if err := conn.QueryRow(t.Context(), "SHOW SESSION STATUS LIKE '"+name+"'").Scan(&got, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMySQLOneRoundTripPerStatement: a statement with arguments is sent as one query, its
// arguments in its text (interpolateParams), never prepared: the server counts no
// COM_STMT_PREPARE, and a query per statement, whatever the DSN said.
func TestMySQLOneRoundTripPerStatement(t *testing.T) {
	ctx := t.Context()
	_, _, conn := mysqlHandles(t)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY, n int NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	prepared, queries := sessionStatus(t, conn, "Com_stmt_prepare"), sessionStatus(t, conn, "Questions")
	for i := range 10 {
		if _, err := conn.Exec(ctx, "INSERT INTO t (id, n) VALUES ($1, $2)", i, i*2); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT n FROM t WHERE id = $1", 7).Scan(&n); err != nil || n != 14 {
		t.Fatalf("row 7: %d, %v", n, err)
	}
	if got := sessionStatus(t, conn, "Com_stmt_prepare") - prepared; got != 0 {
		t.Errorf("%d statements prepared, want none", got)
	}
	// The 11 statements, and the two status reads after the first (a read counts itself).
	if got := sessionStatus(t, conn, "Questions") - queries; got != 13 {
		t.Errorf("%d queries for 11 statements and 2 status reads, want 13", got)
	}
}

// TestMySQLSessionAndDial: session variables reach every connection, and a route's dial
// carries them.
func TestMySQLSessionAndDial(t *testing.T) {
	ctx := t.Context()
	o := mysqlOptions(t)
	var dials atomic.Int64
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	o.Session = map[string]string{"innodb_lock_wait_timeout": "7", "tx_isolation": "'READ-COMMITTED'"}
	o.MaxConns = 2
	pool, err := sqldb.OpenMySQL(o)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var wait int64
	var isolation string
	if err := pool.QueryRow(ctx, "SELECT @@innodb_lock_wait_timeout, @@tx_isolation").Scan(&wait, &isolation); err != nil {
		t.Fatal(err)
	}
	if wait != 7 || isolation != "READ-COMMITTED" {
		t.Errorf("session: lock wait timeout %d, isolation %s", wait, isolation)
	}
	if dials.Load() == 0 {
		t.Error("the connection was not dialled through the route")
	}
	if o.Config.InterpolateParams || o.Config.Params != nil {
		t.Error("the caller's config was changed")
	}
	if _, err := sqldb.MySQLConnector(sqldb.MySQLOptions{}); err == nil {
		t.Error("a connector without a config")
	}
}

// connectionID is the server's id of conn's session.
func connectionID(t *testing.T, conn sqldb.Querier) int64 {
	t.Helper()
	var id int64
	if err := conn.QueryRow(t.Context(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestClassifyMySQLErrors: Classify, IsUniqueViolation and CommitOutcomeUnknown on errors as
// go-sql-driver/mysql really returns them from MariaDB, a deadlock, a lock wait timeout and a
// killed connection provoked for real.
func TestClassifyMySQLErrors(t *testing.T) {
	ctx := t.Context()
	o, pool, _ := mysqlHandles(t)
	t.Run("deadlock", func(t *testing.T) {
		a, b := lockedRows(t, pool, "deadlocked")
		err := deadlock(t, a, b, "deadlocked")
		if got := sqldb.Classify(err); got != sqldb.ClassMySQLDeadlock || sqldb.CommitOutcomeUnknown(err) {
			t.Errorf("deadlock: %v classed %q, want %s, a server's refusal", err, got, sqldb.ClassMySQLDeadlock)
		}
	})
	t.Run("lock wait timeout", func(t *testing.T) {
		a, _ := lockedRows(t, pool, "lock_wait")
		if _, err := a.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
		_, err := a.Exec(ctx, "UPDATE lock_wait SET n = n + 1 WHERE id = 2")
		if got := sqldb.Classify(err); got != sqldb.ClassMySQLLockWaitTimeout {
			t.Errorf("lock wait timeout: %v classed %q, want %s", err, got, sqldb.ClassMySQLLockWaitTimeout)
		}
	})
	t.Run("unique violation", func(t *testing.T) {
		if _, err := pool.Exec(ctx, "CREATE TABLE dupes (id int PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		_, err := pool.Exec(ctx, "INSERT INTO dupes VALUES (1), (1)")
		if !sqldb.IsUniqueViolation(err) || sqldb.Classify(err) != "mysql-1062" {
			t.Errorf("a duplicate key: %v classed %q", err, sqldb.Classify(err))
		}
	})
	t.Run("context deadline during a query", func(t *testing.T) {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := pool.Exec(dctx, "SELECT SLEEP(1)")
		if got := sqldb.Classify(err); got != sqldb.ClassDeadlineExceeded {
			t.Errorf("deadline: %v classed %q", err, got)
		}
	})
	t.Run("a killed connection", func(t *testing.T) {
		victim, err := sqldb.ConnectMySQL(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer victim.Close(ctx)
		tx, err := victim.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS killed (id int PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, "KILL CONNECTION $1", connectionID(t, tx)); err != nil {
			t.Fatal(err)
		}
		err = tx.Commit(ctx)
		if got := sqldb.Classify(err); got != sqldb.ClassConnClosed || !sqldb.CommitOutcomeUnknown(err) {
			t.Errorf("a COMMIT on a killed connection: %v classed %q, want conn_closed, an unknown outcome", err, got)
		}
		if !victim.IsClosed() {
			t.Error("the killed connection says it is open")
		}
	})
	t.Run("a killed pooled connection", func(t *testing.T) {
		pc, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Release()
		if _, err := pool.Exec(ctx, "KILL CONNECTION $1", connectionID(t, pc)); err != nil {
			t.Fatal(err)
		}
		_, err = pc.Exec(ctx, "SELECT 1")
		if got := sqldb.Classify(err); got != sqldb.ClassConnClosed {
			t.Errorf("a statement on a killed pooled connection: %v classed %q, want conn_closed", err, got)
		}
		if !pc.IsClosed() {
			t.Error("the killed pooled connection says it is open")
		}
	})
	t.Run("a connection killed during a statement", func(t *testing.T) {
		victim, err := sqldb.ConnectMySQL(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer victim.Close(ctx)
		id := connectionID(t, victim)
		errs := make(chan error, 1)
		go func() {
			_, err := victim.Exec(ctx, "SELECT SLEEP(10)")
			errs <- err
		}()
		for sleeping := false; !sleeping; { // until the SLEEP has begun
			if err := pool.QueryRow(ctx, "SELECT count(*) = 1 FROM information_schema.PROCESSLIST WHERE ID = $1 AND INFO LIKE 'SELECT SLEEP%'", id).Scan(&sleeping); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pool.Exec(ctx, "KILL CONNECTION $1", id); err != nil {
			t.Fatal(err)
		}
		err = <-errs
		if got := sqldb.Classify(err); got != sqldb.ClassConnClosed || !sqldb.CommitOutcomeUnknown(err) {
			t.Errorf("a statement whose connection was killed: %v classed %q, want conn_closed, an unknown outcome", err, got)
		}
	})
	t.Run("a closed pool", func(t *testing.T) {
		p, err := sqldb.OpenMySQL(o)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		_, err = p.Acquire(ctx)
		if got := sqldb.Classify(err); got != sqldb.ClassPoolClosed {
			t.Errorf("an acquire from a closed pool: %v classed %q", err, got)
		}
	})
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("the test's context ended")
	}
}
