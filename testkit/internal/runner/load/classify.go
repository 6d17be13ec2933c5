package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Error classes that are not SQLSTATEs.
const (
	ClassPanic            = "panic"
	ClassUnknownOutcome   = "unknown_outcome"
	ClassContextCanceled  = "context_canceled"
	ClassDeadlineExceeded = "deadline_exceeded"
	ClassPoolClosed       = "pool_closed"
	ClassConnClosed       = "conn_closed"
	ClassConnError        = "conn_error"
	ClassOther            = "other"
)

// Classify names the class of err for error counts, checking in this order:
//   - the class an error names itself, through an ErrorClass() string method;
//   - "panic" for a recovered panic, "unknown_outcome" for Unknown(err);
//   - the SQLSTATE of a *pgconn.PgError ("40P01" deadlock, "55P03" lock timeout, "57014"
//     statement cancelled, ...), because the server's word is the most precise;
//   - "context_canceled", "deadline_exceeded";
//   - "pool_closed" for an acquire from a closed pgxpool;
//   - "conn_closed" when the connection is gone (io.EOF, pgconn's "conn closed", a reset,
//     broken or closed socket);
//   - "conn_error" for other connection trouble (connect errors, net errors, and errors pgconn
//     says happened before anything was sent: pgconn.SafeToRetry);
//   - "other".
//
// Classify(nil) is "".
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		classed    interface{ ErrorClass() string }
		panicked   *panicError
		pgErr      *pgconn.PgError
		connectErr *pgconn.ConnectError
		netErr     net.Error
	)
	switch {
	case errors.As(err, &classed):
		return classed.ErrorClass()
	case errors.As(err, &panicked):
		return ClassPanic
	case IsUnknown(err):
		return ClassUnknownOutcome
	case errors.As(err, &pgErr) && pgErr.Code != "":
		return pgErr.Code
	case errors.Is(err, context.Canceled):
		return ClassContextCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return ClassDeadlineExceeded
	case isClosedPool(err):
		return ClassPoolClosed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		return ClassConnClosed
	case errors.As(err, &connectErr), errors.As(err, &netErr), pgconn.SafeToRetry(err):
		return ClassConnError
	}
	return ClassOther
}

// isClosedPool recognises puddle.ErrClosedPool, which pgxpool returns unwrapped from Acquire
// on a closed pool. It is matched by text because puddle is not one of our direct
// dependencies.
func isClosedPool(err error) bool {
	for err != nil {
		if err.Error() == "closed pool" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// panicError is a panic recovered from an operation.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.value, e.stack) }

// Unwrap exposes a panic raised with an error value (e.g. a runtime error) to errors.Is/As.
func (e *panicError) Unwrap() error {
	err, _ := e.value.(error)
	return err
}
