package jobqueue

import (
	"strconv"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// Every mode of our own on MariaDB (a database of the run's own on the package's shared
// server), in one invocation: the workers' sessions in READ COMMITTED claim with SKIP LOCKED,
// and every job is completed exactly once, in one statement per batch under async-compact.
func TestEveryModeOnMariaDB(t *testing.T) {
	t.Parallel()
	const jobs = 300
	code, rep, stderr := suitetest.RunMySQL(t, New(), args("--requests", strconv.Itoa(jobs), "--modes", "sync,async,async-compact")...)
	if code != 0 || len(rep.Runs) != 3 {
		t.Fatalf("exit %d, %d runs\n%s", code, len(rep.Runs), stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		suitetest.Completed(t, r, jobs)
		if rc := r.Reconciliation; rc.Persisted != jobs {
			t.Errorf("%s: %d jobs found, want %d", r.Mode, rc.Persisted, jobs)
		}
		if figure(t, r, FigCompletedPerS) <= 0 || figure(t, r, FigReruns) != 0 || figure(t, r, FigTableAfter) <= 0 {
			t.Errorf("%s: completed/s %v, re-runs %v, table bytes after %v", r.Mode,
				figure(t, r, FigCompletedPerS), figure(t, r, FigReruns), figure(t, r, FigTableAfter))
		}
		if _, ok := r.Figure(FigDeadAfter); ok {
			t.Errorf("%s: a dead-row figure on InnoDB, which counts none", r.Mode)
		}
		if q := r.Queue; r.Mode == "async-compact" && (q == nil || q.FlushedTotal != jobs || q.FlushSQLOpsTotal != q.FlushBatchesTotal) {
			t.Errorf("async-compact: want %d completions in one statement per batch: %+v", jobs, q)
		}
	}
}
