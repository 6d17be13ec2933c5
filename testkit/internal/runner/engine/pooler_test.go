package engine_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// needPgBouncer skips (fails under CI) when pgbouncer is not installed.
func needPgBouncer(t *testing.T) {
	t.Helper()
	if _, err := pgbouncer.FindBinary(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}

// TestThroughPgBouncer runs sync and async-compact through a temporary PgBouncer in
// transaction mode with a pool of 4 server connections for 40 client connections: every write
// verified, PostgreSQL never held more than the pool's 4 sessions of the service, and the
// report says what the pooler did.
func TestThroughPgBouncer(t *testing.T) {
	needPgBouncer(t)
	code, rep, stderr := suitetest.Run(t, usagecounter.New(), suitetest.Shared(t, "--calibrate=false", "--modes", "sync,async-compact",
		"--requests", "600", "--concurrency", "40", "--max-connections", "40", "--pooler", "pgbouncer", "--pooler-pool-size", "4")...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		p := r.Pooler
		if p == nil {
			t.Fatalf("%s: no pooler in the report", r.Mode)
		}
		if p.Kind != "pgbouncer" || !p.Managed || p.Mode != "transaction" || p.PoolSize != 4 || p.Samples == 0 || p.Transactions == 0 {
			t.Errorf("%s: pooler %+v", r.Mode, *p)
		}
		if n := r.Pool.MaxServerSessions; n < 1 || n > 4 {
			t.Errorf("%s: PostgreSQL held %d sessions of the service at most, want 1..4 (the pooler's pool)", r.Mode, n)
		}
		if p.MaxServersActive > 4 {
			t.Errorf("%s: %d server connections active in the pooler, want at most 4", r.Mode, p.MaxServersActive)
		}
		if r.Config.Pooler != "pgbouncer" || r.Config.PoolerPoolSize != 4 || r.Config.PoolerMode != "transaction" {
			t.Errorf("%s: config %+v", r.Mode, r.Config)
		}
	}
	if !strings.Contains(stderr, "through PgBouncer") || !strings.Contains(stderr, "where requests waited") {
		t.Errorf("the summary does not say where requests waited:\n%s", stderr)
	}
}

// TestPoolerFaults strikes the pooler, its process and its hop, in sync and outbox runs: every
// write lands exactly once. The cases run side by side: none counts the server's sessions.
func TestPoolerFaults(t *testing.T) {
	needPgBouncer(t)
	for _, fault := range []string{"pooler-restart@200ms", "pooler-pause@200ms+300ms", "net-reset:pooler@200ms", "net-blackhole:pooler@200ms+300ms"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel() // each run has a schema and a pooler of its own; most of it is waiting
			code, rep, stderr := suitetest.Run(t, usagecounter.New(), suitetest.Shared(t, "--calibrate=false", "--modes", "sync,outbox",
				"--requests", "1000000", "--duration", "1s", "--concurrency", "20", "--max-connections", "20",
				"--pooler", "pgbouncer", "--pooler-pool-size", "4", "--max-tries", "3", "--fault", fault)...)
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, r := range rep.Runs {
				suitetest.Verified(t, r)
				if !suitetest.Fired(r, strings.SplitN(strings.SplitN(fault, "@", 2)[0], ":", 2)[0]) {
					t.Errorf("%s: %s did not strike: %+v", r.Mode, fault, r.Faults)
				}
				if rc := r.Reconciliation; rc == nil || rc.Lost != 0 || rc.Duplicated != 0 {
					t.Errorf("%s: reconciliation %+v", r.Mode, rc)
				}
			}
		})
	}
}

// TestPoolerURL runs through an existing PgBouncer given by its console's URL, which sets the
// run's schema on its server connections; one that does not is refused before the run, and so
// is a console URL that reaches PostgreSQL itself.
func TestPoolerURL(t *testing.T) {
	needPgBouncer(t)
	srv := testdb.Server(t)
	u, err := url.Parse(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	const schema = "hotspot_pooler_url"
	cfg, err := pgbouncer.UpstreamConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.PoolSize, cfg.ConnectQuery = 4, "SET search_path TO "+schema
	bouncer, err := pgbouncer.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bouncer.Stop() })
	args := func(extra ...string) []string {
		return append([]string{"--calibrate=false", "--postgres-url", srv.DSN(), "--modes", "sync", "--requests", "200",
			"--concurrency", "10", "--max-connections", "10", "--pooler-url", bouncer.ConsoleURL()}, extra...)
	}
	code, rep, stderr := suitetest.Run(t, usagecounter.New(), args("--schema", schema)...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	if r.Pooler == nil || r.Pooler.Managed || r.Pooler.PoolSize != 4 || r.Pooler.Mode != "transaction" || r.Pool.MaxServerSessions > 4 {
		t.Errorf("pooler %+v, %d server sessions", r.Pooler, r.Pool.MaxServerSessions)
	}
	if strings.Contains(r.Config.PoolerURL, pw) && pw != "" {
		t.Errorf("the report records the console's password: %s", r.Config.PoolerURL)
	}

	// Another schema: the pooler's server connections are not in it.
	code, stderr = refused(args()...)
	if code != cli.ExitUsage || !strings.Contains(stderr, "not the run's") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("a pooler in another schema: exit %d, want %d and one line\n%s", code, cli.ExitUsage, stderr)
	}
	// PostgreSQL is not a PgBouncer console.
	notConsole := *u
	notConsole.Path = "/pgbouncer"
	code, stderr = refused("--calibrate=false", "--postgres-url", srv.DSN(), "--requests", "10", "--pooler-url", notConsole.String())
	if code != cli.ExitUsage || !strings.Contains(stderr, "PgBouncer") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("--pooler-url at PostgreSQL: exit %d, want %d and one line\n%s", code, cli.ExitUsage, stderr)
	}
}

// TestPoolerPoolAboveMaxConnections: a pooler's pool the server cannot hold is refused before
// the run.
func TestPoolerPoolAboveMaxConnections(t *testing.T) {
	needPgBouncer(t)
	code, stderr := refused(suitetest.Shared(t, "--calibrate=false", "--requests", "10", "--pooler", "pgbouncer", "--pooler-pool-size", "10000")...)
	if code != cli.ExitUsage || !strings.Contains(stderr, "the server's max_connections leaves") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want %d with no run\n%s", code, cli.ExitUsage, stderr)
	}
}

// refused runs the counter suite with args, expecting no report: its exit code and stderr.
func refused(args ...string) (int, string) {
	var stdout, stderr strings.Builder
	code := cli.Execute(usagecounter.New(), append(args, "--output", "/dev/null"), &stdout, &stderr)
	return code, stderr.String()
}
