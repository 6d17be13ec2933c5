package script_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/examples/scripts"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// example are the flags that run the shipped example named name (mysql/NAME: one written in
// MySQL's SQL): its script, its init file and its documented variables, from the files a user
// copies.
func example(t *testing.T, name string) []string {
	t.Helper()
	for _, ex := range append(scripts.List(), scripts.ListMySQL()...) {
		if ex.Script != name {
			continue
		}
		dir := t.TempDir()
		write := func(f string) string {
			b, err := scripts.Files.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.Base(f))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		args := []string{"-f", write(ex.Script), "--init-file", write(ex.Init)}
		for _, s := range ex.Set {
			args = append(args, "--set", s)
		}
		return args
	}
	t.Fatalf("no example %s", name)
	return nil
}

// verifiedEveryMode runs args in every mode and wants each run verified, every request found
// exactly once.
func verifiedEveryMode(t *testing.T, args ...string) *results.Report {
	t.Helper()
	return verifiedEveryModeBy(t, suitetest.RunShared, args...)
}

// verifiedEveryModeBy is verifiedEveryMode on the database run runs on.
func verifiedEveryModeBy(t *testing.T, run func(*testing.T, testkit.Suite, ...string) (int, *results.Report, string),
	args ...string) *results.Report {
	t.Helper()
	code, rep, stderr := run(t, script.New(), args...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want one per mode", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if rc := r.Reconciliation; rc == nil || rc.Lost != 0 || rc.Duplicated != 0 || rc.Persisted != rc.Acknowledged {
			t.Errorf("%s: reconciliation %+v", r.Mode, rc)
		}
	}
	return rep
}

// TestTPCB: pgbench's own tpcb-like script, unchanged, on the shipped init file at scale 1:
// every mode verified — every account, teller and branch balance exact, the history rows
// exactly the applied transactions'.
func TestTPCB(t *testing.T) {
	rep := verifiedEveryMode(t, append(example(t, "tpcb-like.sql"), "--requests", "600", "--concurrency", "16")...)
	for _, r := range rep.Runs {
		for _, want := range []string{"pgbench_history: rows inserted = the applied requests' rows", "pgbench_branches.bbalance"} {
			if !hasCheck(r, want) {
				t.Errorf("%s: no check %q among %v", r.Mode, want, checkNames(r))
			}
		}
	}
	// Compaction merges the one branch's writes of a batch into one UPDATE. (Not the queue's
	// compacted records: a request's record is keyed by its random account, and 600 requests
	// over 100,000 accounts rarely share one in a batch.)
	compacted := rep.Runs[3]
	if got, ok := compacted.Figure("writes per UPDATE: pgbench_branches"); compacted.Mode != "async-compact" || !ok || got <= 1 {
		t.Errorf("async-compact: writes per UPDATE of pgbench_branches %v (reported: %v), want > 1", got, ok)
	}
}

// TestSkewedAccounts: tpcb-skewed at θ = 1.2 (a zipfian account among 100,000): the report's
// hottest account takes the share of the writes the law gives its first rank, 1/H(n, θ),
// within 4 standard errors; the one branch takes them all; and async-compact merges the hot
// accounts' writes (more than one a row UPDATE).
func TestSkewedAccounts(t *testing.T) {
	const requests, theta, accounts = 3000, 1.2, 100000
	code, rep, stderr := suitetest.RunShared(t, script.New(), append(example(t, "tpcb-skewed.sql"),
		"--set", "theta=1.2", "--modes", "sync,async-compact", "--requests", strconv.Itoa(requests), "--concurrency", "16")...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var h float64
	for k := 1; k <= accounts; k++ {
		h += math.Pow(float64(k), -theta)
	}
	p := 1 / h
	tolerance := 4 * math.Sqrt(p*(1-p)/requests)
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if got, ok := r.Figure("hottest row's share of writes: pgbench_accounts"); !ok || math.Abs(got-p) > tolerance {
			t.Errorf("%s: hottest account's share %v (reported: %v), want %.4f ± %.4f", r.Mode, got, ok, p, tolerance)
		}
		if got, ok := r.Figure("hottest row's share of writes: pgbench_branches"); !ok || got != 1 {
			t.Errorf("%s: the one branch's share %v (reported: %v), want 1", r.Mode, got, ok)
		}
	}
	if got, ok := rep.Runs[1].Figure("writes per UPDATE: pgbench_accounts"); !ok || got <= 1 {
		t.Errorf("async-compact: writes per UPDATE of pgbench_accounts %v (reported: %v), want > 1", got, ok)
	}
}

// TestExamplesVerifiedInEveryMode: the other shipped examples the queue modes take.
func TestExamplesVerifiedInEveryMode(t *testing.T) {
	for _, name := range []string{"simple-update.sql", "wallet-debit.sql", "usage-counter.sql"} {
		t.Run(name, func(t *testing.T) {
			verifiedEveryMode(t, append(example(t, name), "--requests", "400", "--concurrency", "16")...)
		})
	}
}

// TestRefusals: each statement the queue modes cannot take is refused before anything runs,
// exit 2, one line naming the statement's line and the reason; the same script runs in sync,
// where what its requests wrote cannot be recomputed: every request is found written once and
// the other tables unchanged, but the run reads not verified, with the reason, and exits 1.
func TestRefusals(t *testing.T) {
	init := `CREATE TABLE inventory (sku int PRIMARY KEY, qty int NOT NULL CHECK (qty >= 0), note text);
		INSERT INTO inventory SELECT g, 100, '' FROM generate_series(1, 50) g;
		CREATE TABLE audit (id int PRIMARY KEY, n int);
		INSERT INTO audit SELECT g, 0 FROM generate_series(1, 50) g;
		CREATE TABLE noisy (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
		INSERT INTO noisy SELECT g, 0 FROM generate_series(1, 50) g;
		CREATE FUNCTION noisy_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
		CREATE TRIGGER noisy_touch BEFORE UPDATE ON noisy FOR EACH ROW EXECUTE FUNCTION noisy_touch();`
	head := "\\set sku random(1, 50)\n\\set n random(1, 3)\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"a WHERE beyond the key", "UPDATE audit SET n = n + :n WHERE id = :sku AND n >= 0;", "line 3"},
		{"a CHECK on a written column", "UPDATE inventory SET qty = qty - :n WHERE sku = :sku;", "CHECK"},
		{"a trigger", "UPDATE noisy SET n = n + :n WHERE id = :sku;", "trigger"},
		{"DELETE", "DELETE FROM audit WHERE id = :sku;", "line 3"},
		{"DDL", "CREATE TABLE IF NOT EXISTS x (a int);", "line 3"},
		{"an inexact expression", "UPDATE audit SET n = n * 2 WHERE id = :sku;", "line 3"},
		{"the key not whole", "UPDATE audit SET n = n + 1 WHERE n = :sku;", "line 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			scriptFile, initFile := filepath.Join(dir, "s.sql"), filepath.Join(dir, "init.sql")
			if err := os.WriteFile(scriptFile, []byte(head+c.body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(initFile, []byte(init), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-f", scriptFile, "--init-file", initFile, "--requests", "60", "--concurrency", "4"}
			var stdout, refused strings.Builder
			code := cli.Execute(script.New(), suitetest.SharedArgs(t, append(args, "--modes", "sync,async-compact")...), &stdout, &refused)
			first, rest, _ := strings.Cut(strings.TrimSpace(refused.String()), "\n")
			if code != cli.ExitUsage || rest != "" || !strings.Contains(first, c.want) || !strings.Contains(first, "async-compact") {
				t.Fatalf("exit %d; want exit 2 and one line naming %q:\n%s", code, c.want, refused.String())
			}
			// One worker: the script's DDL, run as written, is not safe to run concurrently.
			code, rep, stderr := suitetest.RunShared(t, script.New(), append(args, "--modes", "sync", "--concurrency", "1")...)
			if code != cli.ExitFailed || len(rep.Runs) != 1 || rep.Runs[0].Load.CompletedRequests != 60 {
				t.Fatalf("sync: exit %d, want 1 (not verified)\n%s", code, stderr)
			}
			contentNotChecked(t, rep.Runs[0], stderr, c.want)
		})
	}
}

// contentNotChecked fails the test unless run r of a script the kit cannot recompute reads
// not verified — not failed — because what its requests wrote was not checked, for the
// reason why (the refusal's), every check it could make passed, and stderr's last line says
// which check was not made.
func contentNotChecked(t *testing.T, r results.Run, stderr, why string) {
	t.Helper()
	v := r.Verification
	if v.Passed || v.Unverified == nil || v.Unverified.Reason != "a check was not made: what the requests wrote" || v.Unverified.Succeeded != r.Load.CompletedRequests {
		t.Errorf("verification %+v, unverified %+v: want unverified, the content not checked", v, v.Unverified)
	}
	made := 0
	for _, c := range v.Checks {
		switch {
		case c.State == results.CheckNotChecked && c.Name == "what the requests wrote":
			if !strings.HasPrefix(c.Reason, "not recomputable: ") || !strings.Contains(c.Reason, why) || c.Expected != nil || c.Actual != nil {
				t.Errorf("check %+v: want the reason it was not made, with %q", c, why)
			}
		case c.State == results.CheckPassed:
			made++
		default:
			t.Errorf("check %+v: want every other check made and passed", c)
		}
	}
	if made == 0 || results.Verdict(v.Checks) != results.CheckNotChecked {
		t.Errorf("checks %+v: want the claims and reconciliation passed, the verdict not checked", v.Checks)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, ": NOT VERIFIED: sync: a check was not made: what the requests wrote") {
		t.Errorf("stderr's last line %q: want it to say which check was not made\n%s", last, stderr)
	}
	if !strings.Contains(stderr, `sync: check "what the requests wrote" not made: not recomputable: `) {
		t.Errorf("the summary does not say why the check was not made:\n%s", stderr)
	}
}

// TestBadScripts: a script or init file pgbench's language refuses, a missing file, an unset
// variable: one line, exit 2, nothing started.
func TestBadScripts(t *testing.T) {
	file := fileWriter(t)
	good := file("good.sql", "SELECT 1;\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-f/--file is required"},
		{[]string{"-f", filepath.Join(t.TempDir(), "missing.sql")}, "no such file"},
		{[]string{"-f", file("shell.sql", "\\shell echo hi\n")}, "line 1"},
		{[]string{"-f", file("unset.sql", "SELECT :nope;\n")}, ":nope"},
		{[]string{"-f", good, "--init-file", file("init.sql", "CREATE TABLE t (a int CHECK (a < :limit));")}, ":limit"},
		{[]string{"-f", good, "--set", "noequals"}, "NAME=VALUE"},
	} {
		var stdout, stderr strings.Builder
		code := cli.Execute(script.New(), c.args, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != cli.ExitUsage || !strings.Contains(first, c.want) {
			t.Errorf("%v: exit %d, first line %q; want 2 and %q", c.args, code, first, c.want)
		}
	}
}

// fileWriter returns a function that writes a file of a directory of the test's own and
// returns its path.
func fileWriter(t *testing.T) func(name, text string) string {
	dir := t.TempDir()
	return func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func hasCheck(r results.Run, prefix string) bool {
	for _, c := range r.Verification.Checks {
		if strings.HasPrefix(c.Name, prefix) {
			return true
		}
	}
	return false
}

func checkNames(r results.Run) []string {
	var out []string
	for _, c := range r.Verification.Checks {
		out = append(out, c.Name)
	}
	return out
}

// exampleSuite is the suite of the shipped example named name (Of), its files written out.
func exampleSuite(t *testing.T, name string) *script.Suite {
	t.Helper()
	args := example(t, name)
	var sets []string
	for k := 4; k+1 < len(args); k += 2 {
		sets = append(sets, args[k+1])
	}
	return script.Of(args[1], args[3], sets...)
}

// TestTPCBAtomicUnderFaults: TPC-B's writes are all there or not at all, and counted once, when
// connections and servers die under them (terminated backends, a restarted and a crashed
// server), with and without retries — the engine's fault cases of every suite. The restarts
// and terminations run in outbox (the crash in sync and async-compact, the inline writes in
// async-compact): sync's path under them is the engine's own test's, the script's sync is
// here under the crash and in TestTPCBLostCommits.
func TestTPCBAtomicUnderFaults(t *testing.T) {
	suitetest.AtomicUnderFaults(t, exampleSuite(t, "tpcb-like.sql"), "outbox", 600, 16)
}

// TestTPCBOnRedisUnderAKilledConsumer: on a Redis stream, a consumer killed mid-run leaves its
// entries to the others; every write lands once.
func TestTPCBOnRedisUnderAKilledConsumer(t *testing.T) {
	suitetest.EachRedis(t, []string{"managed"}, func(t *testing.T, server string, where []string) *results.Report {
		code, rep, stderr := suitetest.RunShared(t, exampleSuite(t, "tpcb-like.sql"), append(where, "--modes", "async-compact",
			"--queue-backend", "redis", "--requests", "0", "--duration", "3s", "--concurrency", "16", "--rate", "300",
			"--fault", "kill-consumer@1s", "--reclaim-idle-ms", "300")...)
		if code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		for _, r := range rep.Runs {
			if !suitetest.Fired(r, "kill-consumer") {
				t.Errorf("kill-consumer did not strike: %+v", r.Faults)
			}
			suitetest.Exact(t, r)
		}
		return rep
	})
}

// TestTPCBLostCommits: a COMMIT whose reply is lost is tried again; the claim the retry finds
// makes it write nothing twice, in the modes whose request commits (sync, outbox).
func TestTPCBLostCommits(t *testing.T) {
	suitetest.LostCommits(t, exampleSuite(t, "tpcb-like.sql"), "sync,outbox", 300, 8)
}

// TestSlots: a table whose primary key ends with a slot column is split by --slots in the
// queue modes, every run verified; --slots with sync, or with no table to split, is refused.
func TestSlots(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, exampleSuite(t, "usage-counter.sql"),
		"--modes", "outbox,async-compact", "--slots", "4", "--requests", "300", "--concurrency", "8")
	if code != cli.ExitOK || len(rep.Runs) != 2 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if r.Config.Slots != 4 {
			t.Errorf("%s: slots %d", r.Mode, r.Config.Slots)
		}
	}
	for _, c := range []struct {
		suite *script.Suite
		modes string
		want  string
	}{
		{exampleSuite(t, "usage-counter.sql"), "sync,async-compact", "sync runs the script as written"},
		{exampleSuite(t, "tpcb-like.sql"), "async-compact", "no table the script updates can be split"},
	} {
		var stdout, stderr strings.Builder
		code := cli.Execute(c.suite, suitetest.SharedArgs(t, "--modes", c.modes, "--slots", "4"), &stdout, &stderr)
		if first, _, _ := strings.Cut(stderr.String(), "\n"); code != cli.ExitUsage || !strings.Contains(first, c.want) {
			t.Errorf("--modes %s --slots 4: exit %d, %q; want 2 and %q", c.modes, code, first, c.want)
		}
	}
}
