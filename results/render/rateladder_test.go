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
		if r.MaxAtSLO {
			marked = append(marked, r.Mode+" "+load)
		}
	}
	want := []string{"sync 100,000 × 64 @ 400/s (max rate at SLO)", "async-compact 100,000 × 64 @ 16,000/s (max rate at SLO)"}
	if strings.Join(marked, "|") != strings.Join(want, "|") {
		t.Errorf("marked rows %q, want %q", marked, want)
	}
}
