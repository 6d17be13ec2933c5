package load

import (
	"errors"
	"fmt"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Error classes that are not a server's own code: the request's own, and the database's
// (package sqldb's, under load's names).
const (
	ClassPanic            = "panic"
	ClassUnknownOutcome   = "unknown_outcome"
	ClassContextCanceled  = sqldb.ClassContextCanceled
	ClassDeadlineExceeded = sqldb.ClassDeadlineExceeded
	ClassPoolClosed       = sqldb.ClassPoolClosed
	ClassConnClosed       = sqldb.ClassConnClosed
	ClassConnError        = sqldb.ClassConnError
	ClassOther            = sqldb.ClassOther
)

// Classify names the class of err for error counts, checking in this order:
//   - the class an error names itself, through an ErrorClass() string method;
//   - "panic" for a recovered panic, "unknown_outcome" for Unknown(err);
//   - the database's class of it (sqldb.Classify): a server's own code first (a
//     PostgreSQL SQLSTATE such as "40P01", a MySQL error such as "mysql-1213"), then the
//     context's, a closed pool's, a lost connection's, other connection trouble's, "other".
//
// Classify(nil) is "".
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var (
		classed  interface{ ErrorClass() string }
		panicked *panicError
	)
	switch {
	case errors.As(err, &classed):
		return classed.ErrorClass()
	case errors.As(err, &panicked):
		return ClassPanic
	case IsUnknown(err):
		return ClassUnknownOutcome
	}
	return sqldb.Classify(err)
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
