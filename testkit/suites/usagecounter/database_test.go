package usagecounter

import (
	"math"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestTheDatabasesOwnFigures reads the database's account of a sync and an async-compact run
// on a managed server, calibrated: sync costs its five statements (INSERT usage, four counter
// UPDATEs) and one commit per request; async-compact folds a batch into a handful of
// statements and writes far less WAL per request. Both runs carry an efficiency.
func TestTheDatabasesOwnFigures(t *testing.T) {
	const requests = 2000
	code, rep, stderr := suitetest.Run(t, New(), "--requests", "2000", "--concurrency", "100",
		"--modes", "sync,async-compact", "--calibrate")
	if code != 0 || len(rep.Runs) != 2 {
		t.Fatalf("exit %d, %d runs\n%s", code, len(rep.Runs), stderr)
	}
	cal := rep.Environment.Calibration
	if cal == nil || cal.Skipped || cal.HotRowUpdateRPS1.Median <= 0 || cal.HotRowUpdateRPSPool.Median <= 0 ||
		cal.BatchedWriteRowsPerSec.Median <= 0 || cal.PoolConns != suitetest.TestPoolConns || cal.DurationMs <= 0 {
		t.Fatalf("calibration not filled: %+v", cal)
	}
	byMode := map[string]*results.Database{}
	for _, r := range rep.Runs {
		d := r.Database
		if d == nil {
			t.Fatalf("%s: no database figures\n%s", r.Mode, stderr)
		}
		byMode[r.Mode] = d
		if d.Shared || d.WALSource != "pg_stat_wal" || d.WALBytes <= 0 || d.WALRecords <= 0 || d.Statements == nil ||
			len(d.DatabaseWide) == 0 {
			t.Errorf("%s: %+v", r.Mode, d)
		}
		if u := d.Tables["usage"]; u.Inserted != requests {
			t.Errorf("%s: usage rows inserted %d, want %d", r.Mode, u.Inserted, requests)
		}
		for _, hot := range New().Info().HotTables {
			if _, ok := d.PerRequest.HOTUpdateRatio[hot]; !ok {
				t.Errorf("%s: no HOT-update ratio for %s: %v", r.Mode, hot, d.PerRequest.HOTUpdateRatio)
			}
		}
		if r.Efficiency <= 0 || r.EfficiencyBasis == "" {
			t.Errorf("%s: efficiency %v (%q)", r.Mode, r.Efficiency, r.EfficiencyBasis)
		}
	}
	sync, compact := byMode["sync"], byMode["async-compact"]
	p := sync.PerRequest
	// One commit a request, exactly: the observers' transactions and the sessions' startups
	// (the pool opening its connections) are not the run's. Autovacuum's transactions are in
	// the count and cannot be told apart: a window it ran in (a slow, loaded run, which can read
	// 1.014) is held to the exact count from below only.
	if math.Abs(p.Statements-5) > 0.01 || p.Commits < 0.99 || (p.Commits > 1.01 && sync.Autovacuums == 0) || p.RowVersions != 5 {
		t.Errorf("sync per request: %+v (autovacuums %d), want 5 statements, 1 commit, 5 row versions", p, sync.Autovacuums)
	}
	if sync.Sessions == 0 {
		t.Errorf("sync: no sessions counted in the window (PostgreSQL 14+ counts them)")
	}
	if sync.Tables["api_keys"].Updated != requests || sync.WaitEvents["Lock:transactionid"]+sync.WaitEvents["Lock:tuple"] == 0 {
		t.Errorf("sync: api_keys %+v, wait events %v", sync.Tables["api_keys"], sync.WaitEvents)
	}
	if c := compact.PerRequest; c.Statements >= 0.01 || (c.Commits >= 0.01 && compact.Autovacuums == 0) || c.Commits >= 0.1 {
		t.Errorf("async-compact per request: %+v (autovacuums %d), want < 0.01 statements and commits", c, compact.Autovacuums)
	}
	// Compaction writes a hot row once per batch: 2.86-2.90× less WAL per request on an idle
	// machine, 2.0× on a fresh CI's loaded one (its batches smaller), so the bound is 1.5×.
	if ratio := sync.PerRequest.WALBytes / compact.PerRequest.WALBytes; ratio < 1.5 {
		t.Errorf("WAL per request: sync %v, async-compact %v (%.1f×), want ≥ 1.5× less", sync.PerRequest.WALBytes,
			compact.PerRequest.WALBytes, ratio)
	}
	if rep.Runs[0].EfficiencyBasis != results.EfficiencyHotRow || rep.Runs[1].EfficiencyBasis != results.EfficiencyBatched {
		t.Errorf("efficiency bases %q, %q", rep.Runs[0].EfficiencyBasis, rep.Runs[1].EfficiencyBasis)
	}
}
