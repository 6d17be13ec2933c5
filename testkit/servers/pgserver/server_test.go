package pgserver

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

func startForTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	return serverproctest.Started(t, time.Minute, func(ctx context.Context) (*Server, error) { return Start(ctx, cfg) })
}

func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var out string
	if err := conn.QueryRow(ctx, sql).Scan(&out); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func TestStartQueryStopLeavesNothing(t *testing.T) {
	s := startForTest(t, Config{MaxConnections: 150})
	if got := query(t, s.DSN(), "SHOW max_connections"); got != "150" {
		t.Errorf("max_connections = %s, want 150", got)
	}
	if got := query(t, s.DSN(), "SHOW listen_addresses"); got != "127.0.0.1" {
		t.Errorf("listen_addresses = %s", got)
	}
	if got := query(t, s.DSN(), "SHOW fsync"); got != "on" {
		t.Errorf("fsync = %s, want on by default", got)
	}
	if got := query(t, s.DSN(), "SELECT current_database()"); got != "hotspot" {
		t.Errorf("database = %s", got)
	}
	pid := s.PostmasterPID()
	if pid <= 0 {
		t.Fatal("no postmaster pid")
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(s.User())
		if err != nil {
			t.Fatal(err)
		}
		if uid := serverproctest.ProcessUID(t, pid); strconv.Itoa(uid) != u.Uid {
			t.Errorf("postmaster runs as uid %d, want %s (%s)", uid, u.Uid, s.User())
		}
	}
	serverproctest.InOwnSession(t, "postmaster", pid)
	serverproctest.StopLeavesNothing(t, "postmaster", s, pid, s.Dir())
}

func TestUnsafeAndRestartKeepsDataAndPort(t *testing.T) {
	cfg := Config{Unsafe: true}
	if os.Geteuid() == 0 {
		cfg.User = "nobody" // the fallback user, exercised explicitly
	}
	s := startForTest(t, cfg)
	if got := query(t, s.DSN(), "SHOW synchronous_commit"); got != "off" {
		t.Errorf("synchronous_commit = %s, want off in unsafe mode", got)
	}
	query(t, s.DSN(), "SELECT 'ok' FROM (SELECT 1) x WHERE (SELECT 1) = 1")
	exec := func(sql string) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, s.DSN())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE TABLE kept(v text); INSERT INTO kept VALUES ('before restart')")
	port, oldPID := s.Port(), s.PostmasterPID()
	if err := s.Restart(context.Background()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if s.Port() != port {
		t.Errorf("port changed across restart: %d -> %d", port, s.Port())
	}
	if s.PostmasterPID() == oldPID {
		t.Errorf("postmaster pid unchanged (%d): the server did not restart", oldPID)
	}
	if got := query(t, s.DSN(), "SELECT v FROM kept"); got != "before restart" {
		t.Errorf("data lost across restart: %q", got)
	}
}

// embedded-postgres makes its log file (the postmaster's own output, which an error quotes)
// in TMPDIR: every start, a restart's too, makes it in the server's directory, none in the
// caller's TMPDIR, and TMPDIR is the caller's again once Start returns.
func TestLogFilesStayInTheServersDirectory(t *testing.T) {
	tmp := t.TempDir()
	for _, d := range []string{filepath.Dir(tmp), tmp} { // the server's user must reach it
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	s := startForTest(t, Config{})
	if got := os.Getenv("TMPDIR"); got != tmp {
		t.Errorf("TMPDIR after Start = %q, want %q", got, tmp)
	}
	if n := countLogs(s.Dir()); n != 1 {
		t.Errorf("%d log files in the server's directory after Start, want 1", n)
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if n := countLogs(s.Dir()); n != 2 {
		t.Errorf("%d log files in the server's directory after Restart, want 2", n)
	}
	if n := countLogs(tmp); n != 0 {
		t.Errorf("%d log files in TMPDIR %s, want none", n, tmp)
	}
	if log := string(s.logs()); !strings.Contains(log, "ready to accept connections") {
		t.Errorf("the server's log does not say it started:\n%s", log)
	}
}

func TestStopAllStopsEverything(t *testing.T) {
	a := startForTest(t, Config{})
	b := startForTest(t, Config{})
	pids := []int{a.PostmasterPID(), b.PostmasterPID()}
	if err := StopAll(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if serverproc.Alive(pid) {
			t.Errorf("postmaster %d alive after StopAll", pid)
		}
	}
	for _, d := range []string{a.Dir(), b.Dir()} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind", d)
		}
	}
}

func TestBadBinDirIsAClearError(t *testing.T) {
	_, err := FindBinaries(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "--pg-bin-dir") || !strings.Contains(err.Error(), "no PostgreSQL binaries") {
		t.Fatalf("want a clear --pg-bin-dir error, got %v", err)
	}
}

func TestFindBinariesAcceptsInstallRoot(t *testing.T) {
	b, err := FindBinaries("")
	if err != nil {
		serverproctest.Missing(t, "no local PostgreSQL: %v", err)
	}
	root := filepath.Dir(b.BinDir)
	got, err := FindBinaries(root)
	if err != nil {
		t.Fatalf("FindBinaries(%s): %v", root, err)
	}
	if got.BinDir != b.BinDir || got.Major == 0 {
		t.Errorf("got %+v, want bin dir %s", got, b.BinDir)
	}
}

// TestWatchdogStopsServerWhenOwnerIsKilled starts a server from a child process (this test
// binary re-run), SIGKILLs that process, and checks the watchdog stops the server and removes
// its directory.
func TestWatchdogStopsServerWhenOwnerIsKilled(t *testing.T) {
	serverproctest.WatchdogCleansUp(t, "postmaster", 20*time.Second, func() (int, string, error) {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			return 0, "", err
		}
		return s.PostmasterPID(), s.Dir(), nil
	})
}

// TestPortTakenPicksAnother: when the port asked for is in use, the server starts on another.
func TestPortTakenPicksAnother(t *testing.T) {
	taken := serverproctest.TakenPort(t)
	s := startForTest(t, Config{Port: taken})
	if s.Port() == taken || s.Port() == 0 {
		t.Fatalf("server on port %d; %d was taken", s.Port(), taken)
	}
	if got := query(t, s.DSN(), "SELECT 'up'"); got != "up" {
		t.Fatal(got)
	}
}

func TestCrashRecoversCommittedDataOnTheSamePort(t *testing.T) {
	s := startForTest(t, Config{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept(v int); INSERT INTO kept SELECT generate_series(1, 1000)"); err != nil {
		t.Fatal(err)
	}
	// A transaction in flight when the server dies: its rows must not survive.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO kept VALUES (-1)"); err != nil {
		t.Fatal(err)
	}
	port, oldPID := s.Port(), s.PostmasterPID()
	recovered, err := s.Crash(ctx)
	if err != nil {
		t.Fatalf("Crash: %v", err)
	}
	if !recovered {
		t.Errorf("the server log shows no crash recovery after the crash")
	}
	if serverproc.Alive(oldPID) || s.PostmasterPID() == oldPID || s.Port() != port {
		t.Errorf("after the crash: old postmaster alive %v, pid %d -> %d, port %d -> %d",
			serverproc.Alive(oldPID), oldPID, s.PostmasterPID(), port, s.Port())
	}
	if err := tx.Commit(ctx); err == nil {
		t.Errorf("a transaction open across the crash committed")
	}
	if got := query(t, s.DSN(), "SELECT count(*)::text || ',' || min(v)::text FROM kept"); got != "1000,1" {
		t.Errorf("after crash recovery: count,min = %s, want 1000,1", got)
	}
}
