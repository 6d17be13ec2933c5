package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

var (
	deadlock             = &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	errConnClosedForTest = fmt.Errorf("write: %w", syscall.ECONNRESET)
)

// TestClassify: the request's own classes come first; the rest is the database's (sqldb's
// tests hold its table).
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"the database's class", fmt.Errorf("update: %w", deadlock), "40P01"},
		{"named class", classed("request_timeout"), "request_timeout"},
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

// classed is an error that names its class.
type classed string

func (c classed) Error() string      { return string(c) }
func (c classed) ErrorClass() string { return string(c) }

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
