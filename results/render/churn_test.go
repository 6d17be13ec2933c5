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

// The short summary keeps a secondary paragraph only where it tells something: the
// calibration's figures beside the warning that it was noisy, the cold sessions where the pool
// churned. A pool that only warmed (its sessions' first queries, no connection opened while
// measured), a quiet calibration and where a request's time went are --wide's.
func TestShortSummaryKeepsWhatTells(t *testing.T) {
	rep, err := results.ReadFile(recordstest.Path(t, "baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json"))
	if err != nil {
		t.Fatal(err)
	}
	summaries := func() (short, wide string) {
		var s, w bytes.Buffer
		Summary(&s, rep, SummaryOptions{Modes: allModes, HotTables: counterHotTables})
		Summary(&w, rep, SummaryOptions{Modes: allModes, HotTables: counterHotTables, Wide: true})
		return s.String(), w.String()
	}
	short, _ := summaries()
	if !strings.Contains(short, "warning: the calibration was noisy") || !strings.Contains(short, ": hot-row UPDATE ") {
		t.Errorf("a noisy calibration without its figures:\n%s", short)
	}
	c := rep.Environment.Calibration
	for _, s := range []*results.Spread{&c.HotRowUpdateRPS1, &c.HotRowUpdateRPSPool, &c.BatchedWriteRowsPerSec} {
		s.Min, s.Max = s.Median, s.Median
	}
	r := &rep.Runs[0]
	r.Load.ColdSessionRequests, r.Load.ConnectionsOpened = 64, 0
	r.Load.ColdSessionLatencyMs = &results.Latency{Count: 64, P50: 300, P99: 800, Max: 900}
	r.RequestTime = &results.RequestTime{LatencyMeanMs: 360, AcquireMeanMs: 240, StatementsMeanMs: 120}
	short, wide := summaries()
	for _, said := range []string{"calibration", "cold session", "mean per request"} {
		if strings.Contains(short, said) {
			t.Errorf("the short summary says %q where nothing tells:\n%s", said, short)
		}
		if !strings.Contains(wide, said) {
			t.Errorf("--wide lacks %q:\n%s", said, wide)
		}
	}
	r.Load.ConnectionsOpened = 20
	if short, _ := summaries(); !strings.Contains(short, "64 requests ran on a cold session") {
		t.Errorf("a pool that opened connections while measured is not named:\n%s", short)
	}
}
