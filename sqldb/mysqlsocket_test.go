package sqldb_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mutedConn is a socket to the server whose writes, once mute is set, go nowhere (though
// reported written): the server never sees what follows and never answers, as across a
// partition that never heals.
type mutedConn struct {
	net.Conn
	mute *atomic.Bool
}

func (c mutedConn) Write(b []byte) (int, error) {
	if c.mute.Load() {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// mutable are options of a fresh database whose connections fall silent when mute is set.
func mutable(t *testing.T) (sqldb.MySQLOptions, *atomic.Bool) {
	t.Helper()
	o := mysqlOptions(t)
	mute := new(atomic.Bool)
	o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return mutedConn{c, mute}, nil
	}
	return o, mute
}

// within runs f and fails the test when it has not returned after d (f is then left waiting).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still waits %s later", what, d)
	}
}

// A transaction's end whose reply never comes returns once its context ends: for a COMMIT,
// an error of the context's class whose outcome is unknown. database/sql's Tx.Commit and
// Tx.Rollback take no context, and go-sql-driver/mysql watches none for them: what makes
// --request-timeout end a request hung in its COMMIT on MySQL. The connection is then dropped
// and the handle works on with another.
func TestMySQLTransactionEndsWithItsContext(t *testing.T) {
	o, mute := mutable(t)
	o.MaxConns = 2
	pool, err := sqldb.OpenMySQL(o)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	// Each begins a transaction and says how to give back what it took.
	begins := map[string]func(context.Context) (sqldb.Tx, func(*testing.T), error){
		"the pool's": func(ctx context.Context) (sqldb.Tx, func(*testing.T), error) {
			tx, err := pool.Begin(ctx)
			return tx, func(*testing.T) {}, err
		},
		"a lent connection's": func(ctx context.Context) (sqldb.Tx, func(*testing.T), error) {
			pc, err := pool.Acquire(ctx)
			if err != nil {
				return nil, nil, err
			}
			tx, err := pc.Begin(ctx)
			return tx, func(t *testing.T) {
				if !pc.IsClosed() {
					t.Error("the lent connection whose transaction was cut says it is open")
				}
				pc.Release()
			}, err
		},
		"a dedicated connection's": func(ctx context.Context) (sqldb.Tx, func(*testing.T), error) {
			conn, err := sqldb.ConnectMySQL(ctx, o)
			if err != nil {
				return nil, nil, err
			}
			tx, err := conn.Begin(ctx)
			return tx, func(t *testing.T) {
				if !conn.IsClosed() {
					t.Error("the dedicated connection whose transaction was cut says it is open")
				}
				_ = conn.Close(context.Background())
			}, err
		},
	}
	id := 0
	for name, begin := range begins {
		for _, end := range []string{"COMMIT", "ROLLBACK"} {
			t.Run(name+" "+end, func(t *testing.T) {
				id++
				tx, release, err := begin(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(t.Context(), "INSERT INTO t VALUES ($1)", id); err != nil {
					t.Fatal(err)
				}
				mute.Store(true)
				defer mute.Store(false)
				ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
				defer cancel()
				within(t, 10*time.Second, end, func() {
					if end == "COMMIT" {
						err = tx.Commit(ctx)
					} else {
						err = tx.Rollback(ctx)
					}
					release(t)
				})
				mute.Store(false)
				if !errors.Is(err, context.DeadlineExceeded) || sqldb.Classify(err) != sqldb.ClassDeadlineExceeded {
					t.Errorf("%s without a reply: %v (class %s), want the context's deadline", end, err, sqldb.Classify(err))
				}
				if end == "COMMIT" && !sqldb.CommitOutcomeUnknown(err) {
					t.Errorf("a COMMIT without a reply: %v, want an unknown outcome", err)
				}
				var n int
				if err := pool.QueryRow(t.Context(), "SELECT COUNT(*) FROM t WHERE id = $1", id).Scan(&n); err != nil || n != 0 {
					t.Errorf("the row of a transaction whose end never reached the server: %d, %v", n, err)
				}
			})
		}
	}
	// The pool opened others: a transaction commits.
	if err := sqldb.BeginFunc(t.Context(), pool, func(tx sqldb.Tx) error {
		_, err := tx.Exec(t.Context(), "INSERT INTO t VALUES (1000)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// A transaction outlives the context it began on (as pgx's): on a silent server, its COMMIT
// on a context that ends returns then, and giving the connection back and closing the handles
// return all the same.
func TestMySQLTransactionOnASilentServer(t *testing.T) {
	o, mute := mutable(t)
	o.MaxConns = 1
	pool, err := sqldb.OpenMySQL(o)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqldb.ConnectMySQL(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	poolTx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	connTx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []sqldb.Tx{poolTx, connTx} {
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	mute.Store(true)
	defer mute.Store(false)
	cancel()
	within(t, 10*time.Second, "ending the abandoned transactions", func() {
		for _, tx := range []sqldb.Tx{poolTx, connTx} {
			cctx, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err := tx.Commit(cctx)
			stop()
			if !errors.Is(err, context.DeadlineExceeded) || !sqldb.CommitOutcomeUnknown(err) {
				t.Errorf("COMMIT on a silent server: %v, want its context's end, its outcome unknown", err)
			}
		}
	})
	within(t, 10*time.Second, "closing the handles", func() {
		pool.Close()
		_ = conn.Close(context.Background())
	})
}

// A transaction whose context ends after its COMMIT leaves its connection as it was: the
// watch on the context stops with the transaction.
func TestMySQLContextEndsAfterTheCommit(t *testing.T) {
	o := mysqlOptions(t)
	conn, err := sqldb.ConnectMySQL(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i := range 20 {
		ctx, cancel := context.WithCancel(t.Context())
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	time.Sleep(50 * time.Millisecond) // a late cut would have happened by now
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil || conn.IsClosed() {
		t.Errorf("the connection after its transactions' contexts ended: %v (closed %v)", err, conn.IsClosed())
	}
}
