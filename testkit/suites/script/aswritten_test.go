package script_test

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestAsWritten: with --as-written, sync sends TPC-B's statements and nothing else (no claim
// statement beside them, none left in the claim table), and every row is still checked
// exactly against the requests that succeeded — there is no reconciliation to make; the
// queue modes of the same invocation keep their claim. A script that cannot be deferred is
// run as written too, its claim count checked.
func TestAsWritten(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, exampleSuite(t, "tpcb-like.sql"), "--as-written",
		"--modes", "sync,async-compact", "--requests", "400", "--concurrency", "8")
	if code != cli.ExitOK || len(rep.Runs) != 2 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	sync, queued := rep.Runs[0], rep.Runs[1]
	suitetest.Verified(t, sync)
	suitetest.Completed(t, sync, 400)
	suitetest.Verified(t, queued)
	if !suitetest.CheckPassed(sync, "counter_claims rows: none (the requests ran without a claim)", 0) {
		t.Errorf("sync: no passed check of an empty claim table: %v", checkNames(sync))
	}
	for _, name := range []string{"hot row sets whose every counter is exact", "pgbench_history: applied requests' rows missing"} {
		if stateOf(sync, name) != results.CheckPassed {
			t.Errorf("sync: %q not checked and passed: %v", name, checkNames(sync))
		}
	}
	if sync.Reconciliation != nil {
		t.Errorf("sync: reconciled without a claim: %+v", *sync.Reconciliation)
	}
	if queued.Reconciliation == nil || queued.Reconciliation.Persisted != 400 {
		t.Errorf("async-compact: not reconciled through its claim: %+v", queued.Reconciliation)
	}
	if rt := sync.RequestTime; rt == nil {
		t.Error("sync: no request time")
	} else {
		for _, s := range rt.Statements {
			if strings.Contains(s.Query, "counter_claims") || strings.HasPrefix(s.Query, "batch") {
				t.Errorf("sync sent %q as written", s.Query)
			}
		}
	}

	code, rep, stderr = suitetest.RunShared(t, exampleSuite(t, "inventory-decrement.sql"), "--as-written",
		"--modes", "sync", "--requests", "200", "--concurrency", "4")
	if code != cli.ExitOK && code != cli.ExitFailed || len(rep.Runs) != 1 {
		t.Fatalf("inventory: exit %d\n%s", code, stderr)
	}
	if !suitetest.CheckPassed(rep.Runs[0], "counter_claims rows: none (the requests ran without a claim)", 0) {
		t.Errorf("inventory: no passed check of an empty claim table: %v", checkNames(rep.Runs[0]))
	}
}

// TestAsWrittenUnknownOutcomes: a request timeout leaves outcomes the load cannot know, and a
// run as written has no claim to look them up by: what the requests wrote is then a check not
// made, and the run not verified, never verified against a guess.
func TestAsWrittenUnknownOutcomes(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, exampleSuite(t, "tpcb-like.sql"), "--as-written",
		"--modes", "sync", "--requests", "300", "--concurrency", "32", "--request-timeout", "15ms")
	if len(rep.Runs) != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	if r.Load.ErrorCounts["request_timeout"] == 0 {
		t.Skipf("no request timed out in 2 ms on this machine: %+v", r.Load.ErrorCounts)
	}
	if r.Verification.Passed {
		t.Errorf("a run with unknown outcomes and no claim reads as verified: %+v", r.Verification)
	}
	if stateOf(r, "what the requests wrote") != results.CheckNotChecked {
		t.Errorf("what the requests wrote is not a check not made: %v", checkNames(r))
	}
}

// TestAsWrittenRefused: retries and faults need the claim to look a request up.
func TestAsWrittenRefused(t *testing.T) {
	for _, args := range [][]string{{"--max-tries", "3"}, {"--fault", "terminate-backends@1s", "--duration", "2s", "--requests", "0"}} {
		var stdout, stderr strings.Builder
		code := cli.Execute(exampleSuite(t, "tpcb-like.sql"), suitetest.SharedArgs(t, append([]string{"--as-written", "--modes", "sync"}, args...)...), &stdout, &stderr)
		if first, _, _ := strings.Cut(stderr.String(), "\n"); code != cli.ExitUsage || !strings.Contains(first, "--as-written") {
			t.Errorf("%v: exit %d, %q; want 2 naming --as-written", args, code, first)
		}
	}
}

// stateOf is the state of run r's first check whose name begins with prefix ("" if none).
func stateOf(r results.Run, prefix string) results.CheckState {
	for _, c := range r.Verification.Checks {
		if strings.HasPrefix(c.Name, prefix) {
			return c.State
		}
	}
	return ""
}

// TestAsWrittenAutocommit: a script of one statement and no BEGIN of its own runs as written
// in autocommit, as pgbench sends it — the UPDATE alone, no BEGIN and no COMMIT around it —
// and every row is still exact.
func TestAsWrittenAutocommit(t *testing.T) {
	file := fileWriter(t)
	suite := script.Of(file("hot.sql", "\\set id random(1, :rows)\nUPDATE hot SET k = k + 1 WHERE id = :id;\n"),
		file("hot-init.sql", "CREATE TABLE hot (id int PRIMARY KEY, k bigint NOT NULL DEFAULT 0);\nINSERT INTO hot (id) SELECT generate_series(1, :rows);\n"),
		"rows=2")
	code, rep, stderr := suitetest.RunShared(t, suite, "--as-written", "--modes", "sync", "--requests", "300", "--concurrency", "8")
	if code != cli.ExitOK || len(rep.Runs) != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	suitetest.Completed(t, r, 300)
	if r.RequestTime == nil || len(r.RequestTime.Statements) != 1 || !strings.HasPrefix(r.RequestTime.Statements[0].Query, "UPDATE hot") {
		t.Errorf("sync as written sent %+v, want the UPDATE alone (no begin, no commit)", r.RequestTime)
	}
}
