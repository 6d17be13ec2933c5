package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// The summary names a conn-storm and says what the cold sessions cost, short and wide; a run
// without either says nothing of them.
func TestSummaryNamesTheStormAndColdSessions(t *testing.T) {
	rep, err := results.ReadFile(recordstest.Reports(t, ".json")[0])
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	Summary(&plain, rep, SummaryOptions{Modes: allModes})
	if strings.Contains(plain.String(), "cold session") || strings.Contains(plain.String(), "conn-storm") {
		t.Errorf("a run without churn mentions it:\n%s", plain.String())
	}
	r := &rep.Runs[0]
	st := &results.ConnStorm{Sessions: 64, Opened: 64, OpenMedianMs: 12.5, OpenMaxMs: 40, TookMs: 55}
	r.Faults = append(r.Faults, results.FaultEvent{Kind: "conn-storm", AtMs: 5000, Duration: 55, Detail: st.Detail(), Storm: st})
	r.Load.ColdSessionRequests, r.Load.ConnectionsOpened = 15, 20
	r.Load.ColdSessionLatencyMs = &results.Latency{Count: 15, P50: 8, P99: 1200, Max: 2100}
	for _, wide := range []bool{false, true} {
		var out bytes.Buffer
		Summary(&out, rep, SummaryOptions{Modes: allModes, Wide: wide})
		got := strings.Join(strings.Fields(out.String()), " ") // the short summary wraps its lines
		for _, want := range []string{
			r.Mode + ": conn-storm at 5.00 s: 64 of 64 sessions opened at once (open median 12.5 ms, max 40.0 ms)",
			r.Mode + ": 15 requests ran on a cold session (a connection's first query), p50 8.00 ms, p99 1.20 s, max 2.10 s",
			"the pool opened 20 connections in the measured window",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("wide %v: want %q in\n%s", wide, want, out.String())
			}
		}
	}
}
