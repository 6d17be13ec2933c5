// Package mariadbtest gives integration tests a real MariaDB: one temporary server per test
// binary, started on first use through testkit/servers/mariadbserver and stopped by Main (or Stop), and
// a database of its own per test on it, dropped when the test ends (New: a pool on it as root;
// Target: a run's database, testkit/database's MySQL target, with the kit's tables). There is no mock: a test
// that needs MariaDB gets a real one (and is skipped where MariaDB is not installed, failed in
// CI: serverproctest.Missing).
//
// The shared server is durable, as a run's is (the redo log written and flushed at every
// commit), and its directory is on disk (/var/tmp where it exists): MariaDB memory-maps a
// redo log on /dev/shm and never syncs it, so a test of InnoDB's fsyncs needs a disk. Its
// performance_schema is on (mariadbserver's default). Tests that change a global setting
// (innodb_deadlock_detect) set it back before they end.
//
// Use it from a package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }
package mariadbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
)

var shared = serverproctest.NewShared("the shared MariaDB of mariadbtest", 2*time.Minute, func(ctx context.Context) (*mariadbserver.Server, error) {
	return mariadbserver.Start(ctx, mariadbserver.Config{TempDir: diskDir(), MaxConnections: 300})
})

// Main runs the tests and then stops the shared server.
func Main(m *testing.M) int { return Stop(m.Run()) }

// Stop stops the shared server (if a test started it) once the tests have run; code is their
// exit code, returned unless stopping failed. Beside testdb's PostgreSQL:
//
//	func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }
func Stop(code int) int { return shared.Stop(code) }

// diskDir is where the shared server's directory is made: on disk, where the system has one
// for temporary files that outlive a boot ("" — os.TempDir() — elsewhere).
func diskDir() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return ""
}

// Server returns the shared server, starting it on first use.
func Server(t testing.TB) *mariadbserver.Server {
	t.Helper()
	if _, err := mariadbserver.FindBinaries(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
	return shared.Get(t)
}

// DB is a database of a test's own on the shared server, and a pool on it as root.
type DB struct {
	*sql.DB
	// Name is the database's.
	Name   string
	Server *mariadbserver.Server
}

// New creates a database for the test (dropped when it ends) and opens a pool on it.
func New(t testing.TB) *DB {
	t.Helper()
	srv := Server(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	d := &DB{Name: "t_" + hex.EncodeToString(b), Server: srv}
	admin, err := sql.Open("mysql", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + d.Name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		drop, err := sql.Open("mysql", srv.DSN())
		if err == nil {
			_, err = drop.Exec("DROP DATABASE IF EXISTS " + d.Name)
			drop.Close()
		}
		if err != nil {
			t.Errorf("dropping the test's database %s: %v", d.Name, err)
		}
	})
	if d.DB, err = sql.Open("mysql", d.Config().FormatDSN()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.DB.Close() })
	return d
}

// Config is the driver's configuration for the test's database, as root (interpolated
// parameters, as mariadbserver.DriverConfig's): a new one for each call, to change.
func (d *DB) Config() *mysql.Config {
	c := d.Server.DriverConfig()
	c.DBName = d.Name
	return c
}

// Conn is a connection of its own to the test's database, closed when the test ends; program,
// when not "", is its program_name connection attribute.
func (d *DB) Conn(t testing.TB, program string) *sql.Conn {
	t.Helper()
	c := d.Config()
	if program != "" {
		c.ConnectionAttributes = "program_name:" + program
	}
	connector, err := mysql.NewConnector(c)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Connector is the driver's connector for the test's database, as root.
func (d *DB) Connector(t testing.TB) driver.Connector {
	t.Helper()
	c, err := mysql.NewConnector(d.Config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MustExec runs statements on the test's database, failing the test at the first error.
func (d *DB) MustExec(t testing.TB, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := d.DB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// URL is the shared server's mysql:// URL, as root (the password in it: never print it).
func URL(t testing.TB) string {
	t.Helper()
	srv := Server(t)
	return (&url.URL{Scheme: "mysql", User: url.UserPassword("root", srv.DriverConfig().Passwd), Host: srv.Addr(), Path: "/"}).String()
}

// Target opens a run's database of its own on the shared server (testkit/database's MySQL
// target), with the kit's shared tables and, when given, one suite's own (its Info.SQL's
// mysql/*.sql); it is dropped when the test ends.
func Target(t testing.TB, suiteSQL ...fs.FS) *database.MySQL {
	t.Helper()
	u := URL(t)
	return serverproctest.Opened(t, "database", suiteSQL, func(ctx context.Context, sql fs.FS) (*database.MySQL, error) {
		return database.OpenMySQL(ctx, database.Options{URL: u, SQL: sql})
	})
}
