package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/racebuild"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/results/verdict"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/settlement"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// asSuiteEnv makes this test binary, started under a suite's name, run as that suite: baseline
// ab then drives real suite binaries without building any.
const asSuiteEnv = "BASELINE_AB_TEST_AS_SUITE"

func TestMain(m *testing.M) {
	if os.Getenv(asSuiteEnv) == "1" {
		suites := map[string]testkit.Suite{
			"usage_counter_hotspot_baseline":    usagecounter.New(),
			"usage_settlement_hotspot_baseline": settlement.New(),
		}
		if s, ok := suites[filepath.Base(os.Args[0])]; ok {
			os.Exit(cli.Execute(s, os.Args[1:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(testdb.Main(m))
}

// suiteBinary is this test binary under the name of a suite (a symlink), run as that suite.
func suiteBinary(t *testing.T, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(self, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(asSuiteEnv, "1")
	return path
}

func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "not-a-suite")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// runABCommand runs baseline ab with args, with TMPDIR set to a directory of its own, which
// must be empty again afterwards (no worktree, binary or server directory left behind). The
// directory is open to all, as /tmp is: a suite run as root starts PostgreSQL under another
// user, which must reach its directory there.
func runABCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "ab-test-tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	// The revisions are built as this test binary was (racebuild): the standard library and
	// every dependency come from the tests' build cache, not compiled again.
	t.Setenv("GOFLAGS", racebuild.GOFLAGS())
	var out, errb bytes.Buffer
	code = run(append([]string{"ab"}, args...), &out, &errb)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("baseline ab left %d entries in TMPDIR (%s, ...)", len(left), left[0].Name())
	}
	return code, out.String(), errb.String()
}

func TestABBadInput(t *testing.T) {
	counter := suiteBinary(t, "usage_counter_hotspot_baseline")
	settle := suiteBinary(t, "usage_settlement_hotspot_baseline")
	notGit := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"too few runs", []string{counter, counter, "--runs", "3"}, "--runs 3: want 4 to 50"},
		{"one side", []string{counter}, "want A and B"},
		{"--output in the suite flags", []string{counter, counter, "--", "--output", "x.json"}, "--output: baseline ab writes"},
		{"--repeat for one side", []string{counter, counter, "--b-args", "--repeat=3"}, "use --runs"},
		{"not a suite", []string{script(t, "echo hello"), counter}, "is not a hotspotkit suite"},
		{"a failing binary", []string{counter, script(t, "exit 3")}, "is not a hotspotkit suite"},
		{"neither a file nor a repository", []string{"no-such-build", counter, "--repo", notGit}, "is not a git repository"},
		{"two different suites", []string{counter, settle}, "two different suites: A is usage_counter_hotspot_baseline, B is usage_settlement_hotspot_baseline"},
		{"a flag the suite does not know", []string{counter, counter, "--b-args", "--no-such-flag"}, "the suite refused the flags: usage_counter_hotspot_baseline: unknown flag: --no-such-flag"},
		{"a revision without --suite", []string{"HEAD", counter, "--repo", "../.."}, "name the suite to build with --suite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ab")
			code, stdout, stderr := runABCommand(t, append(c.args, "--dir", dir)...)
			if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout, stderr, c.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("--dir was created before the input was checked")
			}
		})
	}
}

// A suite that crashes exits 2, as a Go program's panic does, and is told apart from one that
// refused its arguments (also exit 2): the A/B ends with exit 1 and names the crash.
func TestABCrashedRun(t *testing.T) {
	crashing := script(t, `for a in "$@"; do
  [ "$a" = --help ] && { printf 'fake_baseline — a stand-in suite\n\nFlags:\n  --output string\n  --modes strings\n'; exit 0; }
done
echo 'async-compact  20,000/20,000'
echo 'panic: runtime error: invalid memory address or nil pointer dereference' >&2
printf '\ngoroutine 1 [running]:\n' >&2
exit 2`)
	code, stdout, stderr := runABCommand(t, crashing, crashing, "--runs", "4", "--dir", filepath.Join(t.TempDir(), "ab"))
	if code != exitRegression || !strings.Contains(stderr, "run 1 (A) crashed (exit 2): panic: runtime error: invalid memory address") || strings.Contains(stderr, "refused") {
		t.Errorf("exit %d, stderr %q (stdout %q); want exit 1 and the crash named", code, stderr, stdout)
	}
}

// Runs on different kinds of database are no A/B: the second kind ends it with one line and
// exit 2, before it is judged.
func TestABDifferentDatabases(t *testing.T) {
	suite := script(t, `kind=postgres out=
while [ $# -gt 0 ]; do
  case "$1" in
    --help) printf 'fake_baseline — a stand-in suite\n\nFlags:\n  --output string\n  --modes strings\n  --kind string\n'; exit 0;;
    --output) out=$2; shift;;
    --kind) kind=$2; shift;;
  esac
  shift
done
printf '{"schema_version": 19, "suite": "fake_baseline", "environment": {"database_kind": "%s"}, "runs": [{"mode": "sync", "verification": {"passed": true}, "load": {"throughput_rps": 100}}]}' "$kind" > "$out"`)
	code, stdout, stderr := runABCommand(t, suite, suite, "--runs", "4", "--b-args", "--kind mariadb", "--dir", filepath.Join(t.TempDir(), "ab"))
	if code != exitUsage || !strings.Contains(stderr, "run 2 (B): the reports ran on different kinds of database, PostgreSQL and MariaDB") {
		t.Errorf("exit %d, stderr %q (stdout %q); want exit 2 and the kinds named", code, stderr, stdout)
	}
}

// fakeSuite is the main.go of a stand-in suite for the build tests (a real suite would take
// minutes to build in a fresh module): it answers --help as a suite does and writes a report
// whose async-compact throughput is rps, varied by the run number in its --output name.
const fakeSuite = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const rps = %s

func main() {
	out := ""
	for i, a := range os.Args[1:] {
		switch a {
		case "--help":
			fmt.Println("fake_baseline — a stand-in suite\n\nFlags:\n  --output string\n  --modes strings")
			return
		case "--output":
			out = os.Args[i+2]
		}
	}
	var run int
	fmt.Sscanf(strings.TrimPrefix(out[strings.LastIndex(out, "/")+1:], "run-"), "%%d", &run)
	rep := map[string]any{"schema_version": 1, "suite": "fake_baseline", "runs": []any{map[string]any{
		"mode": "async-compact", "verification": map[string]any{"passed": true},
		"load": map[string]any{"throughput_rps": rps * (1 + 0.01*float64(run%%4))}}}}
	f, err := os.Create(out)
	if err != nil {
		os.Exit(1)
	}
	json.NewEncoder(f).Encode(rep)
	f.Close()
}
`

// gitRepo makes a repository whose commits are the fake suite at each rps ("" commits one that
// does not build).
func gitRepo(t *testing.T, rates ...string) string {
	t.Helper()
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module fakesuite\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "cmd", "fake_baseline"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, rps := range rates {
		src := fmt.Sprintf(fakeSuite, rps)
		if rps == "" {
			src = "package main\n\nfunc main() { undefined() }\n"
		}
		if err := os.WriteFile(filepath.Join(repo, "cmd", "fake_baseline", "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
	}
	return repo
}

func worktrees(t *testing.T, repo string) int {
	out, err := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(out), "worktree ")
}

func TestABBuildsRevisions(t *testing.T) {
	repo := gitRepo(t, "1000.0", "800.0", "")
	dir := filepath.Join(t.TempDir(), "ab")
	jsonPath := filepath.Join(t.TempDir(), "ab.json")
	code, stdout, stderr := runABCommand(t, "HEAD~2", "HEAD~1", "--suite", "fake_baseline", "--repo", repo, "--runs", "4", "--dir", dir, "--json", jsonPath)
	if code != exitRegression || !strings.Contains(stdout, "verdict: WORSE (async-compact throughput rps)") {
		t.Fatalf("20%% slower revision: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"building fake_baseline", "run 8/8 A", "so far 1 worse"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	ab, ok, err := judge.ReadAB(jsonPath)
	if err != nil || !ok || len(ab.Runs) != 8 || ab.A.Revision == "" || ab.A.Revision == ab.B.Revision || ab.Method != verdict.Method {
		t.Fatalf("--json: %v %v %+v", ok, err, ab)
	}
	for _, r := range ab.Runs {
		if _, err := results.ReadFile(r.Report); err != nil {
			t.Errorf("run %d's report was not kept: %v", r.Index, err)
		}
	}
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after the A/B, want the repository's own only", n)
	}

	code, stdout, stderr = runABCommand(t, "HEAD~1", "HEAD", "--suite", "fake_baseline", "--repo", repo, "--dir", filepath.Join(t.TempDir(), "ab"))
	if code != exitUsage || stdout != "" || len(errorLines(stderr)) != 1 || !strings.Contains(stderr, "B: HEAD does not build: ") {
		t.Errorf("a revision that does not build: exit %d\n%s%s", code, stdout, stderr)
	}
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after a failed build, want 1", n)
	}
}

// A SIGINT during the runs is forwarded to the running suite; no further run starts, the runs
// so far are judged and kept, the temporary builds are removed, and the exit is 130.
func TestABInterrupted(t *testing.T) {
	repo := gitRepo(t, "1000.0")
	dir := filepath.Join(t.TempDir(), "ab")
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, "run-02-B.json")); err == nil {
				_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	code, stdout, stderr := runABCommand(t, "HEAD", "HEAD", "--suite", "fake_baseline", "--repo", repo, "--runs", "20", "--dir", dir)
	ab, ok, err := judge.ReadAB(filepath.Join(dir, "ab.json"))
	if code != 130 || err != nil || !ok || len(ab.Runs) < 1 || len(ab.Runs) >= 40 || !strings.Contains(stderr, "interrupted (interrupt)") {
		t.Errorf("interrupted A/B: exit %d, %d runs kept (%v)\n%s%s", code, len(ab.Runs), err, stdout, stderr)
	}
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after the interrupt, want 1", n)
	}
}

// Real suite binaries, each invocation on the test binary's shared server (--postgres-url, a
// fresh schema each): B with --flush-batch-size 10 makes about 100× the statements per
// request in async-compact: worse, exit 1.
func TestABRealSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 8 invocations of a suite")
	}
	counter := suiteBinary(t, "usage_counter_hotspot_baseline")
	dir := filepath.Join(t.TempDir(), "ab")
	code, stdout, stderr := runABCommand(t, slices.Concat([]string{counter, counter, "--runs", "4", "--dir", dir, "--b-args", "--flush-batch-size 10",
		"--", "--postgres-url", testdb.Server(t).DSN()}, suitetest.PoolFlags(),
		[]string{"--requests", "400", "--concurrency", "20", "--modes", "async-compact"})...)
	if code != exitRegression {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	// baseline ab adds --calibrate=false (the suite's --help lists it as --calibrate[=true|false]).
	if rep, err := results.ReadFile(filepath.Join(dir, "run-01-A.json")); err != nil {
		t.Fatal(err)
	} else if c := rep.Environment.Calibration; c == nil || !c.Skipped {
		t.Errorf("run 1 calibrated (%+v): baseline ab must add --calibrate=false", c)
	}
	ab, _, err := judge.ReadAB(filepath.Join(dir, "ab.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ab.Groups[0].Metrics {
		if m.Metric == results.MetricStatementsPerRequest && m.Verdict != verdict.Worse {
			t.Errorf("statements/request %v → %v: %s, want worse", m.A, m.B, m.Verdict)
		}
	}
}

// errorLines are the lines of stderr that are not build progress.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "baseline ab: building ") && !strings.HasPrefix(l, "baseline ab: built ") {
			out = append(out, l)
		}
	}
	return out
}
