// Package suitetest runs a suite in tests the way its binary runs: through testkit.Execute,
// with a real report file, against the shared test server of testkit/testdb. Suites' tests
// use it instead of each writing their own harness:
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "300", "--modes", "sync")
//		...
//	}
package suitetest

import (
	"bytes"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

// Run executes s with args (plus --output) and returns the exit code, the report and stderr.
// A run that writes no report fails the test.
func Run(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout, stderr bytes.Buffer
	code := testkit.Execute(s, append(args, "--output", out), &stdout, &stderr)
	rep, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\nstderr:\n%s", code, err, stderr.String())
	}
	return code, rep, stderr.String()
}

// RunShared is Run against the shared test server: Run(t, s, Shared(t, args...)...).
func RunShared(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	return Run(t, s, Shared(t, args...)...)
}

// Shared returns the flags that point a run at the shared test server (a schema of its own),
// followed by args.
func Shared(t *testing.T, args ...string) []string {
	t.Helper()
	return append([]string{"--postgres-url", testdb.Server(t).DSN()}, args...)
}

// Verified fails the test, naming every failed check, unless run r passed verification.
func Verified(t *testing.T, r results.Run) {
	t.Helper()
	if r.Verification.Passed {
		return
	}
	for _, c := range r.Verification.Checks {
		if !c.OK {
			t.Errorf("%s: %s: expected %v, got %v", r.Mode, c.Name, c.Expected, c.Actual)
		}
	}
	t.Errorf("%s: verification failed", r.Mode)
}

// Completed fails the test unless every one of the run's requests completed.
func Completed(t *testing.T, r results.Run, requests int64) {
	t.Helper()
	if r.Load.CompletedRequests != requests || r.Load.FailedRequests != 0 {
		t.Errorf("%s: completed %d, failed %d (%v); want all %d completed", r.Mode,
			r.Load.CompletedRequests, r.Load.FailedRequests, r.Load.ErrorCounts, requests)
	}
}

// NoWaitersOn fails the test for each of tables that a lock waiter was attributed to.
func NoWaitersOn(t *testing.T, r results.Run, tables []string) {
	t.Helper()
	for _, table := range tables {
		if n := r.LockMonitor.MaxWaitersByRelation[table]; n != 0 {
			t.Errorf("%s: %d waiters on hot table %s", r.Mode, n, table)
		}
	}
}

// Compacted fails the test unless the run's queue took records, wrote them all, folded some
// together and sent fewer statements than it wrote records.
func Compacted(t *testing.T, r results.Run, records int64) {
	t.Helper()
	q := r.Queue
	if q == nil || q.EnqueuedTotal != records || q.FlushedTotal+q.SyncFallbackTotal != records ||
		q.CompactedTotal == 0 || q.FlushSQLOpsTotal >= q.FlushedTotal || q.PendingDepth != 0 {
		t.Errorf("%s: queue did not compact %d records: %+v", r.Mode, records, q)
	}
}

// CheckPassed reports whether the run has a check named name that passed with actual value.
func CheckPassed(r results.Run, name string, actual float64) bool {
	for _, c := range r.Verification.Checks {
		if c.Name == name {
			return c.OK && c.Actual == actual
		}
	}
	return false
}

// HotKeysSpread runs s on the shared server in modes with its hot rows spread over seven sets
// (--hot-keys 7; 1000 requests, 50 workers) and fails the test unless every run passed check,
// the suite's per-set check, for all seven sets.
func HotKeysSpread(t *testing.T, s testkit.Suite, modes, check string) {
	t.Helper()
	code, rep, stderr := RunShared(t, s, "--requests", "1000", "--concurrency", "50", "--hot-keys", "7", "--modes", modes)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		if !CheckPassed(r, check, 7) {
			t.Errorf("%s: per-set check %q missing or failed: %+v", r.Mode, check, r.Verification.Checks)
		}
	}
}

// BrokenExpectations runs s with args and --debug-break-expectations (one mode) and fails the
// test unless the binary would exit 1 with that run's verification failed. It returns the
// report for the suite's own checks.
func BrokenExpectations(t *testing.T, s testkit.Suite, args ...string) *results.Report {
	t.Helper()
	code, rep, stderr := Run(t, s, append(args, "--debug-break-expectations")...)
	if code != 1 {
		t.Fatalf("exit %d with broken expectations, want 1\n%s", code, stderr)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Verification.Passed {
		t.Fatalf("verification should have failed: %+v", rep.Runs)
	}
	return rep
}

// HotSpotContract runs s in every mode on the shared server, with concurrency workers on one
// set of hot rows, and checks what every hot-spot suite promises: each run verifies with all
// requests completed; sync has lock waiters on at least one of syncHot; outbox and
// async-compact have none on any hot table; async-compact folds its records
// (recordsPerRequest per request). It returns the report for the suite's own checks.
func HotSpotContract(t *testing.T, s testkit.Suite, requests, recordsPerRequest int64, concurrency int, syncHot ...string) *results.Report {
	t.Helper()
	code, rep, stderr := RunShared(t, s, "--requests", strconv.FormatInt(requests, 10),
		"--concurrency", strconv.Itoa(concurrency), "--modes", "sync,outbox,async,async-compact",
		"--monitor-interval-ms", "20")
	if code != 0 || len(rep.Runs) != len(testkit.AllModes) {
		t.Fatalf("exit %d, %d runs (want %d)\n%s", code, len(rep.Runs), len(testkit.AllModes), stderr)
	}
	hot := s.Info().HotTables
	for _, r := range rep.Runs {
		Verified(t, r)
		Completed(t, r, requests)
		switch r.Mode {
		case testkit.ModeSync:
			var waiters int64
			for _, table := range syncHot {
				waiters += r.LockMonitor.MaxWaitersByRelation[table]
			}
			if waiters == 0 {
				t.Errorf("sync: no waiters on %v with %d workers on one set of hot rows: %+v", syncHot, concurrency, r.LockMonitor)
			}
		case testkit.ModeOutbox:
			NoWaitersOn(t, r, hot)
		case testkit.ModeAsyncCompact:
			NoWaitersOn(t, r, hot)
			Compacted(t, r, recordsPerRequest*requests)
		}
	}
	return rep
}

// Output collects what an invocation writes (its stderr) so that a test can read it while the
// invocation still runs.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
