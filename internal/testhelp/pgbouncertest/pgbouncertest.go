// Package pgbouncertest is what tests outside testkit need to run against a real PgBouncer
// (testkit/servers/pgbouncer): Need, which skips a test where pgbouncer is not installed, except in
// CI (CI=true), where it fails it, since CI's set-up installs it (serverproctest.Missing). It
// is for tests only.
package pgbouncertest

import (
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

// Need skips the test unless pgbouncer is installed (fails it in CI).
func Need(t testing.TB) {
	t.Helper()
	if _, err := pgbouncer.FindBinary(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}
