package judge

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// abRun is invocation i of side with both modes of the fixtures: async-compact's throughput
// times tput, its persist lag times lag, and the sync figures as given by jitter (so the
// runs are not all equal).
func abRun(i int, side string, tput, lag float64, verified bool) ABRun {
	jitter := 1 + 0.01*float64(i%5)
	s, a := resultstest.SyncSpec(), resultstest.AsyncCompactSpec()
	s.RPS *= jitter
	s.P95 *= jitter
	a.RPS *= tput * jitter
	a.LagP99 *= lag * jitter
	a.Verified = verified
	rep := resultstest.NewReport(resultstest.MakeRun(s), resultstest.MakeRun(a))
	return ABRun{Index: i, Side: side, Groups: ABRunGroups(rep)}
}

// runAB fills an A/B of runs invocations a side, B's async-compact at tput and lag times A's.
func runAB(runs int, tput, lag float64, bVerified bool) *AB {
	ab := NewAB(resultstest.Suite, ABSide{Label: "a"}, ABSide{Label: "b", Args: []string{"--flush-batch-size", "100"}},
		[]string{"--modes", "sync,async-compact"}, runs, verdict.DefaultMinEffect)
	for i, side := range ab.Order {
		if side == "A" {
			ab.Add(abRun(i+1, side, 1, 1, true))
		} else {
			ab.Add(abRun(i+1, side, tput, lag, bVerified))
		}
	}
	return ab
}

func metricOf(t *testing.T, ab *AB, group, metric string) ABMetric {
	t.Helper()
	for _, g := range ab.Groups {
		for _, m := range g.Metrics {
			if g.Group == group && m.Metric == metric {
				return m
			}
		}
	}
	t.Fatalf("no %s %s in %+v", group, metric, ab.Groups)
	return ABMetric{}
}

func TestABOrderInterleaves(t *testing.T) {
	ab := NewAB("s", ABSide{}, ABSide{}, nil, 4, 0.05)
	if got := strings.Join(ab.Order, " "); got != "A B B A A B B A" {
		t.Errorf("order %s, want A B B A A B B A", got)
	}
}

func TestABVerdicts(t *testing.T) {
	slower := runAB(6, 0.8, 1.3, true)
	if slower.ExitCode != ExitRegression || !strings.HasPrefix(slower.Verdict, "WORSE") {
		t.Errorf("B 20%% slower: exit %d, %s", slower.ExitCode, slower.Verdict)
	}
	for metric, want := range map[string]verdict.Verdict{
		results.MetricThroughputRPS:   verdict.Worse,
		results.MetricPersistLagP99Ms: verdict.Worse,
	} {
		if m := metricOf(t, slower, "async-compact", metric); m.Verdict != want || len(m.A) != 6 || len(m.B) != 6 {
			t.Errorf("async-compact %s: %s with %d+%d runs, want %s with 6+6", metric, m.Verdict, len(m.A), len(m.B), want)
		}
	}
	if m := metricOf(t, slower, "sync", results.MetricThroughputRPS); m.Verdict == verdict.Worse || m.Verdict == verdict.Better {
		t.Errorf("sync throughput, the same on both sides: %s", m.Verdict)
	}
	// Constant figures (statements per request) are the same; the waiters of a hot table that
	// had some are judged too.
	if m := metricOf(t, slower, "sync", results.MetricStatementsPerRequest); m.Verdict != verdict.Same {
		t.Errorf("sync statements/request, 5 on both sides: %s", m.Verdict)
	}
	metricOf(t, slower, "sync", results.MetricMaxWaitersPrefix+"api_keys")

	same := runAB(6, 1, 1, true)
	if same.ExitCode != ExitOK || same.Worse != 0 || !strings.HasPrefix(same.Verdict, "NOTHING WORSE") {
		t.Errorf("A against A: exit %d, %s", same.ExitCode, same.Verdict)
	}

	unverified := runAB(4, 1, 1, false)
	if unverified.ExitCode != ExitRegression || len(unverified.Groups[1].Checks) != 1 {
		t.Errorf("B unverified: exit %d, checks %v", unverified.ExitCode, unverified.Groups[1].Checks)
	}
}

func TestABRenderAndRoundTrip(t *testing.T) {
	ab := runAB(4, 0.8, 1.3, true)
	ab.Dir = "ab-dir"
	var buf bytes.Buffer
	if err := RenderAB(&buf, ab); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"4+4 runs", "method: Mann-Whitney", "async-compact\n", "throughput rps", "95% interval",
		"reports and logs: ab-dir", "verdict: WORSE (async-compact throughput rps, async-compact persist-lag p99 ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	path := filepath.Join(t.TempDir(), "ab.json")
	if err := WriteABFile(path, ab); err != nil {
		t.Fatal(err)
	}
	back, ok, err := ReadAB(path)
	if err != nil || !ok {
		t.Fatalf("ReadAB: %v, %v", ok, err)
	}
	if back.Verdict != ab.Verdict || len(back.Runs) != 8 || !slices.Equal(back.Order, ab.Order) ||
		metricOf(t, back, "async-compact", results.MetricThroughputRPS).Ratio != metricOf(t, ab, "async-compact", results.MetricThroughputRPS).Ratio {
		t.Errorf("round trip lost something: %+v", back)
	}
	// A report is not an A/B: ReadAB says so without an error, so a caller reads it as a report.
	rep := filepath.Join(t.TempDir(), "r.json")
	if err := resultstest.SingleReport().WriteFile(rep); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadAB(rep); ok || err != nil {
		t.Errorf("a report read as an A/B: %v, %v", ok, err)
	}
}

// Fewer than 4 runs a side: every metric is inconclusive (the interval is unbounded) and says
// how many runs a side it needs; the JSON still encodes (no infinities).
func TestABTooFewRunsSoFar(t *testing.T) {
	ab := NewAB(resultstest.Suite, ABSide{Label: "a"}, ABSide{Label: "b"}, nil, 4, verdict.DefaultMinEffect)
	for i, side := range ab.Order[:5] {
		ab.Add(abRun(i+1, side, 0.5, 1, true))
	}
	m := metricOf(t, ab, "async-compact", results.MetricThroughputRPS)
	if m.Verdict != verdict.Inconclusive || m.Bounded || m.RunsToSettle != verdict.MinRuns {
		t.Errorf("2 runs of B: %+v", m.Result)
	}
	if ab.ExitCode != ExitOK || !strings.Contains(ab.Progress(), "from 4 runs a side") {
		t.Errorf("interim: exit %d, progress %q", ab.ExitCode, ab.Progress())
	}
	if err := WriteABFile(filepath.Join(t.TempDir(), "ab.json"), ab); err != nil {
		t.Errorf("interim A/B does not encode: %v", err)
	}
}

// A ratio's interval reads to three decimals, and a bound below 0.01 to two significant
// digits rather than as 0 (microsecond latencies against a stall of 100 ms).
func TestABIntervalText(t *testing.T) {
	for _, tt := range []struct {
		lo, hi float64
		want   string
	}{{0.917, 1.091, "0.917–1.091"}, {0.000194, 1.5, "0.00019–1.500"}} {
		r := verdict.Result{Bounded: true, Scale: verdict.ScaleLog, Lo: tt.lo, Hi: tt.hi}
		if got := intervalText(r, render.FormatMs); got != tt.want {
			t.Errorf("interval %v–%v reads %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
