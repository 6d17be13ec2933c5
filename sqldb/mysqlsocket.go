package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// A MySQL transaction's end and the context it runs under.
//
// go-sql-driver/mysql watches the context of BEGIN and of every statement (ExecContext,
// QueryContext): when it ends, the driver closes the connection's socket. It watches none for
// COMMIT and ROLLBACK: database/sql's Tx.Commit and Tx.Rollback take no context, and neither
// does the ROLLBACK database/sql sends itself when the context a transaction began with ends.
// On a server that stops answering (a partition that never heals) they would wait for ever,
// and so would whatever then gives the connection back (database/sql's Conn.Close waits for
// the transaction). pgx sets a deadline in the past on a connection's socket when a
// statement's context ends; the MySQL adapters do the same for the statements the driver does
// not watch: a connection of MySQLConnector's keeps its socket (MySQLDriverConn), a
// transaction takes the connection's Interrupt as it begins (txWatch), and BEGIN, and then
// COMMIT or ROLLBACK, each run with a context.AfterFunc on their own context that interrupts
// the connection if it ends before they return (txWatch.during). BEGIN runs under a context
// that is never cancelled (the transaction outlives it, as pgx's does), watched that way.
// The read fails, the driver closes the connection and database/sql discards it; the error
// says the context's end. Nothing is added to the round trips: two AfterFuncs a transaction,
// each stopped when its statement returns, no goroutine until a context ends.

// Interrupter is a driver connection that another goroutine can cut: what waits on its socket
// fails at once, and the connection is bad from then on (database/sql discards it). The
// connections of MySQLConnector are (MySQLDriverConn); a transaction on a connection that is
// none ends as database/sql ends it.
type Interrupter interface {
	Interrupt()
}

// socketKey is the key under which mysqlConnector's Connect hands its dial the place of the
// socket.
type socketKey struct{}

// dialFunc opens a connection to the server (MySQLOptions.Dial).
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// keepSocket wraps dial so that the socket it opens inside a Connect of mysqlConnector's is
// kept for the connection that Connect returns.
func keepSocket(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if slot, ok := ctx.Value(socketKey{}).(*net.Conn); ok && err == nil {
			*slot = c
		}
		return c, err
	}
}

// plainNets are the networks the driver dials with a net.Dialer of its own (any other name is
// a dial function registered with the driver, which only the driver reaches).
var plainNets = map[string]bool{"": true, "tcp": true, "tcp4": true, "tcp6": true, "unix": true}

// mysqlConnector is the driver's connector whose connections keep their socket
// (MySQLDriverConn).
type mysqlConnector struct{ driver.Connector }

func (c mysqlConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var sock net.Conn
	dc, err := c.Connector.Connect(context.WithValue(ctx, socketKey{}, &sock))
	if err != nil {
		return nil, err
	}
	return &MySQLDriverConn{Conn: dc, socket: sock}, nil
}

// MySQLDriverConn is a connection of MySQLConnector's as database/sql holds it: the driver's
// own, every interface of it handed through, and the socket under it, which Interrupt cuts.
// A connector that wraps MySQLConnector's to add to its connections embeds it in its own.
type MySQLDriverConn struct {
	driver.Conn
	socket net.Conn // nil over a network of a dial function registered with the driver
	cut    atomic.Bool
}

// longAgo is a deadline that has passed: a read or a write waiting on the socket fails.
var longAgo = time.Unix(1, 0)

// Interrupt sets a deadline in the past on the socket and marks the connection bad. Without
// a socket (see MySQLConnector) it only marks it bad.
func (c *MySQLDriverConn) Interrupt() {
	c.cut.Store(true)
	if c.socket != nil {
		_ = c.socket.SetDeadline(longAgo)
	}
}

func (c *MySQLDriverConn) IsValid() bool {
	return !c.cut.Load() && c.Conn.(driver.Validator).IsValid()
}

func (c *MySQLDriverConn) ResetSession(ctx context.Context) error {
	if c.cut.Load() {
		return driver.ErrBadConn
	}
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *MySQLDriverConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *MySQLDriverConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *MySQLDriverConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *MySQLDriverConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *MySQLDriverConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *MySQLDriverConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// The interfaces of go-sql-driver/mysql's connection a MySQLDriverConn hands through.
var (
	_ Interrupter               = (*MySQLDriverConn)(nil)
	_ driver.ConnBeginTx        = (*MySQLDriverConn)(nil)
	_ driver.ConnPrepareContext = (*MySQLDriverConn)(nil)
	_ driver.ExecerContext      = (*MySQLDriverConn)(nil)
	_ driver.QueryerContext     = (*MySQLDriverConn)(nil)
	_ driver.Pinger             = (*MySQLDriverConn)(nil)
	_ driver.SessionResetter    = (*MySQLDriverConn)(nil)
	_ driver.Validator          = (*MySQLDriverConn)(nil)
	_ driver.NamedValueChecker  = (*MySQLDriverConn)(nil)
)

// txWatch interrupts a transaction's connection when the context of its BEGIN, COMMIT or
// ROLLBACK ends before the server's reply comes (database/sql watches none of them once the
// transaction is begun on a context that cannot end; the driver watches each statement's).
type txWatch struct {
	conn  Interrupter // nil: not watched
	ended atomic.Bool // Commit or Rollback came
}

// watch makes the driver connection dc the one the transaction's ends interrupt.
func (w *txWatch) watch(dc any) {
	if in, ok := dc.(Interrupter); ok {
		w.conn = in
	}
}

// end runs the transaction's COMMIT or ROLLBACK, end, watching ctx. Only the first end
// watches; a Rollback after the end is database/sql's (ErrTxDone).
func (w *txWatch) end(ctx context.Context, what string, end func() error) error {
	if w.conn == nil || w.ended.Swap(true) {
		return end()
	}
	return w.during(ctx, what, end)
}

// during runs call, a BEGIN, COMMIT or ROLLBACK, and cuts the connection if ctx ends before it
// returns. A watch that fired, or is firing, has cut the connection: during makes sure it is
// marked bad before it goes back to its pool. A failure that the cut made (not the server's
// refusal) is returned as the context's end: for a COMMIT, an unknown outcome
// (CommitOutcomeUnknown), which it is.
func (w *txWatch) during(ctx context.Context, what string, call func() error) error {
	if w.conn == nil || ctx.Done() == nil {
		return call()
	}
	stop := context.AfterFunc(ctx, w.conn.Interrupt)
	err := call()
	if stop() {
		return err
	}
	w.conn.Interrupt() // its AfterFunc may not have run yet: the connection is bad from now
	var myErr *mysql.MySQLError
	if err == nil || errors.As(err, &myErr) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%s: %w (the connection was cut: %w)", what, ctxErr, err)
	}
	return err
}
