package plot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// slowerAB is an A/B of 4 runs a side whose B has 80% of A's async-compact throughput.
func slowerAB() *judge.AB {
	ab := judge.NewAB(resultstest.Suite, judge.ABSide{Label: "a"}, judge.ABSide{Label: "b"}, nil, 4, verdict.DefaultMinEffect)
	for i, side := range ab.Order {
		jitter := 1 + 0.01*float64(i%5)
		s, a := resultstest.SyncSpec(), resultstest.AsyncCompactSpec()
		s.RPS *= jitter
		a.RPS *= jitter
		if side == "B" {
			a.RPS *= 0.8
		}
		rep := resultstest.NewReport(resultstest.MakeRun(s), resultstest.MakeRun(a))
		ab.Add(judge.ABRun{Index: i + 1, Side: side, Groups: judge.ABRunGroups(rep)})
	}
	return ab
}

// An A/B draws its own section first: the heading with its table and verdict, then one chart
// per metric with both sides' runs, the medians and the interval band.
func TestPlotPageWithAB(t *testing.T) {
	ab := slowerAB()
	var buf bytes.Buffer
	if err := PlotPage(Page{AB: []*judge.AB{ab}, Reports: []*results.Report{resultstest.SingleReport()}}, &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	charts := 0
	for _, g := range ab.Groups {
		charts += len(g.Metrics)
	}
	for _, want := range []string{"<h2>A/B: " + resultstest.Suite + "</h2>", "verdict: WORSE", "A/B async-compact: throughput rps",
		"95% interval of B/A × median A", "median A", "median B"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if got := strings.Count(page, `"A/B `); got < charts {
		t.Errorf("%d A/B charts, want one per metric (%d)", got, charts)
	}
	if remoteRef.MatchString(page) {
		t.Error("the page loads something from the network")
	}
}
