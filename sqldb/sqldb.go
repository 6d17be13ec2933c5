// Package sqldb owns the SQL handles that the kit and a service's queue write through,
// whichever database is under them: PostgreSQL through pgx, or MySQL and MariaDB through
// database/sql and github.com/go-sql-driver/mysql. A suite, a queue writer or a flush loop
// takes a Querier, a Tx, a Conn or a Pool from here and never learns which driver serves it;
// what the statements say is still each database's own (Dialect tells which one a handle
// speaks, so that code picks its statements once, not per statement).
//
// What it owns:
//   - the handles (Querier, Tx, Beginner, DB, Conn, Pool, PoolConn, Rows, Row) and the
//     helpers every caller needs on them (BeginFunc, Rollback, ForEachRow, CollectRows);
//   - the adapters: PgxConn, PgxPool and PgxTx over pgx; MySQLDB over database/sql, with
//     OpenMySQL and ConnectMySQL opening a pool and a dedicated connection with the kit's
//     driver settings (MySQLConnector);
//   - the escape hatches back to the driver (AsPgx, RequirePgx, AsSQL), for what only one
//     database has: PostgreSQL's COPY, pipelined batches, savepoints through pgx, a backend's
//     PID;
//   - placeholders: statements are written with $1..$n, as PostgreSQL takes them; the MySQL
//     adapters rewrite them to ? (skipping quoted strings, quoted names and comments, and
//     reordering or repeating the arguments as the $n's occur), once per statement text;
//   - the one classification of errors both drivers' callers retry and report by (Classify,
//     IsUniqueViolation, CommitOutcomeUnknown).
//
// The MySQL side always runs go-sql-driver/mysql with interpolateParams (a statement is one
// round trip, as pgx's default is: the driver otherwise prepares, executes and closes it,
// three), parseTime (DATETIME and TIMESTAMP scan into time.Time), clientFoundRows (an
// UPDATE's rows affected are the rows it matched, as PostgreSQL counts them, not the rows
// whose value changed), a dial function when the connections take a route of their own
// (MySQLOptions.Dial), and session variables set as the driver sets its DSN parameters
// (MySQLOptions.Session). Two things differ between the databases and stay visible: a failed
// statement aborts a PostgreSQL transaction (every later statement fails until ROLLBACK)
// while a MySQL transaction goes on (InnoDB rolls back the statement; a deadlock, 1213, rolls
// back the transaction); and database/sql holds the context a transaction began with for its
// whole life, rolling it back when that context ends, where pgx uses it for BEGIN only. On
// both, a transaction's Commit and Rollback return once their context ends, whether the
// server answered or not (database/sql's take no context: the MySQL adapters cut the
// connection's socket then, as pgx does; see Interrupter).
//
// It imports pgx, database/sql and the mysql driver, and nothing of this module: a service
// that uses the queue takes it along, and nothing else of the kit. It prints nothing.
package sqldb

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Dialect is the SQL a handle speaks.
type Dialect uint8

const (
	// Postgres is PostgreSQL's SQL (pgx).
	Postgres Dialect = iota + 1
	// MySQL is MySQL's and MariaDB's (go-sql-driver/mysql).
	MySQL
)

// String is the dialect's name: "postgresql" or "mysql".
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgresql"
	case MySQL:
		return "mysql"
	}
	return "unknown dialect"
}

// QuoteIdent quotes a name, optionally qualified (schema, table), for d: "a"."b" on
// PostgreSQL, `a`.`b` on MySQL, the quote doubled inside a part and NUL bytes dropped.
func (d Dialect) QuoteIdent(parts ...string) string {
	q := `"`
	if d == MySQL {
		q = "`"
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(q)
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "\x00", ""), q, q+q))
		b.WriteString(q)
	}
	return b.String()
}

// Row is one row a QueryRow returns; Scan fails with ErrNoRows when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Rows are a query's rows: Next, Scan each, then Err; Close ends the read early (it is safe
// to call more than once, and Next closes them at the end).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// ErrNoRows is what a Row's Scan returns when the query returned no row (pgx's ErrNoRows
// wraps it too: errors.Is finds it from either driver).
var ErrNoRows = sql.ErrNoRows

// Querier runs statements, written with $1..$n placeholders, and says its dialect.
// Exec returns the rows the statement affected (for an UPDATE, the rows it matched).
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (rowsAffected int64, err error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Dialect() Dialect
}

// Tx is a transaction. Exactly one of Commit and Rollback ends it; a Rollback after either
// is harmless (its error says the transaction was closed).
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Beginner begins transactions, and says in which dialect, so that a writer chooses its
// statements before its first transaction.
type Beginner interface {
	Begin(ctx context.Context) (Tx, error)
	Dialect() Dialect
}

// DB is what a dedicated connection and a pool both are: statements and transactions.
type DB interface {
	Querier
	Beginner
}

// Conn is a dedicated connection (the engine's own, a flush loop's): not safe for concurrent
// use.
type Conn interface {
	DB
	// IsClosed reports whether the connection is known to be gone (closed, or lost).
	IsClosed() bool
	Close(ctx context.Context) error
}

// Pool is a pool of connections, safe for concurrent use: a statement or a transaction takes
// a connection for as long as it runs, and Acquire lends one out.
type Pool interface {
	DB
	Acquire(ctx context.Context) (PoolConn, error)
	// MaxConns is the most connections the pool holds at once (0: no bound).
	MaxConns() int
	Close()
}

// PoolConn is a connection lent out by a Pool until Release. A transaction begun on it ends
// before Release.
type PoolConn interface {
	DB
	// IsClosed reports whether the connection is known to be gone (lost): a caller that keeps
	// it across statements gives it back and takes another.
	IsClosed() bool
	Release()
}

// BeginFunc runs fn in a transaction on db: committed when fn returns nil, rolled back
// otherwise (fn's error is returned).
func BeginFunc(ctx context.Context, db Beginner, fn func(Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		Rollback(ctx, tx)
		return err
	}
	return tx.Commit(ctx)
}

// rollbackTimeout bounds a rollback issued after ctx was done.
const rollbackTimeout = 5 * time.Second

// Rollback rolls tx back on a live context even when ctx is done (its cancellation may be why
// the transaction failed), so that a pooled connection goes back to its pool instead of
// being closed. Its error is dropped: the one that led to it is the one worth reporting.
func Rollback(ctx context.Context, tx Tx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
}

// ForEachRow scans every row of rows into dest and calls fn after each; it closes rows and
// returns the first error: a scan's, fn's, or the query's.
func ForEachRow(rows Rows, dest []any, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CollectRows scans each row's one column into a T, closes rows and returns the values. Each
// row is scanned in place, into the slice it returns (no value of its own on the heap).
func CollectRows[T any](rows Rows) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		var zero T
		out = append(out, zero)
		if err := rows.Scan(&out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
