package engine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// declared is a sync-only suite that declares its backends, faults and SQL, and checks in
// Verify which tables the run's schema holds.
type declared struct{}

func (declared) Info() testkit.Info {
	return testkit.Info{Name: "declared", Summary: "a suite that declares what it supports", Example: "declared",
		Modes: []testkit.Mode{testkit.Sync, testkit.Async}, DefaultModes: []testkit.Mode{testkit.Sync},
		Faults: []string{testkit.FaultLockTimeout, testkit.FaultPauseFlush},
		SQL: fstest.MapFS{
			"declared.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS declared_rows (n bigint);")},
			"ignored.txt":  {Data: []byte("not SQL")},
		}}
}

func (declared) Seed(context.Context, *testkit.Run) error { return nil }

func (declared) Workload(_ context.Context, r *testkit.Run) (*testkit.Workload, error) {
	return &testkit.Workload{Op: func(context.Context, *testkit.Request) error { return nil }}, nil
}

func (declared) Verify(ctx context.Context, r *testkit.Run, _ testkit.Result) ([]results.Check, error) {
	c := r.NewChecks()
	for table, want := range map[string]int64{"declared_rows": 1, "usage": 1, "request_candidates": 0, "aux_applied_records": 0} {
		n, err := testkit.QueryInt(ctx, r.Admin(), `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1`, table)
		if err != nil {
			return nil, err
		}
		c.Int("table "+table+" exists", want, n)
	}
	return c.List(), nil
}

// A bad --hot-key-dist, or one given to a suite without hot sets, is refused with one line and
// exit 2 before any server starts.
func TestBadHotKeyDistIsAUsageError(t *testing.T) {
	for _, c := range []struct {
		suite testkit.Suite
		args  string
		want  string
	}{
		{usagecounter.New(), "--hot-keys 100 --hot-key-dist zipf:0", "--hot-key-dist: zipf needs θ > 0, got 0"},
		{usagecounter.New(), "--hot-keys 100 --hot-key-dist zipf:x", "--hot-key-dist: zipf needs θ > 0, got x"},
		{usagecounter.New(), "--hot-keys 100 --hot-key-dist pareto:1", `--hot-key-dist: "pareto:1" is none of uniform, zipf:θ, exponential:λ`},
		{declared{}, "--hot-key-dist zipf:1", "--hot-key-dist: declared has no hot sets to spread its requests over"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Execute(c.suite, strings.Fields(c.args), &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n") // then where --help is
		if code != cli.ExitUsage || first != c.suite.Info().Name+": "+c.want {
			t.Errorf("%s: exit %d, want %d and a line saying %q:\n%s", c.args, code, cli.ExitUsage, c.want, stderr.String())
		}
	}
}

// TestUndeclaredCombinationsAreUsageErrors: each is refused with one line and exit 2 before
// any server starts (no --postgres-url is given: passing validation would start one).
func TestUndeclaredCombinationsAreUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--queue-backend redis --modes async":    "--queue-backend redis: declared runs on memory only",
		"--fault terminate-backends@1s":          "declared cannot take terminate-backends (it takes: lock-timeout, pause-flush)",
		"--fault pause-flush@1s+1s --modes sync": "needs a mode with flushers",
	} {
		t.Run(args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Execute(declared{}, strings.Fields(args), &stdout, &stderr)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, cli.ExitUsage, stderr.String())
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if !strings.Contains(first, want) {
				t.Errorf("first line %q does not say %q", first, want)
			}
		})
	}
	var stderr bytes.Buffer
	code := cli.Execute(codeless[int64]{}, []string{"--fault", "kill-consumer@1s"}, &bytes.Buffer{}, &stderr)
	if code != cli.ExitUsage || !strings.Contains(stderr.String(), "needs --queue-backend redis") {
		t.Errorf("kill-consumer on the memory backend: exit %d\n%s", code, stderr.String())
	}
	// A suite's own fault kind is taken only by a suite that declares it, not by one that
	// takes every kind (Info.Faults nil): it has no hook to cause it.
	stderr.Reset()
	code = cli.Execute(codeless[int64]{}, []string{"--fault", "kill-worker@1s"}, &bytes.Buffer{}, &stderr)
	if code != cli.ExitUsage || !strings.Contains(stderr.String(), "codeless cannot take kill-worker (it takes: every kind but kill-worker)") {
		t.Errorf("kill-worker in a suite that did not declare it: exit %d\n%s", code, stderr.String())
	}
}

// TestSuiteSQLIsAppliedAlone: the run's schema holds the shared tables and the suite's own,
// and no other suite's.
func TestSuiteSQLIsAppliedAlone(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, declared{}, "--requests", "10", "--concurrency", "2", "--fault", "lock-timeout=1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	suitetest.Verified(t, rep.Runs[0])
}
