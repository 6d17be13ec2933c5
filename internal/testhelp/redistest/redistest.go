// Package redistest gives tests a real redis-server (testkit/servers/redisserver): one shared by a test
// binary's tests, or one of a test's own. Where redis-server is not installed the test is
// skipped, except in CI (CI=true), where it fails: CI's set-up installs it
// (serverproctest.Missing). It is for tests only.
//
// A package whose tests share the server stops it in its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m, testdb.Main)) }
package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

// startTimeout bounds a server's start.
const startTimeout = 30 * time.Second

// Installed reports whether redis-server is installed (redisserver.FindBinary), for a test
// that has something else to run on without it; in CI a missing one fails the test.
func Installed(t testing.TB) bool {
	t.Helper()
	_, err := redisserver.FindBinary("")
	if err != nil && serverproctest.InCI() {
		serverproctest.Missing(t, "%v", err)
	}
	return err == nil
}

// Need skips the test unless redis-server is installed (fails it in CI).
func Need(t testing.TB) {
	t.Helper()
	if _, err := redisserver.FindBinary(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}

// Start starts a redis-server of the test's own with cfg (Need first), and stops it when the
// test ends.
func Start(t testing.TB, cfg redisserver.Config) *redisserver.Server {
	t.Helper()
	Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	srv, err := redisserver.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

var shared = serverproctest.NewShared("the shared redis-server", startTimeout, func(ctx context.Context) (*redisserver.Server, error) {
	return redisserver.Start(ctx, redisserver.Config{})
})

// Shared returns the redis-server the test binary's tests share, started on first use (Need
// first); Main stops it. A test that uses it names its own keys.
func Shared(t testing.TB) *redisserver.Server {
	t.Helper()
	Need(t)
	return shared.Get(t)
}

// Main runs the tests with run (m.Run, or testdb.Main to share a PostgreSQL too), then stops
// the shared redis-server if a test started it, and returns the exit code: run's, or 1 when
// stopping the server failed.
func Main(m *testing.M, run func(*testing.M) int) int { return shared.Stop(run(m)) }
