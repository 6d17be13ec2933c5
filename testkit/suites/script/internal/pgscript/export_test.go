package pgscript

// The tests of the example scripts (examples_test.go, package pgscript_test) run pgbench as
// this package's tests do.
var (
	PgbenchBinary  = pgbenchBinary
	PgbenchCommand = pgbenchCommand
)
