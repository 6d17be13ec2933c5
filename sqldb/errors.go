package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// Error classes (Classify) that are not a server's own code.
const (
	ClassContextCanceled  = "context_canceled"
	ClassDeadlineExceeded = "deadline_exceeded"
	ClassPoolClosed       = "pool_closed"
	ClassConnClosed       = "conn_closed"
	ClassConnError        = "conn_error"
	ClassOther            = "other"
)

// MySQL's errors are classed "mysql-" and the server's error number; these are InnoDB's two
// lock errors, each a class of its own.
const (
	// ClassMySQLDeadlock is ER_LOCK_DEADLOCK: InnoDB found a deadlock (or a wait-for list
	// too long to search) and rolled the transaction back.
	ClassMySQLDeadlock = "mysql-1213"
	// ClassMySQLLockWaitTimeout is ER_LOCK_WAIT_TIMEOUT: a row lock was not granted within
	// innodb_lock_wait_timeout; the statement was rolled back, the transaction goes on.
	ClassMySQLLockWaitTimeout = "mysql-1205"
	// ClassMariaDBStatementTimeout is ER_STATEMENT_TIMEOUT: MariaDB's max_statement_time
	// ended the statement.
	ClassMariaDBStatementTimeout = "mysql-1969"
	// ClassMySQLServerShutdown is ER_SERVER_SHUTDOWN: the server is shutting down (a
	// restart), the statement was not run to its end.
	ClassMySQLServerShutdown = "mysql-1053"
	// ClassMariaDBConnectionKilled is ER_CONNECTION_KILLED: MariaDB's KILL CONNECTION ended
	// the session while its statement ran.
	ClassMariaDBConnectionKilled = "mysql-1927"
)

// mysqlClassPrefix starts a MySQL server error's class.
const mysqlClassPrefix = "mysql-"

// Classify names the class of err for error counts and retries, checking in this order:
//   - the server's own word, the most precise: a PostgreSQL error's SQLSTATE ("40P01"
//     deadlock, "55P03" lock timeout, "57014" statement cancelled, ...), a MySQL error's
//     number as "mysql-1213" (deadlock), "mysql-1205" (lock wait timeout), ... — but the
//     client's own 2006 (server gone) and 2013 (connection lost) are conn_closed;
//   - "context_canceled", "deadline_exceeded";
//   - "pool_closed" for an acquire from a closed pool (pgxpool's, database/sql's);
//   - "conn_closed" when the connection is gone (io.EOF, pgconn's "conn closed", the mysql
//     driver's "invalid connection", database/sql's ErrConnDone, a reset, broken or closed
//     socket);
//   - "conn_error" for other connection trouble (connect errors, net errors, and errors a
//     driver says came before anything was sent: pgconn.SafeToRetry, driver.ErrBadConn);
//   - "other".
//
// Classify(nil) is "".
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		pgErr      *pgconn.PgError
		myErr      *mysql.MySQLError
		connectErr *pgconn.ConnectError
		netErr     net.Error
	)
	switch {
	case errors.As(err, &pgErr) && pgErr.Code != "":
		return pgErr.Code
	case errors.As(err, &myErr):
		if myErr.Number == 2006 || myErr.Number == 2013 {
			return ClassConnClosed
		}
		return mysqlClassPrefix + strconv.Itoa(int(myErr.Number))
	case errors.Is(err, context.Canceled):
		return ClassContextCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ClassDeadlineExceeded
	case isClosedPool(err):
		return ClassPoolClosed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		return ClassConnClosed
	case errors.As(err, &connectErr), errors.As(err, &netErr), pgconn.SafeToRetry(err), errors.Is(err, driver.ErrBadConn):
		return ClassConnError
	}
	return ClassOther
}

// IsServerClass reports whether class names a server's own error, as Classify writes it: a
// SQLSTATE (five digits or capital letters, e.g. 40P01) or "mysql-" and an error number.
func IsServerClass(class string) bool {
	if n, ok := strings.CutPrefix(class, mysqlClassPrefix); ok {
		v, err := strconv.ParseUint(n, 10, 16)
		return err == nil && v > 0 && strconv.FormatUint(v, 10) == n
	}
	if len(class) != 5 {
		return false
	}
	for _, c := range class {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// isClosedPool recognises an acquire from a closed pool: puddle.ErrClosedPool, which pgxpool
// returns unwrapped, and database/sql's unexported "database is closed". Both are matched by
// text: neither is exported by a package of ours to match.
func isClosedPool(err error) bool {
	for err != nil {
		if s := err.Error(); s == "closed pool" || s == "sql: database is closed" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// MySQL's numbers of a duplicate key (ER_DUP_ENTRY, and ER_DUP_ENTRY_WITH_KEY_NAME).
const (
	mysqlDupEntry        = 1062
	mysqlDupEntryWithKey = 1586
)

// IsUniqueViolation says whether err is a unique key's violation: SQLSTATE 23505 on
// PostgreSQL, error 1062 (or 1586) on MySQL.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == pgerrcode.UniqueViolation
	}
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && (myErr.Number == mysqlDupEntry || myErr.Number == mysqlDupEntryWithKey)
}

// CommitOutcomeUnknown says whether a failed COMMIT may have committed: a server's error (a
// PostgreSQL or MySQL error) means the server refused it; anything else (a broken
// connection, a timeout) may have come before or after the server committed.
func CommitOutcomeUnknown(err error) bool {
	var pgErr *pgconn.PgError
	var myErr *mysql.MySQLError
	return !errors.As(err, &pgErr) && !errors.As(err, &myErr)
}
