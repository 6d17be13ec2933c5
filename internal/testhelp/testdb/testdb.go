// Package testdb gives integration tests a real PostgreSQL: one managed server per test
// binary, started on first use through testkit/servers/pgserver and stopped by Main, and a
// fresh schema per test on it. There is no mock: a test that needs a database gets a real one.
//
// The shared server is not durable (fsync, synchronous_commit and full_page_writes off): a
// commit does not wait for the disk, so tests that serialize on one hot row cost their CPU
// time, not the disk's latency once per request. Nothing on it is ever crashed or restarted;
// a test of durability (restart-postgres, crash-postgres, the figures of a durable server)
// runs on a temporary server of its own, as the binaries do by default.
//
// Use it from a package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
package testdb

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

var shared = serverproctest.NewShared("the shared PostgreSQL of testdb", 2*time.Minute, func(ctx context.Context) (*pgserver.Server, error) {
	return pgserver.Start(ctx, pgserver.Config{MaxConnections: 300, Unsafe: true})
})

// Main runs the tests and then stops the shared server.
func Main(m *testing.M) int { return shared.Stop(m.Run()) }

// Server returns the shared managed server, starting it on first use.
func Server(t testing.TB) *pgserver.Server {
	t.Helper()
	return shared.Get(t)
}

// New opens a fresh schema on the shared server, with hotspotkit's shared tables and, when
// given, one suite's own (its testkit.Info.SQL); it is dropped when the test ends.
func New(t testing.TB, suiteSQL ...fs.FS) *database.Postgres {
	t.Helper()
	srv := Server(t)
	return serverproctest.Opened(t, "schema", suiteSQL, func(ctx context.Context, sql fs.FS) (*database.Postgres, error) {
		return database.Open(ctx, database.Options{URL: srv.DSN(), SQL: sql})
	})
}
