package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/racebuild"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// These tests run the real binary, as a user would.

var binary string

func TestMain(m *testing.M) {
	if upstream := os.Getenv(proxyEnv); upstream != "" { // this binary, re-run as a proxy
		serveProxy(upstream)
		return
	}
	dir, err := os.MkdirTemp("", "hotspotkit-bin-")
	if err != nil {
		panic(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // an unprivileged user runs it too (asUser)
		panic(err)
	}
	binary = filepath.Join(dir, "usage_counter_hotspot_baseline")
	// Built as this test was (racebuild): from the build cache, not compiled anew.
	build := exec.Command("go", append(append([]string{"build"}, racebuild.GoFlags()...), "-o", binary, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := testdb.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code   int
	stderr string
	took   time.Duration
}

// runBinary runs the binary with args as the user cred names (nil: this process's).
func runBinary(t *testing.T, cred *syscall.Credential, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stderr: stderr.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// reachableTempDir is a temporary directory of the test that an unprivileged user can reach
// (t.TempDir's, and its parents, are the test's alone), removed when the test ends.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hotspotkit-test-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// unprivileged is the user root hands a server to (serverproc.UnprivilegedUser), to run the
// binary as.
func unprivileged(t *testing.T) *syscall.Credential {
	t.Helper()
	_, uid, gid, err := serverproc.UnprivilegedUser("")
	if err != nil {
		t.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// TestBadInput is the README's "bad input → what happens" table, row by row.
func TestBadInput(t *testing.T) {
	srv := testdb.Server(t)
	good := srv.DSN()
	u, err := url.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	wrongPassword := u.String()
	taken := "hotspot_taken_by_a_previous_run"
	target := testdb.New(t)
	if _, err := target.Admin().Exec(context.Background(), "CREATE SCHEMA IF NOT EXISTS "+taken); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Admin().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+taken) })
	emptyDir := t.TempDir()
	// Root writes anywhere: as root, the read-only case runs as an unprivileged user, and the
	// directory is that user's own, reachable and read-only, as a user would meet it.
	var user *syscall.Credential
	if os.Geteuid() == 0 {
		user = unprivileged(t)
	}
	readOnly := filepath.Join(reachableTempDir(t), "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	if user != nil {
		if err := os.Chown(readOnly, int(user.Uid), int(user.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	// A directory under the test's own (mode 0700, root's): the server's user cannot reach it.
	unreachable := filepath.Join(t.TempDir(), "pg")
	if err := os.Mkdir(unreachable, 0o755); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() }) // after the parallel cases
	cases := []struct {
		name string
		args []string
		want []string // substrings of the one-line error
	}{
		{"unknown flag", []string{"--bogus"}, []string{"unknown flag: --bogus"}},
		{"negative requests", []string{"--requests", "-5"}, []string{"--requests must be positive"}},
		{"zero concurrency", []string{"--concurrency", "0"}, []string{"--concurrency must be at least 1"}},
		{"not a number", []string{"--requests", "lots"}, []string{"invalid argument", "--requests"}},
		{"unknown mode", []string{"--modes", "sync,turbo"}, []string{`unknown mode "turbo"`}},
		{"unknown fault", []string{"--fault", "explode@1s"}, []string{`unknown fault "explode"`}},
		{"bad fault time", []string{"--fault", "terminate-backends@soon"}, []string{"not a duration"}},
		{"output not writable", []string{"--output", "/nonexistent-dir/report.json"}, []string{"--output", "cannot be written"}},
		{"output in a read-only dir", []string{"--output", filepath.Join(readOnly, "r.json")}, []string{"cannot be written"}},
		{"pg-bin-dir without binaries", []string{"--pg-bin-dir", emptyDir}, []string{"--pg-bin-dir", "no PostgreSQL binaries"}},
		{"pg-dir that is no directory", []string{"--pg-dir", "/nonexistent-dir"}, []string{"--pg-dir /nonexistent-dir: not a directory"}},
		{"pg-dir with a given server", []string{"--postgres-url", good, "--pg-dir", emptyDir}, []string{"--pg-dir", "with --postgres-url there is none"}},
		{"pg-dir the server's user cannot reach", []string{"--pg-dir", unreachable}, []string{"cannot reach " + unreachable, "give --pg-dir a directory it can reach"}},
		{"pg-user that does not exist", []string{"--pg-user", "no-such-user-hotspotkit"}, []string{`user "no-such-user-hotspotkit" does not exist`}},
		{"unreachable server", []string{"--postgres-url", "postgres://u:secret@127.0.0.1:1/db"}, []string{"connecting to", "connection refused"}},
		{"wrong password", []string{"--postgres-url", wrongPassword}, []string{"password authentication failed"}},
		{"schema left by an interrupted run", []string{"--postgres-url", good, "--schema", taken}, []string{"already exists", "DROP SCHEMA"}},
		{"restart fault on a given server", []string{"--postgres-url", good, "--fault", "restart-postgres@1s"}, []string{"needs the temporary server"}},
		{"zero tries", []string{"--max-tries", "0"}, []string{"--max-tries must be at least 1"}},
		{"negative tries", []string{"--max-tries", "-1"}, []string{"--max-tries must be at least 1"}},
		{"negative retry backoff", []string{"--retry-backoff-ms", "-5"}, []string{"--retry-backoff-ms must not be negative"}},
		{"unknown retry class", []string{"--retry-classes", "40P01,bogus"}, []string{"--retry-classes", `unknown error class "bogus"`}},
		{"kill-consumer on the memory queue", []string{"--fault", "kill-consumer@1s"}, []string{"needs --queue-backend redis"}},
		{"pause-flush without flushers", []string{"--modes", "sync", "--fault", "pause-flush@1s+1s"}, []string{"needs a mode with flushers"}},
		{"zero rate", []string{"--rate", "0"}, []string{"--rate must be positive"}},
		{"negative rate", []string{"--rate", "-5"}, []string{"--rate must be positive"}},
		{"rate with a concurrency ladder", []string{"--rate", "100", "--levels", "1,2", "--duration", "2s"}, []string{"cannot be combined with --levels"}},
		{"max lag without a rate", []string{"--max-lag", "10ms"}, []string{"--max-lag needs --rate or --rates"}},
		{"ramp without a rate", []string{"--ramp", "1s"}, []string{"--ramp needs --rate or --rates"}},
		{"rates not numbers", []string{"--rates", "abc", "--duration", "2s"}, []string{`--rates: "abc" is not a positive rate`}},
		{"objective without a rate ladder", []string{"--slo-p99-ms", "200"}, []string{"--slo-p99-ms needs --pool-levels or --rates"}},
		{"arrivals unknown", []string{"--rate", "100", "--arrivals", "bursty"}, []string{"--arrivals", `unknown arrivals "bursty"`}},
		{"crash-postgres on a given server", []string{"--postgres-url", good, "--fault", "crash-postgres@1s"}, []string{"needs the temporary server"}},
		{"crash-redis without a managed redis-server", []string{"--fault", "crash-redis@1s"}, []string{"needs --queue-backend redis --redis managed"}},
		{"crash-redis on the embedded Redis", []string{"--modes", "async", "--queue-backend", "redis", "--fault", "crash-redis@1s"}, []string{"needs --queue-backend redis --redis managed"}},
		{"kill-flusher without an async mode", []string{"--modes", "sync", "--fault", "kill-flusher@1s"}, []string{"needs an async mode"}},
		{"fault-every zero", []string{"--duration", "10s", "--fault-every", "0"}, []string{"--fault-every must be positive"}},
		{"fault-every without duration", []string{"--fault-every", "30s"}, []string{"--fault-every needs --duration"}},
		{"redis-persist sometimes", []string{"--modes", "async", "--queue-backend", "redis", "--redis", "managed", "--redis-persist", "sometimes"}, []string{`--redis-persist "sometimes": want off, everysec, always`}},
		{"metrics address without a port", []string{"--metrics-addr", "nonsense"}, []string{"--metrics-addr", "want HOST:PORT"}},
		{"metrics linger without an endpoint", []string{"--metrics-linger", "15s"}, []string{"--metrics-linger needs --metrics-addr"}},
		{"negative metrics linger", []string{"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "-1s"}, []string{"--metrics-linger must not be negative"}},
		{"zero slots", []string{"--slots", "0"}, []string{"--slots must be 1..1024"}},
		{"negative slots", []string{"--slots", "-1"}, []string{"--slots must be 1..1024"}},
		{"slots above the cap", []string{"--slots", "1025"}, []string{"--slots must be 1..1024"}},
		{"slot ladder with a rate ladder", []string{"--slots-levels", "1,4", "--rates", "100,200", "--duration", "1s"}, []string{"--slots-levels and --rates exclude each other"}},
		{"unknown slot pick", []string{"--slots", "4", "--slot-pick", "other"}, []string{"--slot-pick must be hash, random, round-robin or session", `"other"`}},
		{"slot ladder above the cap", []string{"--slots-levels", "1,4096"}, []string{"--slots-levels: 4096 is above 1024"}},
		{"slots with a slot ladder", []string{"--slots", "4", "--slots-levels", "1,4"}, []string{"--slots and --slots-levels exclude each other"}},
		{"metrics port in use", []string{"--metrics-addr", busy.Addr().String()}, []string{"--metrics-addr", "address already in use"}},
		{"zero request timeout", []string{"--request-timeout", "0"}, []string{"--request-timeout must be positive"}},
		{"negative request timeout", []string{"--request-timeout", "-5s"}, []string{"--request-timeout must be positive"}},
		{"negative reconcile timeout", []string{"--reconcile-timeout", "-1s"}, []string{"--reconcile-timeout must not be negative"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case is a process of its own, refused before any work
			if strings.HasPrefix(c.name, "pg-") && strings.Contains(c.name, "user") && os.Geteuid() != 0 {
				t.Skip("only root hands the server to another user")
			}
			var as *syscall.Credential
			if c.name == "output in a read-only dir" {
				as = user
			}
			r := runBinary(t, as, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
			}
			first := strings.SplitN(strings.TrimSpace(r.stderr), "\n", 2)[0]
			for _, w := range c.want {
				if !strings.Contains(first, w) {
					t.Errorf("error %q does not say %q", first, w)
				}
			}
			if strings.Contains(r.stderr, "secret") || strings.Contains(r.stderr, "not-the-password") {
				t.Errorf("password leaked: %s", r.stderr)
			}
			if r.took > 10*time.Second {
				t.Errorf("took %v to refuse bad input", r.took)
			}
		})
	}
}

// leftovers lists postgres processes and files under dir (the child's TMPDIR).
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			pid := filepath.Base(filepath.Dir(p))
			if n, _ := strconv.Atoi(pid); n > 0 && suitetest.Alive(n) {
				out = append(out, "process "+pid+": "+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		out = append(out, "file "+e.Name())
	}
	return out
}

// TestSignalStopsEverything interrupts a real run with SIGINT and with SIGTERM: the binary
// drains, writes the partial report with interrupted=true, loses nothing it accepted, exits
// 130/143 and leaves no server process or directory behind.
func TestSignalStopsEverything(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		mode string
	}{{syscall.SIGINT, 130, "sync"}, {syscall.SIGTERM, 143, "async-compact"}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			t.Parallel() // each on a temporary server of its own, in a TMPDIR of its own
			// 50 workers: enough requests in flight to drain, few enough that a sync drain
			// behind one hot row is short (the binary is race-built, as the tests are).
			args := []string{"--requests", "100000000", "--concurrency", "50", "--modes", c.mode}
			if c.mode == "async-compact" {
				// Keep the queue busy (writes are accepted far faster than they are flushed) but
				// bounded: the drain after the signal writes at most 10,000 records. A queue of a
				// million held ~1M records by the signal on a loaded machine, whose drain outlasted
				// --drain-timeout and lost them.
				args = append(args, "--flush-batch-size", "50", "--queue-capacity", "10000")
			}
			r := startRun(t, args...)
			_ = r.cmd.Process.Signal(c.sig)
			err := r.cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != c.code {
				t.Fatalf("exit %d after %v, want %d\n%s", code, c.sig, c.code, r.stderr.String())
			}
			if left := leftovers(t, r.tmp); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			rep := readReport(t, r.out)
			if !rep.Interrupted || len(rep.Runs) != 1 {
				t.Fatalf("report: interrupted=%v runs=%d", rep.Interrupted, len(rep.Runs))
			}
			run := rep.Runs[0]
			rc := run.Reconciliation
			if rc == nil || rc.Acknowledged == 0 || rc.Lost != 0 || rc.Duplicated != 0 || rc.Persisted < rc.Acknowledged {
				t.Errorf("reconciliation after %v: %+v", c.sig, rc)
			}
			if !run.Verification.Passed {
				t.Errorf("verification after a drained interrupt: %+v", run.Verification.Checks)
			}
		})
	}
}

// running is the binary started by startRun.
type running struct {
	cmd    *exec.Cmd
	tmp    string // its TMPDIR, where the temporary server lives
	out    string // its --output
	stderr *suitetest.Output
}

// startRun starts the binary with args (plus --output) and returns once its temporary server
// runs and its first run has acknowledged requests.
func startRun(t *testing.T, args ...string) running {
	t.Helper()
	return startRunUntil(t, hasServer, args...)
}

// startRunOn is startRun for a run on a server of its own (--postgres-url): it returns once
// the first run has acknowledged requests.
func startRunOn(t *testing.T, args ...string) running {
	t.Helper()
	return startRunUntil(t, func(string) bool { return true }, args...)
}

func startRunUntil(t *testing.T, serverUp func(tmp string) bool, args ...string) running {
	t.Helper()
	// The server runs as an unprivileged user when we are root: its TMPDIR must be
	// reachable by it.
	tmp := reachableTempDir(t)
	r := running{tmp: tmp, out: filepath.Join(t.TempDir(), "r.json"), stderr: &suitetest.Output{}}
	// A test's defaults (no calibration, the tests' pool): these tests are about the run and its
	// interruption, not its figures.
	r.cmd = exec.Command(binary, slices.Concat(args, suitetest.Defaults(), []string{"--output", r.out})...)
	r.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := r.cmd.Process.Pid
	waitFor(t, 2*time.Minute, "the first run's acknowledged requests", func() bool {
		if exited(pid) {
			t.Fatalf("the binary exited before its first run acknowledged requests:\n%s", r.stderr.String())
		}
		return serverUp(tmp) && acknowledged(r.out)
	})
	return r
}

// acknowledged: a monitor sample counts completed requests, so the first run's load is going
// and has writes to account for. (The last line may be half written: it is skipped.)
func acknowledged(out string) bool {
	b, err := os.ReadFile(results.SamplesPath(out))
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var s results.Sample
		if json.Unmarshal(line, &s) == nil && s.CompletedRequests > 0 {
			return true
		}
	}
	return false
}

// exited says whether process pid has ended (a zombie not yet waited for).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, _ := bytes.Cut(b, []byte(") "))
	return len(after) > 0 && after[0] == 'Z'
}

func hasServer(tmp string) bool {
	m, _ := filepath.Glob(filepath.Join(tmp, "hotspotkit-pg-*", "data", "postmaster.pid"))
	return len(m) > 0
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func readReport(t *testing.T, path string) *results.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep results.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestSecondSignalSkipsTheDrain: with PostgreSQL out of the flushers' reach (a blackhole on
// their path for the whole run), the first SIGINT waits for a drain that cannot finish; the
// second aborts it, and the servers are still stopped. (Paused flushers are not enough: the
// drain resumes them, and two workers can drain all 20,000 records before the second signal
// comes.) The blackhole ends with the run, so that the pools' close after the second signal
// does not wait on pgx's cancel requests held in it.
func TestSecondSignalSkipsTheDrain(t *testing.T) {
	r := startRun(t, "--requests", "20000", "--concurrency", "100", "--modes", "async-compact",
		"--fault", "net-blackhole:pg@0s+10m")
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, time.Minute, "the first signal's drain", func() bool {
		return strings.Contains(r.stderr.String(), "what is in flight has")
	})
	second := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, r.stderr.String())
	}
	if took := time.Since(second); took > 12*time.Second {
		t.Errorf("exit %s after the second signal: closing waited out the blackhole (pgx's 15 s for a cancel request)", took.Round(time.Millisecond))
	} else {
		t.Logf("exit %s after the second signal", took.Round(time.Millisecond))
	}
	if left := leftovers(t, r.tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	rep := readReport(t, r.out)
	if !rep.Interrupted || len(rep.Runs) != 1 || rep.Runs[0].Queue == nil {
		t.Fatalf("report: %+v", rep)
	}
	q := rep.Runs[0].Queue
	// The drain was skipped: what the queue held is reported as abandoned, never hidden.
	if q.AbandonedTotal == 0 || q.EnqueuedTotal != q.FlushedTotal+q.SyncFallbackTotal+q.DroppedTotal+q.RejectedTotal+q.AbandonedTotal {
		t.Errorf("queue after an aborted drain: %+v", q)
	}
	// The abandoned writes are lost, but for those of a batch whose COMMIT was in flight when
	// the second signal cancelled it: it may have committed, which the queue cannot know and the
	// reconciliation looks up. Only records of a failed batch can be such (FlushFailedTotal).
	rc := rep.Runs[0].Reconciliation
	if rc == nil {
		t.Fatalf("no reconciliation: %+v", rep.Runs[0])
	}
	inFlight := rc.Persisted - q.FlushedTotal - q.SyncFallbackTotal
	if rc.Lost == 0 || inFlight < 0 || inFlight > q.FlushFailedTotal || rc.Lost != q.AbandonedTotal-inFlight {
		t.Errorf("reconciliation should count the abandoned writes as lost (but for a batch committed as it was abandoned): %+v, queue %+v", rc, q)
	}
}
