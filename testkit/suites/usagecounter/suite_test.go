package usagecounter

import (
	"os"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/hostenv"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

func TestAllModesVerifyAndSyncShowsHotRowWaiters(t *testing.T) {
	const requests = 1000
	rep := suitetest.HotSpotContract(t, New(), requests, 1, 200, "api_keys")
	// The shared test server runs without fsync (testdb): the report says so.
	if rep.Environment.DatabaseVersion == "" || rep.Environment.Durability != "unsafe" || rep.Environment.ManagedDatabase {
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
	if !rep.Environment.ManagedDatabase || rep.Environment.DatabaseStartMs <= 0 || rep.Environment.Durability != "on" {
		t.Errorf("managed server not recorded: %+v", rep.Environment)
	}
	// The server was made under $TMPDIR: its filesystem is the one recorded.
	if fs := hostenv.FSType(os.TempDir()); rep.Environment.DatabaseDataFS != fs || fs == "" {
		t.Errorf("data directory's filesystem recorded as %q, $TMPDIR is on %q", rep.Environment.DatabaseDataFS, fs)
	}
}

func TestHotKeysSpreadTheLoad(t *testing.T) {
	suitetest.HotKeysSpread(t, New(), "sync,async-compact", "hot row sets whose every counter is exact")
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

// The checks every counter suite passes (suitetest.CounterConformance): lost COMMIT replies
// looked up, batches delivered again applied once, slotted rows exact, every mode over 1 ms.
func TestCounterConformance(t *testing.T) {
	suitetest.CounterConformance(t, New())
}
