package render

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestTableRateLadderRows(t *testing.T) {
	tbl := Table([]*results.Report{resultstest.RateLadderReport()})
	if len(tbl.Rows) != 7 {
		t.Fatalf("%d rows, want one per rate and mode (7)", len(tbl.Rows))
	}
	loadColumn := -1
	for i, c := range tbl.Columns {
		if c.Key == ColLoad {
			loadColumn = i
		}
	}
	var marked []string
	for _, r := range tbl.Rows {
		load := r.Cells[loadColumn]
		if !strings.Contains(load, "/s") {
			t.Errorf("load cell %q does not say the rate", load)
		}
		if r.Found != "" {
			marked = append(marked, r.Mode+" "+load)
		}
	}
	want := []string{"sync 100,000 × 64 @ 400/s (max rate at SLO)", "async-compact 100,000 × 64 @ 16,000/s (max rate at SLO)"}
	if strings.Join(marked, "|") != strings.Join(want, "|") {
		t.Errorf("marked rows %q, want %q", marked, want)
	}
}

// Every ladder prints one line the same way, from its axis's declaration: a level per value
// with the axis's columns, the throughput as a share of the first level's, a level not
// verified says so, then what the rule found; a rate ladder's answer is the max rate at the
// objective.
func TestLadderLines(t *testing.T) {
	rep := resultstest.RateLadderReport()
	rep.Runs[1].Verification.Passed = false // sync at 200/s
	rep.Ladders = results.BuildLadders(rep.Runs)
	var b strings.Builder
	printLadders(&b, rep)
	for _, want := range []string{
		"  sync rate ladder: 100/s → achieved 100 rps, sent 100%, p99 20.0 ms, service p99 19.0 ms, late 0, skipped 0; ",
		"200/s → achieved 199 rps, sent 99.5%, p99 45.0 ms, service p99 30.0 ms, late 0, skipped 0 UNVERIFIED; ",
		"; max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 400/s\n",
		"  async-compact rate ladder: 1,000/s → ", "max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 16,000/s\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the ladder lines lack %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printLadders(&b, resultstest.LadderReport())
	if want := "  sync concurrency ladder: 8 → 900 rps, p95 9.50 ms, p99 15.2 ms; 16 → 1,700 rps (1.9×), "; !strings.HasPrefix(b.String(), want) ||
		!strings.HasSuffix(b.String(), "; saturates at concurrency 32: beyond it throughput gains < 5% while p95 rises\n") {
		t.Errorf("the concurrency ladder's line:\n%s\nwant it to open with %q and name the knee", b.String(), want)
	}
}
