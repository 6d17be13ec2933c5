package pgbouncer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func needBinary(t *testing.T) {
	t.Helper()
	if _, err := FindBinary(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}

// upstream is a Config leading to srv (UpstreamConfig of its DSN).
func upstream(t *testing.T, srv *pgserver.Server) Config {
	t.Helper()
	cfg, err := UpstreamConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UpstreamPort != srv.Port() || cfg.DBName != "hotspot" || cfg.User != "postgres" || cfg.Password == "" {
		t.Fatalf("UpstreamConfig(%s) = %+v", srv.DSN(), cfg)
	}
	return cfg
}

func startForTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	return serverproctest.Started(t, 30*time.Second, func(ctx context.Context) (*Server, error) { return Start(ctx, cfg) })
}

// client connects to url as a service's client would under transaction pooling.
func client(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connecting through the pooler: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func console(t *testing.T, url string) *Console {
	t.Helper()
	c, err := OpenConsole(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pool is the pool of db in SHOW POOLS.
func pool(t *testing.T, c *Console, db string) Pool {
	t.Helper()
	pools, err := c.Pools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		if p.Database == db {
			return p
		}
	}
	t.Fatalf("no pool of %s in %+v", db, pools)
	return Pool{}
}

// eventually polls cond every 20ms for up to 10s and fails the test with what when it never
// holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func TestTransactionModeThroughThePooler(t *testing.T) {
	needBinary(t)
	target := testdb.New(t)
	cfg := upstream(t, testdb.Server(t))
	cfg.ConnectQuery = "SET search_path TO " + pgx.Identifier{target.Schema()}.Sanitize() + "; SET application_name = 'it''s pooled'"
	s := startForTest(t, cfg)
	ctx := context.Background()

	c := client(t, s.ClientURL())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var path, app string
	if err := tx.QueryRow(ctx, "SELECT current_setting('search_path'), current_setting('application_name')").Scan(&path, &app); err != nil {
		t.Fatal(err)
	}
	if path != target.Schema() || app != "it's pooled" {
		t.Errorf("through the pooler: search_path %q, application_name %q; want %q and the connect query's", path, app, target.Schema())
	}
	var n int
	if err := tx.QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Errorf("a parameterised query in transaction mode: %d, %v", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	con := console(t, s.ConsoleURL())
	if con.Version() == "" || con.Version() != s.Version() {
		t.Errorf("versions: console %q, server %q", con.Version(), s.Version())
	}
	p := pool(t, con, cfg.DBName)
	if p.ClActive < 1 || p.Mode != ModeTransaction || p.User != cfg.User {
		t.Errorf("SHOW POOLS: %+v; want our client active, transaction mode, user %s", p, cfg.User)
	}
	stats, err := con.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range stats {
		if st.Database == cfg.DBName {
			found = true
			if st.TotalXactCount < 1 || st.TotalQueryCount < 2 {
				t.Errorf("SHOW STATS: %+v; want our transaction and its queries counted", st)
			}
		}
	}
	if !found {
		t.Errorf("SHOW STATS has no row of %s: %+v", cfg.DBName, stats)
	}
	set, err := con.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if set["pool_mode"] != ModeTransaction || set["default_pool_size"] != "16" || set["max_db_connections"] != "16" ||
		set["max_client_conn"] != "10000" || set["reserve_pool_size"] != "0" {
		t.Errorf("SHOW CONFIG: pool_mode %q default_pool_size %q max_db_connections %q max_client_conn %q reserve_pool_size %q",
			set["pool_mode"], set["default_pool_size"], set["max_db_connections"], set["max_client_conn"], set["reserve_pool_size"])
	}
	viaConsole, err := con.ClientURL(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := client(t, viaConsole).QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&path); err != nil || path != target.Schema() {
		t.Errorf("a client through the console's ClientURL: search_path %q, %v", path, err)
	}
	if p2 := pool(t, con, cfg.DBName); p2.ClActive != p.ClActive+1 {
		t.Errorf("the console's client is not in the one pool: %+v, then %+v", p, p2)
	}
	dbs, err := con.Databases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, d := range dbs {
		if d.Name == cfg.DBName {
			found = true
			if d.ForceUser != cfg.User || d.Port != int64(cfg.UpstreamPort) || d.MaxConnections != 16 {
				t.Errorf("SHOW DATABASES: %+v", d)
			}
		}
	}
	if !found {
		t.Errorf("SHOW DATABASES has no row of %s: %+v", cfg.DBName, dbs)
	}
}

// TestSessionModeKeepsTheConnectQuerysSettings: the reset between two clients of a server
// connection (server_reset_query) undoes what a client set, and sets the connect query's again.
func TestSessionModeKeepsTheConnectQuerysSettings(t *testing.T) {
	needBinary(t)
	target := testdb.New(t)
	cfg := upstream(t, testdb.Server(t))
	cfg.Mode, cfg.PoolSize = ModeSession, 1
	cfg.ConnectQuery = "SET search_path TO " + pgx.Identifier{target.Schema()}.Sanitize()
	s := startForTest(t, cfg)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		c := client(t, s.ClientURL())
		var path, tz string
		if err := c.QueryRow(ctx, "SELECT current_setting('search_path'), current_setting('TimeZone')").Scan(&path, &tz); err != nil {
			t.Fatal(err)
		}
		if path != target.Schema() || tz == "Pacific/Chatham" {
			t.Errorf("client %d: search_path %q, TimeZone %q; want %q and not the first client's", i, path, tz, target.Schema())
		}
		if _, err := c.Exec(ctx, "SET TimeZone = 'Pacific/Chatham'"); err != nil {
			t.Fatal(err)
		}
		_ = c.Close(ctx)
	}
}

// TestPoolSizeBoundsServerConnections: with a pool of 2, a third client inside a transaction
// waits in the pooler, and PostgreSQL sees two sessions from it.
func TestPoolSizeBoundsServerConnections(t *testing.T) {
	needBinary(t)
	cfg := upstream(t, testdb.Server(t))
	cfg.PoolSize = 2
	s := startForTest(t, cfg)
	ctx := context.Background()
	con := console(t, s.ConsoleURL())
	var txs []pgx.Tx
	for i := 0; i < 2; i++ {
		tx, err := client(t, s.ClientURL()).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	third := client(t, s.ClientURL())
	done := make(chan error, 1)
	go func() { _, err := third.Exec(ctx, "SELECT 1"); done <- err }()
	eventually(t, "the third client waits in the pooler", func() bool { return pool(t, con, cfg.DBName).ClWaiting == 1 })
	if p := pool(t, con, cfg.DBName); p.SvActive != 2 || p.SvIdle+p.SvLogin != 0 {
		t.Errorf("SHOW POOLS with 2 of 2 server connections in use: %+v", p)
	}
	select {
	case err := <-done:
		t.Fatalf("the third client's query ran (%v) while both server connections were in transactions", err)
	default:
	}
	if err := txs[0].Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("the third client's query after a server connection was released: %v", err)
	}
	_ = txs[1].Commit(ctx)
}

func TestPauseHoldsQueriesAndResumeReleasesThem(t *testing.T) {
	needBinary(t)
	cfg := upstream(t, testdb.Server(t))
	s := startForTest(t, cfg)
	ctx := context.Background()
	c := client(t, s.ClientURL())
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	con, sampler := console(t, s.ConsoleURL()), console(t, s.ConsoleURL())
	if err := con.Pause(ctx, cfg.DBName); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Exec(ctx, "SELECT 1"); done <- err }()
	eventually(t, "the query waits in the paused pooler", func() bool { return pool(t, sampler, cfg.DBName).ClWaiting == 1 })
	dbs, err := sampler.Databases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dbs {
		if d.Name == cfg.DBName && !d.Paused {
			t.Errorf("SHOW DATABASES while paused: %+v", d)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("a query ran (%v) while the pooler was paused", err)
	default:
	}
	if err := con.Resume(ctx, cfg.DBName); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("the held query after RESUME: %v", err)
	}
}

func TestRestartKillsAndComesBackOnTheSamePort(t *testing.T) {
	needBinary(t)
	cfg := upstream(t, testdb.Server(t))
	s := startForTest(t, cfg)
	ctx := context.Background()
	old := client(t, s.ClientURL())
	if _, err := old.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	pid, port := s.PID(), s.Port()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if serverproc.Alive(pid) || s.PID() == pid || s.PID() == 0 || s.Port() != port {
		t.Errorf("after Restart: old pid %d alive %v, new pid %d, port %d -> %d", pid, serverproc.Alive(pid), s.PID(), port, s.Port())
	}
	if _, err := old.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a client of the killed pooler still ran a query")
	}
	var one int
	if err := client(t, s.ClientURL()).QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("a new client after Restart: %d, %v", one, err)
	}
}

func TestStopLeavesNothing(t *testing.T) {
	needBinary(t)
	s := startForTest(t, Config{DBName: "x", User: "u", UpstreamPort: 1})
	pid, dir := s.PID(), s.Dir()
	serverproctest.InOwnSession(t, "pgbouncer", pid)
	if os.Geteuid() == 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err != nil || strings.Contains(string(b), "\nUid:\t0\t") {
			t.Errorf("pgbouncer started by root runs as root (%v)", err)
		}
	}
	if n := openFilesLimit(t, pid); n < DefaultMaxClientConn+DefaultPoolSize {
		t.Errorf("pgbouncer's open files limit %d for max_client_conn %d", n, DefaultMaxClientConn)
	}
	serverproctest.StopLeavesNothing(t, "pgbouncer", s, pid, dir)
	if err := s.Restart(context.Background()); err == nil {
		t.Error("Restart of a stopped pooler did not fail")
	}
}

func TestStopAllStopsEverything(t *testing.T) {
	needBinary(t)
	a, b := startForTest(t, Config{DBName: "x", User: "u", UpstreamPort: 1}), startForTest(t, Config{DBName: "x", User: "u", UpstreamPort: 1})
	pids := []int{a.PID(), b.PID()}
	if err := StopAll(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if serverproc.Alive(pid) {
			t.Errorf("pgbouncer %d alive after StopAll", pid)
		}
	}
}

// TestWatchdogStopsThePoolerWhenOwnerIsKilled starts a pooler from a child process (this test
// binary re-run), SIGKILLs that process, and checks the watchdog kills the pooler and removes
// its directory.
func TestWatchdogStopsThePoolerWhenOwnerIsKilled(t *testing.T) {
	needBinary(t)
	serverproctest.WatchdogCleansUp(t, "pgbouncer", 15*time.Second, func() (int, string, error) {
		s, err := Start(context.Background(), Config{DBName: "x", User: "u", UpstreamPort: 1})
		if err != nil {
			return 0, "", err
		}
		return s.PID(), s.Dir(), nil
	})
}

func TestBadConfigIsRefusedBeforeAnythingStarts(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Binary: "/nonexistent/pgbouncer", DBName: "x", User: "u"}, "/nonexistent/pgbouncer"},
		{Config{DBName: "x", User: "u", Mode: "statement"}, `pool mode "statement"`},
		{Config{DBName: "x", User: "u", PoolSize: -1}, "pool size -1"},
		{Config{DBName: "", User: "u"}, "database name"},
		{Config{DBName: "x", User: "u v"}, `user name "u v"`},
		{Config{DBName: "x", User: AdminUser}, "console's own"},
		{Config{DBName: "x", User: "u", ConnectQuery: "SET a = 1;\nSET b = 2"}, "line break"},
	} {
		dir := t.TempDir()
		c.cfg.TempDir = dir
		_, err := Start(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v; want one line naming %s", c.cfg, err, c.want)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%+v: %s left in %s", c.cfg, left[0].Name(), dir)
		}
	}
}

func TestMissingBinaryIsAClearError(t *testing.T) {
	t.Setenv(BinaryEnv, "")
	t.Setenv("PATH", t.TempDir())
	defer func(d string) { debianBinary = d }(debianBinary)
	debianBinary = "/nonexistent/pgbouncer"
	if _, err := FindBinary(""); err == nil || !strings.Contains(err.Error(), "apt-get install pgbouncer") {
		t.Errorf("FindBinary with nothing installed: %v", err)
	}
}

// TestServerLoginTrustAndPassword: the pooler logs in to a PostgreSQL that trusts its user
// (no password), and to one that asks a SCRAM or a clear-text password (the temporary
// server's own); with a wrong password its clients get the server's refusal.
func TestServerLoginTrustAndPassword(t *testing.T) {
	needBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := pgserver.Start(ctx, pgserver.Config{Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	admin, err := pgx.Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	hba := filepath.Join(srv.Dir(), "data", "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	lines := "host all trusted 127.0.0.1/32 trust\nhost all scrammed 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(hba, append([]byte(lines), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE ROLE trusted LOGIN", "SET password_encryption = 'scram-sha-256'",
		"CREATE ROLE scrammed LOGIN PASSWORD 'pw''s'", "SELECT pg_reload_conf()"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	base := upstream(t, srv)
	for _, c := range []struct{ user, password, refused string }{
		{"trusted", "", ""},
		{"scrammed", "pw's", ""},
		{base.User, base.Password, ""}, // initdb's password authentication
		{"scrammed", "wrong", "password authentication failed"},
	} {
		cfg := base
		cfg.User, cfg.Password = c.user, c.password
		s := startForTest(t, cfg)
		conn, err := pgx.Connect(ctx, s.ClientURL())
		var who string
		if err == nil {
			err = conn.QueryRow(ctx, "SELECT current_user").Scan(&who)
			conn.Close(ctx)
		}
		switch {
		case c.refused == "" && (err != nil || who != c.user):
			t.Errorf("%s through the pooler: %q, %v", c.user, who, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s with a wrong password: %v; want %q", c.user, err, c.refused)
		}
		_ = s.Stop()
	}
}

// lowFileLimitEnv marks the child process TestFileLimitFitsMaxClientConn runs itself in.
const lowFileLimitEnv = "HOTSPOTKIT_TEST_LOW_FILE_LIMIT"

// lowFileLimit is the hard RLIMIT_NOFILE of that child: a machine's ordinary limit, where a
// container's (often 1Mi) would have the test ask for a pooler of a million clients.
const lowFileLimit = 4096

// TestFileLimitFitsMaxClientConn: the pooler's file descriptor limit fits max_client_conn,
// beyond this process's hard limit where it can be raised (root, with CAP_SYS_RESOURCE); where
// it cannot, Start says so in one line. It runs in a child process of this test binary whose
// limit is lowered to lowFileLimit first, whatever this machine's is.
func TestFileLimitFitsMaxClientConn(t *testing.T) {
	needBinary(t)
	if os.Getenv(lowFileLimitEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileLimitFitsMaxClientConn$", "-test.v")
		cmd.Env = append(os.Environ(), lowFileLimitEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestFileLimitFitsMaxClientConn") {
			t.Fatalf("the test with the file limit lowered to %d: %v\n%s", lowFileLimit, err, out)
		}
		t.Logf("with the file limit lowered to %d:\n%s", lowFileLimit, out)
		return
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Max = min(rl.Max, lowFileLimit)
	rl.Cur = min(rl.Cur, rl.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	cfg := Config{DBName: "x", User: "u", UpstreamPort: 1, MaxClientConn: int(rl.Max) + 1000, TempDir: t.TempDir()}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		if !strings.Contains(err.Error(), "file descriptors") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("max_client_conn beyond the hard limit: %v; want the limit raised or one line saying it cannot be", err)
		}
		t.Logf("refused: %v", err)
		return
	}
	defer s.Stop()
	if n := openFilesLimit(t, s.PID()); n < cfg.MaxClientConn+DefaultPoolSize {
		t.Errorf("pgbouncer's open files limit %d for max_client_conn %d", n, cfg.MaxClientConn)
	}
}

// openFilesLimit is process pid's soft RLIMIT_NOFILE.
func openFilesLimit(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[1] == "open" && f[2] == "files" {
			n, err := strconv.Atoi(f[3])
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no open files limit in %s", b)
	return 0
}
