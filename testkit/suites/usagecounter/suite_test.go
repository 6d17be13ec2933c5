package usagecounter

import (
	"os"
	"reflect"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func TestAllModesVerifyAndSyncShowsHotRowWaiters(t *testing.T) {
	const requests = 1000
	rep := suitetest.HotSpotContract(t, New(), requests, 1, 200, "api_keys")
	// The shared test server runs without fsync (testdb): the report says so.
	if rep.Environment.PostgresVersion == "" || rep.Environment.Durability != "unsafe" || rep.Environment.ManagedPostgres {
		t.Errorf("environment: %+v", rep.Environment)
	}
	// --calibrate=false (suitetest's default) says so, and no run claims an efficiency; on a
	// --postgres-url server the database's figures are marked shared.
	if c := rep.Environment.Calibration; c == nil || !c.Skipped {
		t.Errorf("calibration %+v, want skipped", c)
	}
	for _, r := range rep.Runs {
		if r.Efficiency != 0 || r.EfficiencyBasis != "" || r.Database == nil || !r.Database.Shared {
			t.Errorf("%s: efficiency %v %q, database %+v", r.Mode, r.Efficiency, r.EfficiencyBasis, r.Database)
		}
	}
}

func TestManagedServerRunAndBrokenExpectationExitsOne(t *testing.T) {
	rep := suitetest.BrokenExpectations(t, New(), "--requests", "300", "--concurrency", "30", "--modes", "sync")
	if !rep.Environment.ManagedPostgres || rep.Environment.PostgresStartMs <= 0 || rep.Environment.Durability != "on" {
		t.Errorf("managed server not recorded: %+v", rep.Environment)
	}
}

func TestHotKeysSpreadTheLoad(t *testing.T) {
	suitetest.HotKeysSpread(t, New(), "sync,async-compact", "hot row sets whose every counter is exact")
}

// Sync and outbox requests are all there or not at all, and counted once, when the reply of
// a COMMIT is lost, with and without retries (the suite's own lookup).
func TestLostCommitsAreLookedUp(t *testing.T) {
	suitetest.LostCommits(t, New(), "sync,outbox", 700, 100)
}

// A batch delivered more than once applies each request once, compacted or not.
func TestReplayedBatchesApplyOnce(t *testing.T) {
	suitetest.Replayed(t, New(), 3, 300)
}

// The engine under faults, tested here once for every suite (this one has every mode, slots
// and Redis): requests are all there or not at all, and counted once, when connections and
// servers die in the middle of them, with and without retries.
func TestRequestsAtomicUnderFaults(t *testing.T) {
	suitetest.AtomicUnderFaults(t, New(), "sync,outbox", 2000, 200)
}

// Faults: each run completes, failures are counted by class, the async queue persists
// everything it accepted, and verification with reconciliation is exact (suitetest.Exact).
// Restart and crash in sync and outbox are TestRequestsAtomicUnderFaults' (crash there in
// async-compact too).
func TestFaults(t *testing.T) {
	shared := suitetest.Shared(t)
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
		{"restart-postgres async-compact", []string{"--modes", "async-compact", "--requests", "20000",
			"--concurrency", "200", "--flush-batch-size", "200", "--fault", "restart-postgres@30ms"}, "restart-postgres", false},
		{"kill-flusher async-compact", append(shared, "--modes", "async-compact", "--requests", "5000",
			"--concurrency", "100", "--flush-batch-size", "200", "--fault", "kill-flusher@10ms"), "kill-flusher", false},
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
			code, rep, stderr := suitetest.Run(t, New(), c.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			r := rep.Runs[0]
			if !suitetest.Fired(r, c.fault) {
				t.Fatalf("fault %s did not happen: %+v", c.fault, r.Faults)
			}
			suitetest.Exact(t, r)
			if rc := r.Reconciliation; c.failures && rc != nil && r.Load.FailedRequests+rc.OutcomeUnknown == 0 {
				t.Errorf("no request failed under %s: %+v", c.fault, r.Load)
			}
			if q := r.Queue; c.fault == "kill-flusher" && (q == nil || q.RetriesTotal == 0) {
				t.Errorf("kill-flusher: the killed batch was not retried: %+v", q)
			}
		})
	}
}

func TestSlottedExact(t *testing.T) {
	suitetest.Slotted(t, New(), 300, 30)
}

// Slots under faults: package counters' slots, the same for every counter suite, tested here.
func TestSlottedExactUnderFaults(t *testing.T) {
	suitetest.SlottedUnderFaults(t, New(), 1000, 30)
}

// TestSessionPickKeepsSessionsApart: with --slot-pick session and as many slots as the pool has
// sessions, each session writes its own slot, so no two ever wait for one physical row — with
// a per-request pick the same 4 sessions meet on the 4 rows. The monitor samples every 10 ms
// while 4 sessions write 3000 requests.
func TestSessionPickKeepsSessionsApart(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, New(), "--modes", "sync", "--requests", "3000", "--concurrency", "64",
		"--max-connections", "4", "--slots", "4", "--slot-pick", "session", "--monitor-interval-ms", "10")
	if code != 0 || len(rep.Runs) != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	if r.LockMonitor.Samples < 5 {
		t.Fatalf("only %d monitor samples: the run was too short to say anything", r.LockMonitor.Samples)
	}
	for rel, n := range r.LockMonitor.MaxWaitersPerRowByRelation {
		if n > 0 {
			t.Errorf("%d sessions waited at once for one row of %s: 4 sessions on 4 slots must never meet (%v)",
				n, rel, r.LockMonitor.MaxWaitersPerRowByRelation)
		}
	}
}

// TestSoakRotatesFaultsAndReportsRecovery is a short soak: a fault every second, in turn,
// each one struck and recovered from with nothing lost or applied twice, and the process's
// figures in every sample.
func TestSoakRotatesFaultsAndReportsRecovery(t *testing.T) {
	code, rep, stderr := suitetest.Run(t, New(), "--modes", "async-compact", "--requests", "0", "--duration", "4s",
		"--concurrency", "40", "--fault-every", "1s")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	var kinds []string
	for _, f := range r.Faults {
		if f.Error != "" {
			t.Errorf("fault %s failed: %s", f.Kind, f.Error)
		}
		kinds = append(kinds, f.Kind)
	}
	if want := []string{"terminate-backends", "restart-postgres", "crash-postgres"}; len(kinds) < len(want) || !reflect.DeepEqual(kinds[:len(want)], want) {
		t.Errorf("faults struck %v, want the rotation to begin %v", kinds, want)
	}
	s := r.Soak
	if s == nil || len(s.Recoveries) != len(r.Faults) || s.RSSEndBytes <= 0 || s.GoroutinesEnd <= 0 || s.MaxOpenConns <= 0 {
		t.Fatalf("soak figures %+v for faults %+v", s, r.Faults)
	}
}
