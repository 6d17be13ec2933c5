package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// --advise end to end on a real PostgreSQL, a tiny space and short trials: sync cannot hold a
// p99 of 1 ms with 20 workers queued on the hot row of 4 connections, async-compact (whose
// request is an enqueue) can; the answer's every run verified, the evidence on stderr, the
// advice in the report. Then an objective nothing meets (exit 1, the closest named) and a
// budget that holds no trial (exit 1, what it would run next).
func TestAdvise(t *testing.T) {
	common := []string{"--advise", "--concurrency", "20", "--pool-levels", "4", "--duration", "400ms"}
	code, rep, stderr := suitetest.RunShared(t, New(), append(common, "--modes", "sync,async-compact",
		"--slo-p99-ms", "1", "--advise-budget", "2m")...)
	a := rep.Advice
	if code != 0 || a == nil || a.Outcome != results.AdviceAnswer || a.Answer.Mode != "async-compact" {
		t.Fatalf("exit %d, advice %+v\n%s", code, a, stderr)
	}
	for _, i := range a.Answer.Runs {
		suitetest.Verified(t, rep.Runs[i])
		if rep.Runs[i].Config.DurationMs != 400 || rep.Runs[i].Mode != "async-compact" {
			t.Errorf("the answer's run %d: %s for %v ms", i, rep.Runs[i].Mode, rep.Runs[i].Config.DurationMs)
		}
	}
	if len(a.Answer.Runs) != 4 || len(rep.Ladders) != 0 || len(rep.Summaries) != 0 {
		t.Errorf("the answer on %d runs, %d ladders, %d summaries: want 4 runs and none", len(a.Answer.Runs), len(rep.Ladders), len(rep.Summaries))
	}
	sync := a.Configurations[0]
	if sync.Mode != "sync" || sync.Status != results.ConfigFailed || !strings.Contains(sync.Why, "p99") ||
		rep.Runs[sync.Trials[0].Run].Config.DurationMs != 100 {
		t.Errorf("sync: %+v", sync)
	}
	for _, want := range []string{"a search of", "configuration", "#1 sync · pool 4: p99", "- answer: async-compact · pool 4",
		"- headroom:", "- search:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	code, rep, stderr = suitetest.RunShared(t, New(), append(common, "--modes", "sync", "--slo-p99-ms", "0.001")...)
	if a := rep.Advice; code != 1 || a.Outcome != results.AdviceNoneHolds || a.Closest == nil || len(rep.Runs) != 1 ||
		!strings.Contains(stderr, "no configuration held; the closest, sync · pool 4: p99") {
		t.Errorf("nothing holds: exit %d, advice %+v\n%s", code, a, stderr)
	}

	code, rep, stderr = suitetest.RunShared(t, New(), append(common, "--modes", "sync", "--slo-p99-ms", "1", "--advise-budget", "1s")...)
	if a := rep.Advice; code != 1 || a.Outcome != results.AdviceCannotDecide || len(rep.Runs) != 0 || len(a.Next) != 1 ||
		!strings.Contains(stderr, "cannot decide within the budget of 1s; next it would run: screen sync · pool 4 for 100ms") {
		t.Errorf("a budget of 1s: exit %d, advice %+v\n%s", code, a, stderr)
	}
}
