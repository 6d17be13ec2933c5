package sqldb

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The pgx adapters. Each is a struct around one pointer, which an interface holds without
// an allocation: acquiring a pooled connection and beginning a transaction on it (the
// request path's PoolConn and Tx) cost what pgx's own calls cost. A transaction begun on a
// *pgx.Conn, or adapted by PgxTx from another pgx.Tx, costs one allocation more.

// PgxConn adapts a pgx connection.
func PgxConn(c *pgx.Conn) Conn { return pgxConn{pgxStatements[*pgx.Conn]{c}} }

// PgxPool adapts a pgx pool.
func PgxPool(p *pgxpool.Pool) Pool { return pgxPool{pgxStatements[*pgxpool.Pool]{p}} }

// PgxTx adapts a pgx transaction (pgx's own, or one of the caller's that implements
// pgx.Tx: AsPgx hands back the very value given).
func PgxTx(tx pgx.Tx) Tx {
	if t, ok := tx.(*pgxpool.Tx); ok {
		return pgxPoolTx{pgxStatements[*pgxpool.Tx]{t}}
	}
	return &pgxTx{pgxStatements[pgx.Tx]{tx}}
}

// Pgx is what every pgx handle offers (*pgx.Conn, *pgxpool.Pool, *pgxpool.Conn, pgx.Tx):
// the PostgreSQL-only path of a caller that needs COPY (CopyFrom), a pipelined batch
// (SendBatch) or a savepoint (Begin on a transaction), or the concrete handle itself (a type
// assertion on the value AsPgx returns).
type Pgx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	Begin(ctx context.Context) (pgx.Tx, error)
}

// AsPgx is the pgx handle under h, a handle of this package's pgx adapters: a *pgx.Conn
// (PgxConn), a *pgxpool.Pool (PgxPool), a *pgxpool.Conn (its Acquire) or a pgx.Tx (a Begin
// of theirs, or PgxTx's). ok is false for any other h (a MySQL handle): the caller takes its
// portable path, or refuses the database.
func AsPgx(h any) (p Pgx, ok bool) {
	switch h := h.(type) {
	case pgxPoolTx:
		return h.p, true
	case watchedTx:
		return h.w.tx, true
	case watchedConn:
		return h.w.conn, true
	case *pgxTx:
		return h.p, true
	case pgxPoolConn:
		return h.p, true
	case pgxPool:
		return h.p, true
	case pgxConn:
		return h.p, true
	}
	return nil, false
}

// RequirePgx is AsPgx for a path written for PostgreSQL only (COPY, a pipelined batch, arrays
// of pgx's types): the error says so when h is not a pgx handle.
func RequirePgx(h any) (Pgx, error) {
	if p, ok := AsPgx(h); ok {
		return p, nil
	}
	if d, ok := h.(interface{ Dialect() Dialect }); ok {
		return nil, fmt.Errorf("sqldb: this is written for PostgreSQL only, and the database is %s", d.Dialect())
	}
	return nil, fmt.Errorf("sqldb: this is written for PostgreSQL only, and %T is not a pgx handle", h)
}

// pgxQuerier is what pgxStatements runs statements on.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgxStatements is a Querier on a pgx handle: pgx's rows and row are this package's as they
// are, and the statements and arguments go to pgx untouched.
type pgxStatements[P pgxQuerier] struct{ p P }

func (s pgxStatements[P]) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := s.p.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (s pgxStatements[P]) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	rows, err := s.p.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (s pgxStatements[P]) QueryRow(ctx context.Context, sql string, args ...any) Row {
	return s.p.QueryRow(ctx, sql, args...)
}

func (pgxStatements[P]) Dialect() Dialect { return Postgres }

// pgxOn is pgxStatements on any pgx handle, for an adapter that picks its handle per call
// (watchedConn, watchedTx).
func pgxOn(q pgxQuerier) pgxStatements[pgxQuerier] { return pgxStatements[pgxQuerier]{q} }

type pgxConn struct{ pgxStatements[*pgx.Conn] }

func (c pgxConn) Begin(ctx context.Context) (Tx, error) { return beginPgx(c.p.Begin(ctx)) }
func (c pgxConn) IsClosed() bool                        { return c.p.IsClosed() }
func (c pgxConn) Close(ctx context.Context) error       { return c.p.Close(ctx) }

type pgxPool struct{ pgxStatements[*pgxpool.Pool] }

func (p pgxPool) Begin(ctx context.Context) (Tx, error) { return beginPgx(p.p.Begin(ctx)) }
func (p pgxPool) MaxConns() int                         { return int(p.p.Config().MaxConns) }
func (p pgxPool) Close()                                { p.p.Close() }

func (p pgxPool) Acquire(ctx context.Context) (PoolConn, error) {
	c, err := p.p.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return pgxPoolConn{pgxStatements[*pgxpool.Conn]{c}}, nil
}

type pgxPoolConn struct{ pgxStatements[*pgxpool.Conn] }

func (c pgxPoolConn) Begin(ctx context.Context) (Tx, error) { return beginPgx(c.p.Begin(ctx)) }
func (c pgxPoolConn) IsClosed() bool                        { return c.p.Conn().IsClosed() }
func (c pgxPoolConn) Release()                              { c.p.Release() }

// beginPgx adapts the transaction a pgx Begin returned.
func beginPgx(tx pgx.Tx, err error) (Tx, error) {
	if err != nil {
		return nil, err
	}
	return PgxTx(tx), nil
}

// pgxPoolTx is a transaction on a pooled connection (pgxpool's Begin), the request path's.
type pgxPoolTx struct{ pgxStatements[*pgxpool.Tx] }

func (t pgxPoolTx) Commit(ctx context.Context) error   { return t.p.Commit(ctx) }
func (t pgxPoolTx) Rollback(ctx context.Context) error { return t.p.Rollback(ctx) }

// pgxTx is any other pgx transaction.
type pgxTx struct{ pgxStatements[pgx.Tx] }

func (t *pgxTx) Commit(ctx context.Context) error   { return t.p.Commit(ctx) }
func (t *pgxTx) Rollback(ctx context.Context) error { return t.p.Rollback(ctx) }

// WatchOnce is c with the statements it and the transactions it begins run under ctx itself
// watched once, here, for ctx's end, and the stop to call once they are over (before c is
// released): cancelling ctx interrupts them as it would interrupt each. pgx watches the
// context of every statement that can be cancelled itself: a callback registered on it, a
// channel, two locks and four allocations a statement. Here they run under a context that
// cannot be, and a cancel of ctx sets a deadline in the past on the connection's socket, as
// pgx's own watch does: what waits on the server fails at once, pgx closes the connection,
// and Release drops it. A statement run under another context (one derived from ctx, with a
// deadline of its own) keeps it, watched by pgx as before, and so do those run through the
// pgx handle under it (AsPgx). stop clears the deadline again when the connection was not
// closed (ctx ended after the last statement). A handle that is not pgx's (database/sql
// watches a transaction's context once already), or a ctx that cannot be cancelled, is
// returned as it is.
func WatchOnce(ctx context.Context, c PoolConn) (PoolConn, func()) {
	pc, ok := c.(pgxPoolConn)
	if !ok || ctx.Done() == nil {
		return c, func() {}
	}
	w := newWatch(ctx, pc.p)
	return watchedConn{w}, w.unwatch
}

// WatchPgxOnce is WatchOnce for code that runs pgx's own API on a pooled connection (package
// queue's batches, begun with their first statement): a statement run under use(ctx) on conn,
// or on a transaction of it, is watched once, here, for ctx's end; use of any other context is
// that context, watched by pgx. stop, called once the statements under ctx are over and
// before conn is released, ends the watch. A ctx that cannot be cancelled is used as it is.
func WatchPgxOnce(ctx context.Context, conn *pgxpool.Conn) (use func(context.Context) context.Context, stop func()) {
	if ctx.Done() == nil {
		return func(c context.Context) context.Context { return c }, func() {}
	}
	w := newWatch(ctx, conn)
	return w.use, w.unwatch
}

// newWatch watches ctx for conn's statements run under it.
func newWatch(ctx context.Context, conn *pgxpool.Conn) *watch {
	w := &watch{ctx: ctx, stmts: context.WithoutCancel(ctx), conn: conn, socket: conn.Conn().PgConn().Conn()}
	w.fired.Add(1)
	w.stop = context.AfterFunc(ctx, w.interrupt)
	return w
}

// watch is WatchOnce's: the context it watches, the one statements run under instead, the
// connection and its socket, and the transaction begun on it.
type watch struct {
	ctx, stmts context.Context
	conn       *pgxpool.Conn
	tx         pgx.Tx
	socket     net.Conn
	stop       func() bool
	fired      sync.WaitGroup
}

// use is the context to run a statement given ctx under: the unwatched one for the watched.
func (w *watch) use(ctx context.Context) context.Context {
	if ctx == w.ctx {
		return w.stmts
	}
	return ctx
}

func (w *watch) interrupt() {
	defer w.fired.Done()
	_ = w.socket.SetDeadline(time.Now())
}

func (w *watch) unwatch() {
	if w.stop() {
		return
	}
	w.fired.Wait()
	if !w.conn.Conn().IsClosed() {
		_ = w.socket.SetDeadline(time.Time{})
	}
}

// watchedConn is a pooled connection under WatchOnce.
type watchedConn struct{ w *watch }

func (c watchedConn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return pgxOn(c.w.conn).Exec(c.w.use(ctx), sql, args...)
}

func (c watchedConn) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	return pgxOn(c.w.conn).Query(c.w.use(ctx), sql, args...)
}

func (c watchedConn) QueryRow(ctx context.Context, sql string, args ...any) Row {
	return pgxOn(c.w.conn).QueryRow(c.w.use(ctx), sql, args...)
}

func (watchedConn) Dialect() Dialect { return Postgres }
func (c watchedConn) IsClosed() bool { return c.w.conn.Conn().IsClosed() }
func (c watchedConn) Release()       { c.w.conn.Release() }

func (c watchedConn) Begin(ctx context.Context) (Tx, error) {
	tx, err := c.w.conn.Begin(c.w.use(ctx))
	if err != nil {
		return nil, err
	}
	c.w.tx = tx
	return watchedTx{c.w}, nil
}

// watchedTx is a transaction begun on a watchedConn.
type watchedTx struct{ w *watch }

func (t watchedTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return pgxOn(t.w.tx).Exec(t.w.use(ctx), sql, args...)
}

func (t watchedTx) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	return pgxOn(t.w.tx).Query(t.w.use(ctx), sql, args...)
}

func (t watchedTx) QueryRow(ctx context.Context, sql string, args ...any) Row {
	return pgxOn(t.w.tx).QueryRow(t.w.use(ctx), sql, args...)
}

func (watchedTx) Dialect() Dialect                     { return Postgres }
func (t watchedTx) Commit(ctx context.Context) error   { return t.w.tx.Commit(t.w.use(ctx)) }
func (t watchedTx) Rollback(ctx context.Context) error { return t.w.tx.Rollback(t.w.use(ctx)) }
