package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// safeToRetry stands for pgconn's unexported errors that happened before anything was sent.
type safeToRetry struct{}

func (safeToRetry) Error() string     { return "conn busy" }
func (safeToRetry) SafeToRetry() bool { return true }

func TestClassify(t *testing.T) {
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"deadlock", deadlock, "40P01"},
		{"lock timeout", &pgconn.PgError{Code: "55P03"}, "55P03"},
		{"statement cancelled", &pgconn.PgError{Code: "57014"}, "57014"},
		{"wrapped PgError", fmt.Errorf("transfer 7: %w", &pgconn.PgError{Code: "40001"}), "40001"},
		{"joined PgError", errors.Join(errors.New("rollback failed"), deadlock), "40P01"},
		{"PgError without code", &pgconn.PgError{}, ClassOther},
		{"MySQL deadlock", &mysql.MySQLError{Number: 1213, SQLState: [5]byte{'4', '0', '0', '0', '1'}}, ClassMySQLDeadlock},
		{"MySQL lock wait timeout", fmt.Errorf("update: %w", &mysql.MySQLError{Number: 1205}), ClassMySQLLockWaitTimeout},
		{"MySQL duplicate key", &mysql.MySQLError{Number: 1062}, "mysql-1062"},
		{"MySQL server gone", &mysql.MySQLError{Number: 2006}, ClassConnClosed},
		{"MySQL connection lost", &mysql.MySQLError{Number: 2013}, ClassConnClosed},
		{"context canceled", context.Canceled, ClassContextCanceled},
		{"wrapped context canceled", fmt.Errorf("acquire: %w", context.Canceled), ClassContextCanceled},
		{"deadline exceeded", context.DeadlineExceeded, ClassDeadlineExceeded},
		{"wrapped deadline exceeded", fmt.Errorf("query: %w", context.DeadlineExceeded), ClassDeadlineExceeded},
		{"server cancel wins over the context", fmt.Errorf("%w (%w)", &pgconn.PgError{Code: "57014"}, context.DeadlineExceeded), "57014"},
		{"EOF", io.EOF, ClassConnClosed},
		{"wrapped unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ClassConnClosed},
		{"pgconn conn closed", fmt.Errorf("exec: %w", pgconn.ErrConnClosed), ClassConnClosed},
		{"mysql invalid connection", fmt.Errorf("exec: %w", mysql.ErrInvalidConn), ClassConnClosed},
		{"database/sql connection done", sql.ErrConnDone, ClassConnClosed},
		{"reset by peer", fmt.Errorf("write: %w", syscall.ECONNRESET), ClassConnClosed},
		{"broken pipe", &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, ClassConnClosed},
		{"use of closed socket", &net.OpError{Op: "read", Err: net.ErrClosed}, ClassConnClosed},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ClassConnError},
		{"dns", &net.DNSError{Err: "no such host", Name: "db"}, ClassConnError},
		{"safe to retry", safeToRetry{}, ClassConnError},
		{"bad connection, nothing sent", driver.ErrBadConn, ClassConnError},
		{"closed pool", errors.New("closed pool"), ClassPoolClosed},
		{"wrapped closed pool", fmt.Errorf("acquire: %w", errors.New("closed pool")), ClassPoolClosed},
		{"closed database/sql pool", errors.New("sql: database is closed"), ClassPoolClosed},
		{"other", errors.New("constraint violated in Go code"), ClassOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestIsServerClass(t *testing.T) {
	for class, want := range map[string]bool{
		"40P01": true, "57014": true, "mysql-1213": true, "mysql-1205": true, "mysql-65535": true,
		"40p01": false, "4001": false, "mysql-": false, "mysql-0": false, "mysql-01213": false,
		"mysql-65536": false, "mysql-x": false, "conn_closed": false, "": false,
	} {
		if got := IsServerClass(class); got != want {
			t.Errorf("IsServerClass(%q) = %v, want %v", class, got, want)
		}
	}
}

// TestServerErrorsRule: a server's error means a COMMIT was refused, and only 23505 and
// MySQL's duplicate entries are unique violations.
func TestServerErrorsRule(t *testing.T) {
	for _, tc := range []struct {
		err            error
		unknown, dupes bool
	}{
		{&pgconn.PgError{Code: "40001"}, false, false},
		{fmt.Errorf("commit: %w", &pgconn.PgError{Code: "23505"}), false, true},
		{&mysql.MySQLError{Number: 1213}, false, false},
		{&mysql.MySQLError{Number: 1062}, false, true},
		{&mysql.MySQLError{Number: 1586}, false, true},
		{mysql.ErrInvalidConn, true, false},
		{io.ErrUnexpectedEOF, true, false},
		{context.DeadlineExceeded, true, false},
	} {
		if got := CommitOutcomeUnknown(tc.err); got != tc.unknown {
			t.Errorf("CommitOutcomeUnknown(%v) = %v", tc.err, got)
		}
		if got := IsUniqueViolation(tc.err); got != tc.dupes {
			t.Errorf("IsUniqueViolation(%v) = %v", tc.err, got)
		}
	}
}
