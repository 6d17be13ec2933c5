package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

var (
	deadlock             = &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	errConnClosedForTest = fmt.Errorf("write: %w", syscall.ECONNRESET)
)

func TestClassify(t *testing.T) {
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
		{"context canceled", context.Canceled, ClassContextCanceled},
		{"wrapped context canceled", fmt.Errorf("acquire: %w", context.Canceled), ClassContextCanceled},
		{"deadline exceeded", context.DeadlineExceeded, ClassDeadlineExceeded},
		{"wrapped deadline exceeded", fmt.Errorf("query: %w", context.DeadlineExceeded), ClassDeadlineExceeded},
		{"server cancel wins over the context", fmt.Errorf("%w (%w)", &pgconn.PgError{Code: "57014"}, context.DeadlineExceeded), "57014"},
		{"EOF", io.EOF, ClassConnClosed},
		{"wrapped unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ClassConnClosed},
		{"pgconn conn closed", fmt.Errorf("exec: %w", pgconn.ErrConnClosed), ClassConnClosed},
		{"reset by peer", errConnClosedForTest, ClassConnClosed},
		{"broken pipe", &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, ClassConnClosed},
		{"use of closed socket", &net.OpError{Op: "read", Err: net.ErrClosed}, ClassConnClosed},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, ClassConnError},
		{"dns", &net.DNSError{Err: "no such host", Name: "db"}, ClassConnError},
		{"safe to retry", safeToRetry{}, ClassConnError},
		{"closed pool", errors.New("closed pool"), ClassPoolClosed},
		{"wrapped closed pool", fmt.Errorf("acquire: %w", errors.New("closed pool")), ClassPoolClosed},
		{"unknown", Unknown(io.EOF), ClassUnknownOutcome},
		{"unknown wins over SQLSTATE", Unknown(deadlock), ClassUnknownOutcome},
		{"wrapped unknown", fmt.Errorf("commit: %w", Unknown(errors.New("lost"))), ClassUnknownOutcome},
		{"panic", &panicError{value: "boom"}, ClassPanic},
		{"panic with an error value", &panicError{value: context.Canceled}, ClassPanic},
		{"other", errors.New("constraint violated in Go code"), ClassOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

// safeToRetry stands for pgconn's unexported errors that happened before anything was sent.
type safeToRetry struct{}

func (safeToRetry) Error() string     { return "conn busy" }
func (safeToRetry) SafeToRetry() bool { return true }

func TestUnknown(t *testing.T) {
	if Unknown(nil) != nil {
		t.Error("Unknown(nil) is not nil")
	}
	err := Unknown(deadlock)
	if !IsUnknown(err) || !IsUnknown(fmt.Errorf("x: %w", err)) || IsUnknown(deadlock) || IsUnknown(nil) {
		t.Error("IsUnknown disagrees with Unknown")
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40P01" {
		t.Error("Unknown hides the error it wraps")
	}
}
