package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// A pool whose connections live 300 ms over a 3 s run opens more connections in the measured
// window than it holds, and the requests that ran on those new sessions are counted and timed
// apart, in the report and the summary; the run verifies exactly.
func TestConnMaxLifetimeChurnsThePool(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, usagecounter.New(), "--modes", "sync", "--requests", "0", "--duration", "3s",
		"--concurrency", "16", "--max-connections", "8", "--conn-max-lifetime", "300ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	l := r.Load
	if r.Config.ConnMaxLifetimeMs != 300 {
		t.Errorf("recorded lifetime %v ms, want 300", r.Config.ConnMaxLifetimeMs)
	}
	if l.ConnectionsOpened <= 8 {
		t.Errorf("the pool of 8 opened %d connections in a 3 s window with a 300 ms lifetime; want more than 8", l.ConnectionsOpened)
	}
	if l.ColdSessionRequests == 0 || l.ColdSessionLatencyMs == nil || l.ColdSessionLatencyMs.Count == 0 || l.ColdSessionHistogram == "" {
		t.Errorf("no cold-session requests recorded: %d, %+v", l.ColdSessionRequests, l.ColdSessionLatencyMs)
	}
	if l.ColdSessionRequests > l.CompletedRequests+l.FailedRequests {
		t.Errorf("%d cold-session requests of %d measured", l.ColdSessionRequests, l.CompletedRequests+l.FailedRequests)
	}
	if !strings.Contains(stderr, "requests ran on a cold session") || !strings.Contains(stderr, "the pool opened") {
		t.Errorf("the summary does not say what the churn cost:\n%s", stderr)
	}
}

// A conn-storm of 16 sessions 1 s into a sync and an async-compact run opens all 16 through
// the service's path, says so in the run's fault event and the summary, and both runs verify
// exactly.
func TestConnStormFault(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, usagecounter.New(), "--modes", "sync,async-compact", "--requests", "0",
		"--duration", "2s", "--concurrency", "16", "--fault", "conn-storm@1s=16")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		if !suitetest.Fired(r, "conn-storm") {
			t.Fatalf("%s: no conn-storm struck: %+v", r.Mode, r.Faults)
		}
		for _, f := range r.Faults {
			if st := f.Storm; f.Kind == "conn-storm" && (st == nil || st.Sessions != 16 || st.Opened != 16 || st.Failed != 0) {
				t.Errorf("%s: storm %+v, want 16 of 16 opened", r.Mode, st)
			}
		}
	}
	if strings.Count(stderr, "conn-storm at 1") != 2 || !strings.Contains(stderr, "16 of 16 sessions opened at once") {
		t.Errorf("the summary does not name both storms:\n%s", stderr)
	}
}

// A conn-storm the --postgres-url server has no room for, or a pool minimum above its size, is
// refused in one line, exit 2, before any run.
func TestConnChurnUsageErrors(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--fault conn-storm@1s=1000", "--fault conn-storm of 1000 sessions: the server has room for"},
		{"--max-connections 8 --min-connections 9", "--min-connections 9 is above --max-connections 8"},
		{"--fault conn-storm@1s=0", "must be a number from 1 to 1000"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Execute(usagecounter.New(), suitetest.SharedArgs(t, strings.Fields(c.args)...), &stdout, &stderr)
		if code != cli.ExitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", c.args, code, cli.ExitUsage, stderr.String())
			continue
		}
		if first, _, _ := strings.Cut(stderr.String(), "\n"); !strings.Contains(first, c.want) {
			t.Errorf("%s: want a first line saying %q, got:\n%s", c.args, c.want, stderr.String())
		}
	}
}
