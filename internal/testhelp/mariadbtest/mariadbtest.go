// Package mariadbtest gives integration tests a real MariaDB, as package testdb gives them a
// PostgreSQL: one temporary server per test binary (testkit/servers/mariadbserver), started on
// first use and stopped by Stop, and a fresh database per test on it. There is no
// mock: a test that needs MariaDB gets a real one, or is skipped where MariaDB is not installed
// (failed in CI: serverproctest.Missing).
//
// The shared server is not durable (its redo log flushed once a second: Config.Unsafe), as the
// shared PostgreSQL is not; nothing on it is ever crashed or restarted.
//
// Use it from a package's TestMain, beside testdb or alone:
//
//	func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }
//	func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(m.Run())) }
package mariadbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
)

var (
	once    sync.Once
	server  *mariadbserver.Server
	initErr error
)

// Stop stops the shared server (if a test started it) once the tests have run; code is their
// exit code, returned unless stopping failed.
func Stop(code int) int {
	return serverproctest.StopShared(code, "the shared MariaDB of mariadbtest", server)
}

// Server returns the shared server, starting it on first use.
func Server(t testing.TB) *mariadbserver.Server {
	t.Helper()
	if _, err := mariadbserver.FindBinaries(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		server, initErr = mariadbserver.Start(ctx, mariadbserver.Config{Unsafe: true, MaxConnections: 300})
	})
	if initErr != nil {
		t.Fatalf("starting the test MariaDB: %v", initErr)
	}
	return server
}

// New creates a fresh database on the shared server, dropped when the test ends, and returns
// the driver's configuration for it (as root; the caller's to change).
func New(t testing.TB) *mysql.Config {
	t.Helper()
	srv := Server(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "test_" + hex.EncodeToString(b)
	admin := func(stmt string) error {
		db, err := sql.Open("mysql", srv.DSN())
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err = db.ExecContext(ctx, stmt)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("creating a test database: %v", err)
	}
	t.Cleanup(func() {
		if err := admin("DROP DATABASE " + name); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	cfg := srv.DriverConfig()
	cfg.DBName = name
	return cfg
}
