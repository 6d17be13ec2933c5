package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/hotrow"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// needMariaDB skips the test where MariaDB is not installed (fails it in CI).
func needMariaDB(t *testing.T) {
	t.Helper()
	mariadbtest.Server(t)
}

// A run on the temporary MariaDB, through --db-rtt's proxy, with every fault a sync run on
// MySQL takes: its sessions killed (KILL CONNECTION), the server restarted and crashed
// (recovering), a conn-storm; verified exactly, its lock waiters on the hot row seen, InnoDB's
// figures read, the probes' pings through the proxy measured, and the report naming the
// database's kind, version and InnoDB settings.
func TestMariaDBRunWithFaults(t *testing.T) {
	needMariaDB(t)
	code, rep, stderr := suitetest.Run(t, hotrow.Suite{}, "--database", "mariadb", "--requests", "0", "--duration", "3s",
		"--concurrency", "12", "--max-tries", "20", "--retry-backoff-ms", "20", "--db-rtt", "500us",
		"--innodb-deadlock-detect", "off", "--innodb-lock-wait-timeout", "10s",
		"--fault", "terminate-backends@400ms", "--fault", "restart-postgres@900ms", "--fault", "conn-storm@1600ms=16",
		"--fault", "crash-postgres@2000ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	if r.Load.CompletedRequests < 50 {
		t.Errorf("%d requests completed in 3 s", r.Load.CompletedRequests)
	}
	for _, kind := range []string{"terminate-backends", "restart-postgres", "conn-storm", "crash-postgres"} {
		if !suitetest.Fired(r, kind) {
			t.Errorf("%s did not strike: %+v", kind, r.Faults)
		}
	}
	for _, ev := range r.Faults {
		if ev.Kind == "crash-postgres" && !strings.Contains(ev.Detail, "crash recovery") {
			t.Errorf("the crash: %q", ev.Detail)
		}
	}
	if r.Pool.MaxConns != int32(suitetest.TestPoolConns) || r.Pool.MaxAcquired < 1 {
		t.Errorf("the load's pool as the monitor saw it: %+v", r.Pool)
	}
	if r.LockMonitor.MaxWaitersByRelation["hot_row"] < 1 {
		t.Errorf("no lock waiter seen on hot_row: %+v", r.LockMonitor.MaxWaitersByRelation)
	}
	// The restarts turned the commit counter the figures had turned on off again: a window
	// with a restart says so, and counts none.
	if db := r.Database; db == nil || db.InnoDB == nil || db.RedoBytes <= 0 || !db.InnoDB.Restarted || db.NotRead["xact_commit"] == "" {
		t.Errorf("InnoDB's figures: %+v", db)
	}
	env := rep.Environment
	if env.DatabaseKind != "mariadb" || !strings.Contains(env.DatabaseVersion, "MariaDB") || env.DatabaseSettings["innodb_deadlock_detect"] != "OFF" {
		t.Errorf("environment: kind %q, version %q, settings %v", env.DatabaseKind, env.DatabaseVersion, env.DatabaseSettings)
	}
	if cfg := r.Config; cfg.Database != "mariadb" || cfg.InnoDBDeadlockDetect != "off" || cfg.InnoDBLockWaitTimeoutMs != 10000 || cfg.InnoDBFlushLogAtTrxCommit != "1" {
		t.Errorf("the run's config: database %q, deadlock detect %q, lock wait %v ms, flush %q", cfg.Database, cfg.InnoDBDeadlockDetect, cfg.InnoDBLockWaitTimeoutMs, cfg.InnoDBFlushLogAtTrxCommit)
	}
	if n := r.Network; n == nil || !n.Postgres.Proxied || n.Postgres.Probes == 0 || n.Postgres.RTTMs.P50 < 0.45 {
		t.Errorf("the probes through the proxy: %+v", n)
	}
	if !strings.Contains(stderr, "MariaDB") {
		t.Errorf("the summary does not name the database's kind:\n%s", stderr)
	}
}

// --databases postgres,mariadb with a server of each given by URL (the shared test servers
// stand in for the user's): one invocation runs the same work on both, each kind on its URL's
// server and no temporary one, every run verified and labelled by the kind its server is, the
// ladder over the kinds in the report; each server keeps a bystander's rows and session, no
// password is printed, and the run's schema and database are gone from both afterwards.
func TestDatabasesLadderOnServersByURL(t *testing.T) {
	pgOther, myOther := testdb.New(t), mariadbtest.New(t) // the user's own schema and database
	ctx := context.Background()
	if _, err := pgOther.Admin().Exec(ctx, "CREATE TABLE mine (v int); INSERT INTO mine VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	myOther.MustExec(t, "CREATE TABLE mine (v INT)", "INSERT INTO mine VALUES (42)")
	myBystander := myOther.Conn(t, "someone-else")
	var pgBefore, myBefore int64
	if err := pgOther.Admin().QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pgBefore); err != nil {
		t.Fatal(err)
	}
	if err := myBystander.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&myBefore); err != nil {
		t.Fatal(err)
	}
	pgURL, myURL := testdb.Server(t).DSN(), mariadbtest.URL(t)
	name := "hotspot_byurl_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	code, rep, stderr := suitetest.Run(t, usagecounter.New(), "--databases", "postgres,mariadb", "--postgres-url", pgURL, "--mysql-url", myURL,
		"--schema", name, "--modes", "sync", "--requests", "300", "--concurrency", "8")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("%d runs, want sync on each kind", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		kind, c := r.Config.DatabaseKind(), r.Config
		onURL := map[string]string{"postgres": c.PostgresURL, "mariadb": c.MySQLURL}[kind]
		other := map[string]string{"postgres": c.MySQLURL, "mariadb": c.PostgresURL}[kind]
		if c.ManagedPostgres || onURL == "" || other != "" || len(c.Ladder["database"]) != 2 || (kind == "mariadb") != (r.Database != nil && r.Database.InnoDB != nil) {
			t.Errorf("sync on %s: managed %v, URLs %q %q, ladder %v", kind, c.ManagedPostgres, c.PostgresURL, c.MySQLURL, c.Ladder)
		}
		if r.Load.CompletedRequests != 300 {
			t.Errorf("sync on %s completed %d of 300", kind, r.Load.CompletedRequests)
		}
	}
	servers := rep.Environment.Databases
	if len(servers) != 2 || servers[0].Kind != "mariadb" || !strings.Contains(servers[0].Version, "MariaDB") || servers[1].Kind != "postgres" || servers[0].Managed || servers[1].Managed ||
		servers[0].URL != database.RedactURL(myURL) || servers[1].URL != database.RedactURL(pgURL) || servers[0].Schema != name || servers[1].Schema != name {
		t.Errorf("the environment's servers: %+v", servers)
	}
	if len(rep.Ladders) != 1 || rep.Ladders[0].Axis != "database" || len(rep.Ladders[0].Levels) != 2 {
		t.Errorf("ladders: %+v", rep.Ladders)
	}
	for _, want := range []string{"sync on MariaDB", "sync on PostgreSQL"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{pgURL, myURL} {
		parsed, _ := url.Parse(u)
		if password, ok := parsed.User.Password(); ok && (strings.Contains(stderr, password) || strings.Contains(string(raw), password)) {
			t.Errorf("the password of %s is printed", database.RedactURL(u))
		}
	}
	var pgV, myV int
	var pgAfter, myAfter int64
	if err := pgOther.Admin().QueryRow(ctx, "SELECT v, pg_backend_pid() FROM mine").Scan(&pgV, &pgAfter); err != nil || pgV != 42 || pgAfter != pgBefore {
		t.Errorf("PostgreSQL's bystander: v %d, session %d then %d (%v)", pgV, pgBefore, pgAfter, err)
	}
	if err := myBystander.QueryRowContext(ctx, "SELECT v, CONNECTION_ID() FROM mine").Scan(&myV, &myAfter); err != nil || myV != 42 || myAfter != myBefore {
		t.Errorf("MariaDB's bystander: v %d, session %d then %d (%v)", myV, myBefore, myAfter, err)
	}
	var left int
	if err := pgOther.Admin().QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", name).Scan(&left); err != nil || left != 0 {
		t.Errorf("the run's schema %s is still on PostgreSQL (%d, %v)", name, left, err)
	}
	if err := myOther.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&left); err != nil || left != 0 {
		t.Errorf("the run's database %s is still on MariaDB (%d, %v)", name, left, err)
	}

	// The kind on the axis is what the server is, read before anything starts: the shared
	// MariaDB asked for as mysql runs as mariadb, in the ladder, the run's config and its
	// label; beside a temporary MariaDB it is refused, as a server that does not answer is,
	// with one line and exit 2, no run made and no temporary server started.
	code, rep, stderr = suitetest.Run(t, usagecounter.New(), "--databases", "mysql", "--mysql-url", myURL, "--modes", "sync", "--requests", "100", "--concurrency", "4")
	if code != 0 || len(rep.Runs) != 1 {
		t.Fatalf("--databases mysql on a MariaDB: exit %d, %d runs\n%s", code, len(rep.Runs), stderr)
	}
	if c := rep.Runs[0].Config; c.Database != "mariadb" || !slices.Equal(c.Ladder["database"], []results.Value{results.Text("mariadb")}) ||
		!strings.Contains(stderr, "mysql in --databases is --mysql-url's server, a MariaDB: its runs are mariadb's") || !strings.Contains(stderr, "sync on MariaDB") {
		t.Errorf("--databases mysql on a MariaDB: database %q, ladder %v\n%s", c.Database, c.Ladder, stderr)
	}
	for args, want := range map[string]string{
		"--databases mariadb,mysql --mysql-url " + myURL:                        "is a MariaDB server, not a MySQL",
		"--databases postgres,mariadb --mysql-url mysql://root:pw@127.0.0.1:1/": "connecting to mysql://root:REDACTED@127.0.0.1:1/",
	} {
		var stdout, errs bytes.Buffer
		code := cli.Execute(usagecounter.New(), strings.Fields(args), &stdout, &errs)
		first, _, _ := strings.Cut(errs.String(), "\n")
		if code != cli.ExitUsage || !strings.Contains(first, want) || strings.Contains(errs.String(), ":pw@") || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, want %d and a first line saying %q:\n%s", database.RedactURL(args), code, cli.ExitUsage, want, errs.String())
		}
	}
}

// A run on a server given by URL (the shared test MariaDB stands in for the user's) keeps to
// its own database: another database's rows untouched, a bystander's session alive through
// terminate-backends, the password printed nowhere, the run's database gone afterwards.
func TestMySQLURLServerIsLeftAsItWas(t *testing.T) {
	other := mariadbtest.New(t) // the user's own database
	other.MustExec(t, "CREATE TABLE mine (v INT)", "INSERT INTO mine VALUES (42)")
	bystander := other.Conn(t, "someone-else")
	var before int64
	if err := bystander.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	u := mariadbtest.URL(t)
	parsed, _ := url.Parse(u)
	password, _ := parsed.User.Password()
	code, rep, stderr := suitetest.RunMySQL(t, hotrow.Suite{}, "--requests", "300", "--concurrency", "8", "--max-tries", "10",
		"--fault", "terminate-backends@50ms", "--calibrate")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	if !suitetest.Fired(r, "terminate-backends") {
		t.Errorf("terminate-backends: %+v", r.Faults)
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"stderr": stderr, "the report": string(raw)} {
		if strings.Contains(text, password) {
			t.Errorf("the password is in %s", where)
		}
	}
	if !strings.Contains(rep.Environment.DatabaseURL, "REDACTED") {
		t.Errorf("the environment's URL %q", rep.Environment.DatabaseURL)
	}
	if c := rep.Environment.Calibration; c == nil || !c.Skipped || !strings.Contains(c.Why, "not calibrated on MySQL") || !strings.Contains(stderr, "not calibrated on MySQL") {
		t.Errorf("--calibrate on MySQL: %+v", c)
	}
	var v, after int64
	if err := bystander.QueryRowContext(context.Background(), "SELECT v, CONNECTION_ID() FROM mine").Scan(&v, &after); err != nil || v != 42 || after != before {
		t.Errorf("the bystander's session and its database: v %d, session %d then %d (%v)", v, before, after, err)
	}
	var n int
	if err := other.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", rep.Environment.Schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("the run's database %s is still on the server (%d, %v)", rep.Environment.Schema, n, err)
	}
}

// Bad input about the database is refused with one line and exit 2 before anything starts.
func TestMySQLBadInputIsAUsageError(t *testing.T) {
	needMariaDB(t)
	for args, want := range map[string]string{
		"--mysql-url postgres://u:pw@h/db":                           "want mysql://",
		"--postgres-url mysql://u:pw@h/":                             "goes with --mysql-url",
		"--mysql-url mysql://root:pw@127.0.0.1:1/":                   "connecting to mysql://root:REDACTED@127.0.0.1:1/",
		"--database mariadb --pooler pgbouncer":                      "--pooler is PostgreSQL's",
		"--database mariadb --pg-bin-dir /usr/lib/postgresql/15/bin": "--pg-bin-dir is PostgreSQL's",
		"--database mariadb --min-connections 2":                     "--min-connections is PostgreSQL's",
		"--innodb-deadlock-detect off":                               "needs --database mariadb or --mysql-url",
		"--mysql-url mysql://u:pw@h/ --innodb-deadlock-detect off":   "a --mysql-url server's own is read",
		"--mysql-url mysql://u:pw@h/ --postgres-url postgres://h/db": "exclude each other",
		"--database mariadb --fault lock-timeout=1500":               "whole seconds",
		"--database mariadb --innodb-lock-wait-timeout 1500ms":       "whole seconds",
	} {
		t.Run(args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Execute(hotrow.Suite{}, strings.Fields(args), &stdout, &stderr)
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if code != cli.ExitUsage || !strings.Contains(first, want) || strings.Contains(stderr.String(), ":pw@") {
				t.Errorf("exit %d, want %d and a first line saying %q:\n%s", code, cli.ExitUsage, want, stderr.String())
			}
		})
	}
}

// killedEnv makes this test binary the run that TestMariaDBGoneAfterTheRunIsKilled kills.
const killedEnv = "HOTSPOTKIT_TEST_KILLED_MARIADB_RUN"

// A run on the temporary MariaDB whose process is SIGKILLed leaves no mariadbd and no
// directory behind (the watchdog's work).
func TestMariaDBGoneAfterTheRunIsKilled(t *testing.T) {
	if os.Getenv(killedEnv) == "1" {
		os.Exit(cli.Execute(hotrow.Suite{}, []string{"--database", "mariadb", "--calibrate=false", "--requests", "0", "--duration", "10m",
			"--concurrency", "2", "--max-connections", "2", "-o", os.DevNull}, os.Stdout, os.Stderr))
	}
	needMariaDB(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), killedEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	var pid int
	var dir string
	for deadline := time.Now().Add(time.Minute); pid == 0; {
		for p := range suitetest.Processes("mariadbd", cmd.Process.Pid) {
			if d := dataDirOf(p); d != "" { // not mariadbd --version, the binaries' check
				pid, dir = p, d
			}
		}
		select {
		case <-exited:
			t.Fatalf("the run ended before it was killed:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mariadbd of the run's within a minute:\n%s", out.String())
		}
	}
	time.Sleep(500 * time.Millisecond) // into the run
	_ = cmd.Process.Kill()
	<-exited
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (suitetest.Alive(pid) || exists(dir)) {
		time.Sleep(100 * time.Millisecond)
	}
	if suitetest.Alive(pid) {
		t.Errorf("mariadbd %d still running after its owner was SIGKILLed", pid)
	}
	if exists(dir) {
		t.Errorf("the server's directory %s is still there after its owner was SIGKILLed", dir)
	}
}

// dataDirOf is the working directory of mariadbd pid: its --datadir's parent ("" when it has
// none).
func dataDirOf(pid int) string {
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	for _, arg := range strings.Split(string(cmdline), "\x00") {
		if d, ok := strings.CutPrefix(arg, "--datadir="); ok {
			return filepath.Dir(d)
		}
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A partition that never heals, struck by the kit's proxy on a MySQL run's path: the requests
// in flight are cut off by the request timeout and looked up afterwards on the engine's own
// connection, which does not cross the path, as on PostgreSQL (docs/network.md).
func TestMySQLPartitionThatNeverHeals(t *testing.T) {
	code, rep, stderr := suitetest.RunMySQL(t, hotrow.Suite{}, "--requests", "0", "--duration", "1s", "--concurrency", "4",
		"--request-timeout", "1s", "--fault", "net-blackhole:pg@300ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	if !suitetest.Fired(r, "net-blackhole") || r.Load.ErrorCounts["request_timeout"] == 0 {
		t.Errorf("the partition: faults %+v, errors %v", r.Faults, r.Load.ErrorCounts)
	}
}

// --databases postgres,mariadb runs the same work on a temporary server of each kind, one
// after the other, into one report: every run verified and labelled by its kind, both servers
// in the environment with their versions, a ladder over the kinds per mode, the summary naming
// each run's database.
func TestDatabasesLadderRunsBothKinds(t *testing.T) {
	needMariaDB(t)
	code, rep, stderr := suitetest.Run(t, usagecounter.New(), "--databases", "postgres,mariadb", "--modes", "sync,async-compact",
		"--requests", "300", "--concurrency", "12")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want sync and async-compact on each kind", len(rep.Runs))
	}
	seen := map[string]int{}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		kind := r.Config.DatabaseKind()
		seen[kind]++
		if len(r.Config.Ladder["database"]) != 2 || (kind == "mariadb") != (r.Database != nil && r.Database.InnoDB != nil) {
			t.Errorf("%s on %s: ladder %v, InnoDB's figures %v", r.Mode, kind, r.Config.Ladder, r.Database)
		}
	}
	if seen["postgres"] != 2 || seen["mariadb"] != 2 {
		t.Errorf("runs by kind: %v", seen)
	}
	servers := rep.Environment.Databases
	if len(servers) != 2 || servers[0].Kind != "mariadb" || !strings.Contains(servers[0].Version, "MariaDB") ||
		servers[1].Kind != "postgres" || !strings.HasPrefix(servers[1].Version, "1") || !servers[0].Managed || !servers[1].Managed {
		t.Errorf("the environment's servers: %+v", servers)
	}
	if len(rep.Ladders) != 2 || rep.Ladders[0].Axis != "database" || len(rep.Ladders[0].Levels) != 2 {
		t.Errorf("ladders: %+v", rep.Ladders)
	}
	for _, want := range []string{"sync on MariaDB", "sync on PostgreSQL", "async-compact on MariaDB", "async-compact on PostgreSQL", "sync database ladder: mariadb → "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
	if err := judge.SameDatabase(rep, rep); err != nil {
		t.Errorf("a report of both kinds does not pair with itself: %v", err)
	}
}
