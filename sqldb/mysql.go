package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"maps"
	"net"

	"github.com/go-sql-driver/mysql"
)

// MySQLOptions say how the kit reaches a MySQL or MariaDB server (OpenMySQL, ConnectMySQL).
type MySQLOptions struct {
	// Config is the server, the user and the database (mysql.ParseDSN's, or mysql.NewConfig
	// filled in). It is copied, and the kit's settings are applied to the copy: see the
	// package doc.
	Config *mysql.Config
	// Dial, when set, carries every connection to the server (a delaying proxy's route);
	// nil: the driver dials the Config's address itself.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Session are session variables set on every connection as it opens, by name, each value
	// a SQL literal (a string quoted: "'READ-COMMITTED'").
	Session map[string]string
	// MaxConns bounds OpenMySQL's pool (0: no bound), idle connections included.
	MaxConns int
}

// MySQLConnector is a database/sql connector for o: the driver with the kit's settings. Its
// connections are Interrupters (a transaction's COMMIT and ROLLBACK end with their context),
// but over a network of a dial function registered with the driver itself
// (mysql.RegisterDialContext), which only the driver reaches: give it as o.Dial instead.
func MySQLConnector(o MySQLOptions) (driver.Connector, error) {
	if o.Config == nil {
		return nil, errors.New("sqldb: MySQLOptions.Config is required")
	}
	cfg := o.Config.Clone()
	cfg.InterpolateParams = true // one round trip a statement, not prepare, execute and close
	cfg.ParseTime = true
	cfg.ClientFoundRows = true // rows matched, as PostgreSQL counts an UPDATE's rows
	cfg.Logger = &mysql.NopLogger{}
	switch {
	case o.Dial != nil:
		cfg.DialFunc = keepSocket(o.Dial)
	case plainNets[cfg.Net]:
		cfg.DialFunc = keepSocket((&net.Dialer{}).DialContext) // the driver's own dial
	}
	if len(o.Session) > 0 {
		params := maps.Clone(cfg.Params)
		if params == nil {
			params = map[string]string{}
		}
		maps.Copy(params, o.Session)
		cfg.Params = params
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return mysqlConnector{c}, nil
}

// OpenMySQL opens a pool on o (at most o.MaxConns connections). Connections open as they are
// needed: a server that cannot be reached fails the first statement, not OpenMySQL.
func OpenMySQL(o MySQLOptions) (Pool, error) {
	c, err := MySQLConnector(o)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(max(o.MaxConns, 2))
	return MySQLDB(db), nil
}

// ConnectMySQL opens a dedicated connection on o (o.MaxConns is not read): its Close closes
// it for good.
func ConnectMySQL(ctx context.Context, o MySQLOptions) (Conn, error) {
	c, err := MySQLConnector(o)
	if err != nil {
		return nil, err
	}
	return ConnectMySQLOn(ctx, c)
}

// ConnectMySQLOn opens a dedicated connection through c (MySQLConnector's, or a connector
// around one): its Close closes it for good.
func ConnectMySQLOn(ctx context.Context, c driver.Connector) (Conn, error) {
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &mysqlConn{sqlStatements[*sql.Conn]{conn}, db}, nil
}

// MySQLDB adapts a database/sql pool opened on go-sql-driver/mysql. The kit's settings are
// OpenMySQL's: a *sql.DB opened otherwise runs as its DSN says (without interpolateParams a
// statement costs three round trips).
func MySQLDB(db *sql.DB) Pool { return mysqlDB{sqlStatements[*sql.DB]{db}} }

// SQL is what every database/sql handle offers (*sql.DB, *sql.Conn, *sql.Tx): the driver's
// own statements, with its ? placeholders (no rewriting of $n), for what only MySQL has.
type SQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// AsSQL is the database/sql handle under h, a handle of this package's MySQL adapters: a
// *sql.DB (MySQLDB, OpenMySQL), a *sql.Conn (ConnectMySQL's, a pool's Acquire) or a *sql.Tx
// (a Begin of theirs). ok is false for any other h.
func AsSQL(h any) (s SQL, ok bool) {
	switch h := h.(type) {
	case *mysqlTx:
		return h.p, true
	case mysqlPoolConn:
		return h.p, true
	case mysqlDB:
		return h.p, true
	case *mysqlConn:
		return h.p, true
	}
	return nil, false
}

// sqlStatements is a Querier on a database/sql handle: each statement's $n placeholders
// become ?s (rebind), its arguments in their order.
type sqlStatements[P SQL] struct{ p P }

func (s sqlStatements[P]) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	query, args, err := rebind(query, args)
	if err != nil {
		return 0, err
	}
	res, err := s.p.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s sqlStatements[P]) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	query, args, err := rebind(query, args)
	if err != nil {
		return nil, err
	}
	rows, err := s.p.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (s sqlStatements[P]) QueryRow(ctx context.Context, query string, args ...any) Row {
	query, args, err := rebind(query, args)
	if err != nil {
		return errRow{err}
	}
	return s.p.QueryRowContext(ctx, query, args...)
}

func (sqlStatements[P]) Dialect() Dialect { return MySQL }

// sqlRows are database/sql's rows as Rows: Close's error, which database/sql reports when it
// could not discard the rows left, is dropped (the query's own error is Err's).
type sqlRows struct{ r *sql.Rows }

func (r sqlRows) Next() bool             { return r.r.Next() }
func (r sqlRows) Scan(dest ...any) error { return r.r.Scan(dest...) }
func (r sqlRows) Err() error             { return r.r.Err() }
func (r sqlRows) Close()                 { _ = r.r.Close() }

// errRow is a row whose statement was never sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type mysqlDB struct{ sqlStatements[*sql.DB] }

// Begin takes a connection of the pool and begins on it, as database/sql's own BeginTx does,
// but keeping it (SQLConn): the transaction's session is known. Commit or Rollback gives it
// back.
func (d mysqlDB) Begin(ctx context.Context) (Tx, error) {
	c, err := d.p.Conn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := beginOn(ctx, c)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	tx.release = true
	return tx, nil
}
func (d mysqlDB) MaxConns() int { return d.p.Stats().MaxOpenConnections }
func (d mysqlDB) Close()        { _ = d.p.Close() }

func (d mysqlDB) Acquire(ctx context.Context) (PoolConn, error) {
	c, err := d.p.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return mysqlPoolConn{sqlStatements[*sql.Conn]{c}}, nil
}

type mysqlPoolConn struct{ sqlStatements[*sql.Conn] }

func (c mysqlPoolConn) Begin(ctx context.Context) (Tx, error) { return beginTx(ctx, c.p) }
func (c mysqlPoolConn) IsClosed() bool                        { return sqlConnClosed(c.p) }
func (c mysqlPoolConn) Release()                              { _ = c.p.Close() }

// mysqlConn is ConnectMySQL's dedicated connection: the one connection of a db of its own,
// which Close closes with it.
type mysqlConn struct {
	sqlStatements[*sql.Conn]
	db *sql.DB
}

func (c *mysqlConn) Begin(ctx context.Context) (Tx, error) { return beginTx(ctx, c.p) }

func (c *mysqlConn) IsClosed() bool { return sqlConnClosed(c.p) }

// sqlConnClosed asks database/sql for c's driver connection: gone once it was closed, or once
// the driver found it broken (go-sql-driver's connection checks itself: driver.Validator).
func sqlConnClosed(c *sql.Conn) bool {
	err := c.Raw(func(dc any) error {
		if v, ok := dc.(driver.Validator); ok && !v.IsValid() {
			return driver.ErrBadConn
		}
		return nil
	})
	return err != nil
}

func (c *mysqlConn) Close(context.Context) error { return errors.Join(c.p.Close(), c.db.Close()) }

// beginOn begins a transaction on the connection c, which it keeps (SQLConn). The
// transaction ends by Commit or Rollback alone, as pgx's does: database/sql would roll it back
// when the context it began with ends, but a caller may begin on a context that ends before
// the COMMIT (the queue stages a batch on one and commits it on another). Its BEGIN, each
// statement, and its COMMIT or ROLLBACK are each watched by their own context (txWatch).
func beginOn(ctx context.Context, c *sql.Conn) (*mysqlTx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var dc any
	_ = c.Raw(func(d any) error { dc = d; return nil })
	t := &mysqlTx{conn: c}
	t.watch(dc)
	var tx *sql.Tx
	err := t.during(ctx, "BEGIN", func() (err error) {
		tx, err = c.BeginTx(context.WithoutCancel(ctx), nil)
		return err
	})
	if err != nil {
		if tx != nil {
			_ = tx.Rollback() // the BEGIN's reply was cut: the connection is bad, and dropped
		}
		return nil, err
	}
	t.sqlStatements = sqlStatements[*sql.Tx]{tx}
	return t, nil
}

// beginTx is beginOn as a Tx (a nil *mysqlTx is no nil Tx).
func beginTx(ctx context.Context, c *sql.Conn) (Tx, error) {
	t, err := beginOn(ctx, c)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mysqlTx is a transaction and the connection it runs on, given back when it ends if release
// (the pool's Begin took it).
type mysqlTx struct {
	sqlStatements[*sql.Tx]
	txWatch
	conn    *sql.Conn
	release bool
}

// SQLConn is the database/sql connection h runs on: a pool's lent connection, a dedicated
// connection, or a transaction. Its Raw reaches the driver's connection: what identifies a
// session.
func SQLConn(h any) (*sql.Conn, bool) {
	switch h := h.(type) {
	case *mysqlTx:
		return h.conn, true
	case mysqlPoolConn:
		return h.p, true
	case *mysqlConn:
		return h.p, true
	}
	return nil, false
}

// Commit commits, and returns once ctx ends if the COMMIT's reply has not come (txWatch):
// with an error that wraps ctx's, whose outcome is unknown (CommitOutcomeUnknown). On a
// context already done it sends no COMMIT, as pgx does: it rolls back and says why.
func (t *mysqlTx) Commit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		Rollback(ctx, t) // bounded as Rollback bounds it
		return err
	}
	return t.giveBack(t.end(ctx, "COMMIT", t.p.Commit))
}

// Rollback rolls back, and returns once ctx ends if the ROLLBACK's reply has not come.
func (t *mysqlTx) Rollback(ctx context.Context) error {
	return t.giveBack(t.end(ctx, "ROLLBACK", t.p.Rollback))
}

// giveBack gives the pool's connection back once the transaction is over.
func (t *mysqlTx) giveBack(err error) error {
	if t.release {
		_ = t.conn.Close() // once more after the first: sql.ErrConnDone, dropped
	}
	return err
}
