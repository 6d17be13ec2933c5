package usagecounter

import (
	"os"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func run(t *testing.T, args ...string) (int, *results.Report, string) {
	t.Helper()
	return suitetest.Run(t, New(), args...)
}

func sharedURL(t *testing.T) string { return testdb.Server(t).DSN() }

func TestAllModesVerifyAndSyncShowsHotRowWaiters(t *testing.T) {
	code, rep, stderr := run(t, "--postgres-url", sharedURL(t), "--requests", "2000", "--concurrency", "200",
		"--modes", "sync,outbox,async,async-compact", "--monitor-interval-ms", "20")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want 4", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if !r.Verification.Passed {
			t.Errorf("%s: verification failed: %+v", r.Mode, r.Verification.Checks)
		}
		if r.Load.CompletedRequests != 2000 || r.Load.FailedRequests != 0 {
			t.Errorf("%s: completed %d failed %d", r.Mode, r.Load.CompletedRequests, r.Load.FailedRequests)
		}
		if r.Reconciliation == nil || r.Reconciliation.Persisted != 2000 || r.Reconciliation.Lost != 0 {
			t.Errorf("%s: reconciliation %+v", r.Mode, r.Reconciliation)
		}
		switch r.Mode {
		case "sync":
			if r.LockMonitor.MaxWaitersByRelation["api_keys"] == 0 {
				t.Errorf("sync: no waiters on api_keys with 200 workers on one row: %+v", r.LockMonitor)
			}
		case "outbox", "async-compact":
			for _, table := range New().Info().HotTables {
				if n := r.LockMonitor.MaxWaitersByRelation[table]; n != 0 {
					t.Errorf("%s: %d waiters on hot table %s", r.Mode, n, table)
				}
			}
		}
		if r.Mode == "async-compact" {
			q := r.Queue
			if q == nil || q.EnqueuedTotal != 2000 || q.FlushedTotal+q.DroppedTotal+q.SyncFallbackTotal != 2000 ||
				q.CompactedTotal == 0 || q.FlushSQLOpsTotal >= q.FlushedTotal || q.PendingDepth != 0 {
				t.Errorf("async-compact queue: %+v", q)
			}
		}
	}
	if rep.Environment.PostgresVersion == "" || rep.Environment.Durability != "on" || rep.Environment.ManagedPostgres {
		t.Errorf("environment: %+v", rep.Environment)
	}
}

func TestManagedServerRunAndBrokenExpectationExitsOne(t *testing.T) {
	code, rep, stderr := run(t, "--requests", "300", "--concurrency", "30", "--modes", "sync", "--debug-break-expectations")
	if code != 1 {
		t.Fatalf("exit %d with broken expectations, want 1\n%s", code, stderr)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Verification.Passed {
		t.Fatalf("verification should have failed: %+v", rep.Runs)
	}
	if !rep.Environment.ManagedPostgres || rep.Environment.PostgresStartMs <= 0 {
		t.Errorf("managed server not recorded: %+v", rep.Environment)
	}
}

func TestHotKeysSpreadTheLoad(t *testing.T) {
	code, rep, stderr := run(t, "--postgres-url", sharedURL(t), "--requests", "1000", "--concurrency", "50",
		"--hot-keys", "7", "--modes", "sync,async-compact")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		found := false
		for _, c := range r.Verification.Checks {
			if c.Name == "hot key sets whose every counter is exact" {
				found = c.OK && c.Actual == float64(7)
			}
		}
		if !found {
			t.Errorf("%s: per-key check missing or failed: %+v", r.Mode, r.Verification.Checks)
		}
	}
}

// Faults: each run completes, failures are counted by class, the async queue persists
// everything it accepted, and verification with reconciliation is exact.
func TestFaults(t *testing.T) {
	shared := []string{"--postgres-url", sharedURL(t)}
	cases := []struct {
		name     string
		args     []string
		fault    string // the event that must have happened
		failures bool   // requests are expected to fail (counted by class)
	}{
		{"terminate-backends sync", append(shared, "--modes", "sync", "--requests", "0", "--duration", "2s",
			"--concurrency", "40", "--fault", "terminate-backends@700ms"), "terminate-backends", true},
		{"terminate-backends async-compact", append(shared, "--modes", "async-compact", "--requests", "20000",
			"--concurrency", "200", "--flush-batch-size", "200", "--fault", "terminate-backends@30ms"), "terminate-backends", false},
		{"terminate-backends outbox", append(shared, "--modes", "outbox", "--requests", "0", "--duration", "2s",
			"--concurrency", "40", "--fault", "terminate-backends@700ms"), "terminate-backends", true},
		{"restart-postgres sync", []string{"--modes", "sync", "--requests", "0", "--duration", "3s",
			"--concurrency", "40", "--fault", "restart-postgres@1s"}, "restart-postgres", true},
		{"restart-postgres async-compact", []string{"--modes", "async-compact", "--requests", "20000",
			"--concurrency", "200", "--flush-batch-size", "200", "--fault", "restart-postgres@30ms"}, "restart-postgres", false},
		{"pause-flush async-compact full queue", append(shared, "--modes", "async-compact", "--requests", "5000",
			"--concurrency", "100", "--queue-capacity", "1000", "--fault", "pause-flush@10ms+500ms"), "pause-flush", false},
		{"pause-flush outbox", append(shared, "--modes", "outbox", "--requests", "1000", "--concurrency", "50",
			"--fault", "pause-flush@10ms+500ms"), "pause-flush", false},
		{"lock-timeout sync", append(shared, "--modes", "sync", "--requests", "1500", "--concurrency", "150",
			"--fault", "lock-timeout=5"), "lock-timeout", true},
		{"statement-timeout sync", append(shared, "--modes", "sync", "--requests", "1500", "--concurrency", "150",
			"--fault", "statement-timeout=5"), "statement-timeout", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rep, stderr := run(t, c.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			r := rep.Runs[0]
			var fired bool
			for _, f := range r.Faults {
				if f.Kind == c.fault && f.Error == "" {
					fired = true
				}
			}
			if !fired {
				t.Fatalf("fault %s did not happen: %+v", c.fault, r.Faults)
			}
			if !r.Verification.Passed {
				t.Errorf("verification: %+v", r.Verification.Checks)
			}
			rc := r.Reconciliation
			if rc == nil || rc.Lost != 0 || rc.Duplicated != 0 || rc.FailedButPersisted != 0 {
				t.Errorf("reconciliation: %+v", rc)
			}
			if c.failures && r.Load.FailedRequests+rc.OutcomeUnknown == 0 {
				t.Errorf("no request failed under %s: %+v", c.fault, r.Load)
			}
			var counted int64
			for _, n := range r.Load.ErrorCounts {
				counted += n
			}
			if counted != r.Load.FailedRequests {
				t.Errorf("failures not counted by class: %d failed, classes %v", r.Load.FailedRequests, r.Load.ErrorCounts)
			}
			if q := r.Queue; q != nil && (q.PendingDepth != 0 || q.AbandonedTotal != 0 || q.EnqueuedTotal != q.FlushedTotal+q.SyncFallbackTotal+q.DroppedTotal+q.RejectedTotal) {
				t.Errorf("queue did not persist everything it accepted: %+v", q)
			}
		})
	}
}
