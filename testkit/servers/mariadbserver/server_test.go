package mariadbserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// TestMain starts the tests' servers from a template (TemplateDirEnv), as make test does, made
// here when the caller gave none and removed afterwards; TestInstallWithoutTemplate and
// TestServersFromATemplate set their own. A re-run of this binary as a watchdog test's owner
// inherits the directory.
func TestMain(m *testing.M) {
	if os.Getenv(TemplateDirEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "hotspotkit-mariadb-templates-")
	if err == nil {
		err = os.Chmod(dir, 0o755) // as root, the server's user copies nothing but reaches it
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(TemplateDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// need skips the test unless MariaDB is installed (fails it in CI).
func need(t *testing.T) {
	t.Helper()
	if _, err := FindBinaries(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}

func startForTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	need(t)
	return serverproctest.Started(t, time.Minute, func(ctx context.Context) (*Server, error) { return Start(ctx, cfg) })
}

// open is a pool on the server's database (DSN), closed when the test ends.
func open(t *testing.T, s *Server) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func queryString(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var out string
	if err := db.QueryRow(q, args...).Scan(&out); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// variables reads @@name for each name, as the server reports it.
func variables(t *testing.T, db *sql.DB, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		out[n] = queryString(t, db, "SELECT @@"+n)
	}
	return out
}

// mysqlErrorNumber is the server's error number in err, 0 when it holds none.
func mysqlErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestStartUseStopLeavesNothing(t *testing.T) {
	s := startForTest(t, Config{MaxConnections: 64})
	db := open(t, s)
	mustExec(t, db, "CREATE TABLE hot (id int PRIMARY KEY, k bigint NOT NULL)", "INSERT INTO hot VALUES (1, 0)")
	for i := 0; i < 3; i++ {
		if _, err := db.Exec("UPDATE hot SET k = k + ? WHERE id = ?", 2, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryString(t, db, "SELECT k FROM hot WHERE id = 1"); got != "6" {
		t.Errorf("k = %s after three updates by 2, want 6", got)
	}
	var version, detect, flush string
	if err := db.QueryRow("SELECT @@version, @@innodb_deadlock_detect, @@innodb_flush_log_at_trx_commit").Scan(&version, &detect, &flush); err != nil {
		t.Fatal(err)
	}
	if version != s.Version() || version != s.Binaries().Version || !strings.Contains(version, "MariaDB") {
		t.Errorf("@@version %q, Version() %q, the binary's %q: want one MariaDB version", version, s.Version(), s.Binaries().Version)
	}
	if detect != "1" || flush != "1" {
		t.Errorf("innodb_deadlock_detect %s, innodb_flush_log_at_trx_commit %s: want 1 and 1 (durable) by default", detect, flush)
	}
	want := map[string]string{
		"max_connections": "64", "back_log": "144", "innodb_doublewrite": "1", "performance_schema": "1", "log_bin": "0",
		"skip_name_resolve": "1", "bind_address": "127.0.0.1", "port": strconv.Itoa(s.Port()),
		"character_set_server": "utf8mb4", "innodb_buffer_pool_size": strconv.Itoa(128 << 20),
		"innodb_lock_wait_timeout": "50", "datadir": filepath.Join(s.Dir(), "data") + "/",
		"innodb_log_file_size": strconv.Itoa(32 << 20),
	}
	for name, value := range variables(t, db, keys(want)...) {
		if value != want[name] {
			t.Errorf("@@%s = %s, want %s", name, value, want[name])
		}
	}
	if got := queryString(t, db, "SELECT DATABASE()"); got != "hotspot" || got != s.Database() {
		t.Errorf("database %q, Database() %q, want hotspot", got, s.Database())
	}

	// root needs the password, over TCP and through the socket alike.
	noPassword := s.DriverConfig()
	noPassword.Passwd = ""
	if err := ping(noPassword); mysqlErrorNumber(err) != 1045 {
		t.Errorf("root without the password: %v, want access denied (1045)", err)
	}
	if s.Socket() == "" {
		t.Errorf("no socket in %s", s.Dir())
	} else {
		viaSocket := s.DriverConfig()
		viaSocket.Net, viaSocket.Addr = "unix", s.Socket()
		if err := ping(viaSocket); err != nil {
			t.Errorf("root through the socket: %v", err)
		}
	}

	pid, dir := s.PID(), s.Dir()
	if pid <= 0 || !serverproc.Alive(pid) {
		t.Fatalf("mariadbd pid %d not alive", pid)
	}
	if s.CPUTime() <= 0 {
		t.Errorf("mariadbd's CPU time %s, want some", s.CPUTime())
	}
	serverproctest.InOwnSession(t, "mariadbd", pid)
	if os.Geteuid() == 0 {
		u, err := user.Lookup(s.User())
		if err != nil {
			t.Fatal(err)
		}
		if uid := serverproctest.ProcessUID(t, pid); strconv.Itoa(uid) != u.Uid || uid == 0 {
			t.Errorf("mariadbd runs as uid %d, want %s (%s)", uid, u.Uid, s.User())
		}
	}
	serverproctest.StopLeavesNothing(t, "mariadbd", s, pid, dir)
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ping connects once with cfg.
func ping(cfg *mysql.Config) error {
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.Ping()
}

// The hot-row settings and other settings reach the server, read back as @@variables.
func TestSettingsAreApplied(t *testing.T) {
	unsafeUser := ""
	if os.Geteuid() == 0 {
		unsafeUser = "nobody" // the last fallback, exercised explicitly
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want map[string]string
	}{
		{"hot-row", Config{DeadlockDetectOff: true, LockWaitTimeout: 7 * time.Second, FlushLogAtTrxCommit: WriteAtCommit,
			BufferPoolMiB: 64, Settings: map[string]string{"innodb-stats-persistent": "OFF", "table_open_cache": "400"}},
			map[string]string{"innodb_deadlock_detect": "0", "innodb_lock_wait_timeout": "7", "innodb_flush_log_at_trx_commit": "2",
				"innodb_doublewrite": "1", "innodb_buffer_pool_size": strconv.Itoa(64 << 20), "innodb_stats_persistent": "0", "table_open_cache": "400"}},
		{"unsafe", Config{Unsafe: true, User: unsafeUser},
			map[string]string{"innodb_flush_log_at_trx_commit": "0", "innodb_doublewrite": "0", "innodb_deadlock_detect": "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startForTest(t, c.cfg)
			for name, value := range variables(t, open(t, s), keys(c.want)...) {
				if value != c.want[name] {
					t.Errorf("@@%s = %s, want %s", name, value, c.want[name])
				}
			}
			if c.cfg.Unsafe != s.Unsafe() {
				t.Errorf("Unsafe() = %v", s.Unsafe())
			}
			if got := s.Settings()["innodb_flush_log_at_trx_commit"]; got != c.want["innodb_flush_log_at_trx_commit"] {
				t.Errorf("Settings() says innodb_flush_log_at_trx_commit %s", got)
			}
			if os.Geteuid() == 0 && c.cfg.User != "" && s.User() != c.cfg.User {
				t.Errorf("runs as %s, want %s", s.User(), c.cfg.User)
			}
		})
	}
}

// A configuration that makes no sense is refused before anything starts, naming what.
func TestBadConfigIsRefused(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Database: "a-b"}, `database name "a-b"`},
		{Config{MaxConnections: -1}, "positive"},
		{Config{FlushLogAtTrxCommit: "3"}, `innodb_flush_log_at_trx_commit "3"`},
		{Config{Unsafe: true, FlushLogAtTrxCommit: FlushAtCommit}, "unsafe"},
		{Config{LockWaitTimeout: 1500 * time.Millisecond}, "whole seconds"},
		{Config{Settings: map[string]string{"max-connections": "10"}}, "setting max-connections is the temporary server's own"},
		{Config{Settings: map[string]string{"datadir": "/tmp"}}, "setting datadir"},
		{Config{Settings: map[string]string{"a b": "1"}}, "want a variable's name"},
		{Config{Settings: map[string]string{"init_connect": "x\ny"}}, "one line"},
	} {
		_, err := Start(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.want)
		}
	}
}

// Kill is a crash: committed rows are there after Restart (InnoDB's crash recovery, recorded),
// a transaction open across it is not; a clean Restart recovers nothing and keeps everything.
// The port stays.
func TestKillThenRestartRecoversCommittedRows(t *testing.T) {
	s := startForTest(t, Config{})
	db := open(t, s)
	mustExec(t, db, "CREATE TABLE kept (v int PRIMARY KEY)", "INSERT INTO kept SELECT seq FROM seq_1_to_1000")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO kept VALUES (-1)"); err != nil {
		t.Fatal(err)
	}
	port, dir, oldPID := s.Port(), s.Dir(), s.PID()
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if serverproc.Alive(oldPID) || !serverproctest.Exists(dir) {
		t.Fatalf("after Kill: mariadbd %d alive %v, directory kept %v; want dead, kept", oldPID, serverproc.Alive(oldPID), serverproctest.Exists(dir))
	}
	// A monitor reads the server's process while it restarts (the race detector watches).
	reading, read := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-reading:
				read <- n
				return
			default:
				_, _, _ = s.PID(), s.CPUTime(), s.Version()
				n++
				time.Sleep(time.Millisecond)
			}
		}
	}()
	recovered, err := s.Restart(context.Background())
	close(reading)
	if n := <-read; n < 2 {
		t.Errorf("the server's process read %d times during a restart; its lock held the reader", n)
	}
	if err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if !recovered {
		t.Errorf("mariadbd's log shows no crash recovery after Kill")
	}
	if s.Port() != port || s.PID() == oldPID || !serverproc.Alive(s.PID()) {
		t.Errorf("after Restart: port %d -> %d, pid %d -> %d (alive %v)", port, s.Port(), oldPID, s.PID(), serverproc.Alive(s.PID()))
	}
	if err := tx.Commit(); err == nil {
		t.Errorf("a transaction open across the crash committed")
	}
	if got := queryString(t, db, "SELECT CONCAT(COUNT(*), ',', MIN(v)) FROM kept"); got != "1000,1" {
		t.Errorf("after crash recovery: count,min = %s, want 1000,1", got)
	}
	mustExec(t, db, "INSERT INTO kept VALUES (1001)")
	recovered, err = s.Restart(context.Background())
	if err != nil || recovered {
		t.Fatalf("clean Restart: recovered %v, %v; want no recovery, no error", recovered, err)
	}
	if got := queryString(t, db, "SELECT COUNT(*) FROM kept"); got != "1001" {
		t.Errorf("after a clean restart: %s rows, want 1001", got)
	}
}

// go-sql-driver/mysql sends a statement with parameters as one COM_QUERY with interpolateParams
// (DriverConfig's), and as a prepare, an execute and a close without: counted by the server,
// whose Com_update counts the UPDATEs either way.
func TestInterpolatedParametersAreOneCommand(t *testing.T) {
	s := startForTest(t, Config{})
	observer := open(t, s)
	mustExec(t, observer, "CREATE TABLE hot (id int PRIMARY KEY, k bigint NOT NULL)", "INSERT INTO hot VALUES (1, 0)")
	counters := func() map[string]int {
		rows, err := observer.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_execute', 'Com_stmt_close', 'Com_update')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			out[name] = n
		}
		return out
	}
	const updates = 10
	for _, interpolate := range []bool{true, false} {
		cfg := s.DriverConfig()
		cfg.InterpolateParams = interpolate
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(conn)
		db.SetMaxOpenConns(1)
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		before := counters()
		for i := 0; i < updates; i++ {
			if _, err := db.Exec("UPDATE hot SET k = k + ? WHERE id = ?", 1, 1); err != nil {
				t.Fatal(err)
			}
		}
		// COM_STMT_CLOSE has no answer: a round trip on the same connection after it makes
		// sure the server has counted it.
		if err := db.QueryRow("SELECT 1").Scan(new(int)); err != nil {
			t.Fatal(err)
		}
		after := counters()
		db.Close()
		got := map[string]int{}
		for name := range after {
			got[name] = after[name] - before[name]
		}
		want := map[string]int{"Com_update": updates}
		if !interpolate {
			want = map[string]int{"Com_stmt_prepare": updates, "Com_stmt_execute": updates, "Com_stmt_close": updates, "Com_update": updates}
		}
		for _, name := range []string{"Com_stmt_prepare", "Com_stmt_execute", "Com_stmt_close", "Com_update"} {
			if got[name] != want[name] {
				t.Errorf("interpolateParams=%v: %s went up by %d, want %d", interpolate, name, got[name], want[name])
			}
		}
	}
}

// Two servers at once: their own ports, directories, processes and data; StopAll stops both.
func TestTwoServersAtOnceAndStopAll(t *testing.T) {
	a, b := startForTest(t, Config{}), startForTest(t, Config{})
	if a.Port() == b.Port() || a.Dir() == b.Dir() || a.PID() == b.PID() {
		t.Fatalf("ports %d, %d; directories %s, %s; pids %d, %d: want two of each", a.Port(), b.Port(), a.Dir(), b.Dir(), a.PID(), b.PID())
	}
	mustExec(t, open(t, a), "CREATE TABLE only_in_a (x int)")
	if got := queryString(t, open(t, b), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'only_in_a'"); got != "0" {
		t.Errorf("b sees a's table")
	}
	pids, dirs := []int{a.PID(), b.PID()}, []string{a.Dir(), b.Dir()}
	if err := StopAll(); err != nil {
		t.Fatal(err)
	}
	for i := range pids {
		if serverproc.Alive(pids[i]) || serverproctest.Exists(dirs[i]) {
			t.Errorf("after StopAll: mariadbd %d alive %v, %s left %v", pids[i], serverproc.Alive(pids[i]), dirs[i], serverproctest.Exists(dirs[i]))
		}
	}
}

// In a directory whose path is too long for a Unix socket's, the server has none, and starts
// all the same (mariadbd would refuse the path).
func TestNoSocketWhereThePathIsTooLong(t *testing.T) {
	long := serverproctest.ReachableDir(t, "hotspotkit-mariadb-long-")
	for len(long) < maxSocketPath {
		long = filepath.Join(long, strings.Repeat("d", 40))
		if err := os.Mkdir(long, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := startForTest(t, Config{TempDir: long})
	if s.Socket() != "" {
		t.Errorf("Socket() = %s, %d bytes", s.Socket(), len(s.Socket()))
	}
	if got := queryString(t, open(t, s), "SELECT @@socket"); got != "" {
		t.Errorf("@@socket = %q, want none", got)
	}
}

// When the port asked for is in use, the server starts on another.
func TestPortTakenPicksAnother(t *testing.T) {
	taken := serverproctest.TakenPort(t)
	s := startForTest(t, Config{Port: taken})
	if s.Port() == taken || s.Port() == 0 {
		t.Fatalf("server on port %d; %d was taken", s.Port(), taken)
	}
	if got := queryString(t, open(t, s), "SELECT 'up'"); got != "up" {
		t.Fatal(got)
	}
}

// TestWatchdogStopsServerWhenOwnerIsKilled starts a server from a child process (this test
// binary re-run), SIGKILLs that process, and checks the watchdog kills mariadbd and removes
// its directory.
func TestWatchdogStopsServerWhenOwnerIsKilled(t *testing.T) {
	need(t)
	serverproctest.WatchdogCleansUp(t, "mariadbd", 15*time.Second, func() (int, string, error) {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			return 0, "", err
		}
		return s.PID(), s.Dir(), nil
	})
}

// Without a template a server initialises its own data directory (mariadb-install-db): a
// password of its own, no account but root's.
func TestInstallWithoutTemplate(t *testing.T) {
	t.Setenv(TemplateDirEnv, "")
	s := startForTest(t, Config{})
	accounts := queryString(t, open(t, s), "SELECT GROUP_CONCAT(CONCAT(User, '@', Host) ORDER BY User, Host) FROM mysql.user")
	if accounts != "mariadb.sys@localhost,root@127.0.0.1,root@localhost" {
		t.Errorf("accounts %s, want root's at 127.0.0.1 and localhost (and mariadb.sys, which cannot log in)", accounts)
	}
	if serverproctest.Exists(filepath.Join(s.Dir(), "bootstrap.sql")) {
		t.Errorf("the bootstrap script, which holds the password, is still there")
	}
	t.Logf("mariadb-install-db took %s, the first start %s", s.InitDuration(), s.StartDuration())
}

// Two servers started from one template directory: the template is made once, each server
// runs on its own copy with the template's password, and stopping them leaves the template
// and nothing else.
func TestServersFromATemplate(t *testing.T) {
	dir := serverproctest.ReachableDir(t, "hotspotkit-mariadb-templates-")
	t.Setenv(TemplateDirEnv, dir)
	a, b := startForTest(t, Config{}), startForTest(t, Config{})
	if a.Dir() == b.Dir() || a.password != b.password {
		t.Fatalf("servers in %s and %s, passwords equal %v: want two directories, the template's password", a.Dir(), b.Dir(), a.password == b.password)
	}
	mustExec(t, open(t, a), "CREATE TABLE only_in_a (x int)")
	if got := queryString(t, open(t, b), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'only_in_a'"); got != "0" {
		t.Errorf("b sees a's table")
	}
	templates, _ := filepath.Glob(filepath.Join(dir, "mariadb*-uid*"))
	if len(templates) != 2 { // the template and its lock file
		t.Fatalf("in the template directory: %v, want a template and its lock", templates)
	}
	t.Logf("a made the template in %s, b copied it in %s; started in %s and %s", a.InitDuration(), b.InitDuration(), a.StartDuration(), b.StartDuration())
	for _, s := range []*Server{a, b} {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 2 {
		t.Errorf("left in the template directory: %v", left)
	}
}

// CheckDir refuses, as root, a directory the server's user cannot reach, and a user that
// does not exist; not as root it checks nothing.
func TestCheckDir(t *testing.T) {
	closed := t.TempDir() // its parent is 0700
	if os.Geteuid() != 0 {
		if err := CheckDir(closed, "no-such-user-hotspotkit"); err != nil {
			t.Errorf("not as root: %v, want nothing checked", err)
		}
		return
	}
	if err := CheckDir(closed, ""); err == nil || !strings.Contains(err.Error(), "not searchable by others") {
		t.Errorf("a directory the server's user cannot reach: %v", err)
	}
	if err := CheckDir(closed, "no-such-user-hotspotkit"); err == nil || !strings.Contains(err.Error(), `"no-such-user-hotspotkit" does not exist`) {
		t.Errorf("a user that does not exist: %v", err)
	}
	if err := CheckDir(serverproctest.ReachableDir(t, "hotspotkit-mariadb-check-"), ""); err != nil {
		t.Errorf("a directory every user reaches: %v", err)
	}
}

func TestFindBinaries(t *testing.T) {
	need(t)
	found, err := FindBinaries("")
	if err != nil {
		t.Fatal(err)
	}
	// The installation's root (or a bin directory beside sbin) finds the same programs.
	root := filepath.Dir(filepath.Dir(found.InstallDB))
	if b, err := FindBinaries(root); err != nil || b.Server == "" || b.InstallDB == "" || b.Source != "flag" {
		t.Errorf("FindBinaries(%s) = %+v, %v", root, b, err)
	}
	t.Setenv(BinDirEnv, filepath.Dir(found.InstallDB))
	if b, err := FindBinaries(""); err != nil || b.Source != "env" || b.Version != found.Version {
		t.Errorf("with $%s: %+v, %v", BinDirEnv, b, err)
	}
	empty := t.TempDir()
	if _, err := FindBinaries(empty); err == nil || !strings.Contains(err.Error(), "no mariadbd in it") {
		t.Errorf("an empty directory: %v, want an error naming mariadbd", err)
	}
}

func TestRedactDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"root:s3cr3t@tcp(127.0.0.1:3306)/hotspot?interpolateParams=true", "root:REDACTED@tcp(127.0.0.1:3306)/hotspot?interpolateParams=true"},
		{"u:p@ss@unix(/tmp/m.sock)/db", "u:REDACTED@unix(/tmp/m.sock)/db"},
		{"connecting to u:pw@/db: refused", "connecting to u:REDACTED@/db: refused"},
		{"root@tcp(127.0.0.1:3306)/db", "root@tcp(127.0.0.1:3306)/db"},
		{"no dsn: 10:20 at 5@3", "no dsn: 10:20 at 5@3"},
	} {
		if got := RedactDSN(c.in); got != c.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName = "root", "pa:ss@/x", "127.0.0.1:1", "d"
	if got := RedactDSN(cfg.FormatDSN()); strings.Contains(got, "pa:ss") || !strings.Contains(got, "REDACTED") {
		t.Errorf("RedactDSN(%q) = %q", cfg.FormatDSN(), got)
	}
}
