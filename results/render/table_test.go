package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
)

func cellsByTitle(t *testing.T, td TableData, row int) map[string]string {
	t.Helper()
	if row >= len(td.Rows) {
		t.Fatalf("table has %d rows, want row %d", len(td.Rows), row)
	}
	out := make(map[string]string)
	for i, c := range td.Columns {
		out[c.Title] = td.Rows[row].Cells[i]
	}
	return out
}

func TestTableColumnOrder(t *testing.T) {
	want := []string{"suite", "mode", "requests × conc", "rps", "failed", "p50 ms", "p95 ms", "p99 ms",
		"lag p99 ms", "max waiters", "pool max %", "sql ops / compacted", "verified", "WAL B/req", "stmts/req", "efficiency", "max tries",
		"inline / dropped", "read total p99 ms", "writes/UPDATE", "hottest share", "pooler waiting / avg wait ms", "pg sessions", "pool wait p99 ms",
		"redo B/req", "deadlocks / timeouts", "server CPU µs/req", "client CPU µs/req"}
	td := Table([]*results.Report{resultstest.SingleReport()})
	if len(td.Columns) != len(want) {
		t.Fatalf("got %d columns, want %d", len(td.Columns), len(want))
	}
	for i, c := range td.Columns {
		if c.Title != want[i] {
			t.Errorf("column %d = %q, want %q", i, c.Title, want[i])
		}
	}
	for _, r := range td.Rows {
		if len(r.Cells) != len(want) {
			t.Errorf("row %s has %d cells, want %d", r.Mode, len(r.Cells), len(want))
		}
	}
}

// The fault matrix compares runs with and without retries: --max-tries is a column, read
// from the run's config, else from its retry report.
func TestTableMaxTriesColumn(t *testing.T) {
	rep := resultstest.SingleReport()
	rep.Runs[0].Config.MaxTries = 20
	rep.Runs[1].Load.Retries = &results.Retries{MaxTries: 1} // recorded in the config only above 1
	td := Table([]*results.Report{rep})
	for row, want := range []string{"20", "1"} {
		if got := cellsByTitle(t, td, row)["max tries"]; got != want {
			t.Errorf("row %d: max tries %q, want %q", row, got, want)
		}
	}
}

func TestTableRunRows(t *testing.T) {
	td := Table([]*results.Report{resultstest.SingleReport()})
	if len(td.Rows) != 2 {
		t.Fatalf("got %d rows, want 2 (one per run)", len(td.Rows))
	}
	tests := []struct {
		row  int
		want map[string]string
	}{
		{0, map[string]string{
			"suite": resultstest.Suite, "mode": "sync", "requests × conc": "100,000 × 64", "rps": "2,100",
			"failed": "0", "p50 ms": "12.40", "p95 ms": "30.10", "p99 ms": "48.70", "lag p99 ms": "–",
			"max waiters": "api_keys 12, providers 3", "pool max %": "100.0", "sql ops / compacted": "–",
			"verified": "✓", "WAL B/req": "945", "stmts/req": "5.00", "efficiency": "1.00", "max tries": "–", "inline / dropped": "–",
			"writes/UPDATE": "–", "hottest share": "–",
		}},
		{1, map[string]string{
			"mode": "async-compact", "rps": "160,000", "p50 ms": "0.21", "p95 ms": "0.64", "p99 ms": "1.35",
			"lag p99 ms": "85.30", "max waiters": "0", "pool max %": "25.0", "sql ops / compacted": "1,204 / 98,796",
			"WAL B/req": "297", "stmts/req": "0.005", "efficiency": "0.36", "inline / dropped": "0 / 0",
			// 100,000 queued writes in 1,204 records written after compaction.
			"writes/UPDATE": "83.1",
		}},
	}
	for _, tt := range tests {
		got := cellsByTitle(t, td, tt.row)
		for col, want := range tt.want {
			if got[col] != want {
				t.Errorf("row %d %q = %q, want %q", tt.row, col, got[col], want)
			}
		}
	}
}

func TestTableSummaryRows(t *testing.T) {
	rep := resultstest.RepeatedReport()
	rep.Runs[4].Verification.Passed = false // one sync repetition failed verification
	rep.Summaries = results.Summarize(rep.Runs)
	td := Table([]*results.Report{rep})
	if len(td.Rows) != 2 {
		t.Fatalf("got %d rows, want 2 (one per summary, not per run)", len(td.Rows))
	}
	ac := cellsByTitle(t, td, 0)
	if ac["rps"] != "152,340 (148,100–155,020)" {
		t.Errorf("summary rps = %q, want median with spread", ac["rps"])
	}
	if ac["mode"] != "async-compact (n=3)" {
		t.Errorf("summary mode = %q", ac["mode"])
	}
	if ac["p95 ms"] != "0.64" {
		t.Errorf("identical values should show the median alone, got %q", ac["p95 ms"])
	}
	if ac["verified"] != "✓" {
		t.Errorf("async-compact verified = %q", ac["verified"])
	}
	sync := cellsByTitle(t, td, 1)
	if sync["rps"] != "2,100 (2,050–2,180)" || sync["verified"] != "✗" {
		t.Errorf("sync summary row = %q verified %q", sync["rps"], sync["verified"])
	}
	if sync["max waiters"] != "api_keys 12, providers 3" {
		t.Errorf("summary waiters = %q", sync["max waiters"])
	}
}

// A summary stored by an older engine without the extra metrics still fills every column.
func TestTableSummaryWithoutExtraMetrics(t *testing.T) {
	rep := resultstest.RepeatedReport()
	for i := range rep.Summaries {
		for k := range rep.Summaries[i].Metrics {
			if k != results.MetricThroughputRPS {
				delete(rep.Summaries[i].Metrics, k)
			}
		}
	}
	got := cellsByTitle(t, Table([]*results.Report{rep}), 0)
	if got["sql ops / compacted"] != "1,204 / 98,796" || got["p95 ms"] != "0.64" {
		t.Errorf("columns not filled from runs: %v", got)
	}
}

func TestTableLadderRows(t *testing.T) {
	td := Table([]*results.Report{resultstest.LadderReport()})
	if len(td.Rows) != 5 {
		t.Fatalf("got %d rows, want one per level (5)", len(td.Rows))
	}
	var knees []string
	for i := range td.Rows {
		c := cellsByTitle(t, td, i)
		if strings.Contains(c["requests × conc"], "knee") {
			knees = append(knees, c["requests × conc"])
		}
	}
	if len(knees) != 1 || knees[0] != "100,000 × 32 (knee)" {
		t.Errorf("knee cells = %q, want exactly [100,000 × 32 (knee)]", knees)
	}
}

func TestNumberFormats(t *testing.T) {
	tests := []struct {
		name   string
		format func(float64) string
		in     float64
		want   string
	}{
		{"rps rounds", formatRPS, 152339.6, "152,340"},
		{"rps million", formatRPS, 1234567.4, "1,234,567"},
		{"rps small", formatRPS, 45.4, "45"},
		{"ms small", formatMs, 3.468, "3.47"},
		{"ms tiny", formatMs, 0.2, "0.20"},
		{"ms hundreds", formatMs, 153.24, "153.2"},
		{"ms thousands", formatMs, 1532.4, "1,532"},
		{"count", formatCount, 98796, "98,796"},
		{"count half", formatCount, 12.5, "12.5"},
		{"pool pct", formatBasisPointsPct, 9850, "98.5"},
		{"negative", formatRPS, -1234, "-1,234"},
		{"per request large", formatPerRequest, 2783.4, "2,783"},
		{"per request", formatPerRequest, 29.74, "29.7"},
		{"per request one", formatPerRequest, 1.144, "1.14"},
		{"per request small", formatPerRequest, 0.11, "0.110"},
		{"per request tiny", formatPerRequest, 0.00523, "0.0052"},
		{"per request none", formatPerRequest, 0, "0"},
		{"efficiency", formatRatio, 0.4154, "0.42"},
		{"efficiency low", formatRatio, 0.0371, "0.037"},
	}
	for _, tt := range tests {
		if got := tt.format(tt.in); got != tt.want {
			t.Errorf("%s: format(%v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := formatSpread(results.Spread{Median: 2100, Min: 2050, Max: 2180}, formatRPS); got != "2,100 (2,050–2,180)" {
		t.Errorf("spread = %q", got)
	}
}

func TestRenderMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderMarkdown(&buf, Table([]*results.Report{resultstest.SingleReport()})); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want header + separator + 2 rows:\n%s", len(lines), buf.String())
	}
	if !strings.HasPrefix(lines[0], "| suite ") || !strings.HasSuffix(lines[0], "| max tries | inline / dropped | read total p99 ms | writes/UPDATE | hottest share | pooler waiting / avg wait ms | pg sessions | pool wait p99 ms | redo B/req | deadlocks / timeouts | server CPU µs/req | client CPU µs/req |") {
		t.Errorf("header = %q", lines[0])
	}
	if !strings.Contains(lines[1], "-: |") || !strings.HasPrefix(lines[1], "| ---") {
		t.Errorf("separator should right-align numeric columns: %q", lines[1])
	}
	for i, l := range lines {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(lines[0]) {
			t.Errorf("line %d is not aligned with the header:\n%s\n%s", i, lines[0], l)
		}
	}
	if !strings.Contains(lines[2], " 2,100 |") || !strings.Contains(lines[3], " 1,204 / 98,796 |") {
		t.Errorf("rows lack formatted values:\n%s", buf.String())
	}
}

func TestRenderCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderCSV(&buf, Table([]*results.Report{resultstest.SingleReport()})); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0][3] != "rps" || recs[1][3] != "2,100" || recs[2][9] != "0" {
		t.Errorf("csv = %q", recs)
	}
}

func TestRenderJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderJSON(&buf, Table([]*results.Report{resultstest.RepeatedReport()})); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Columns []Column `json:"columns"`
		Rows    []struct {
			Mode        string                    `json:"mode"`
			Repetitions int                       `json:"repetitions"`
			Cells       map[string]string         `json:"cells"`
			Metrics     map[string]results.Spread `json:"metrics"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Columns) != len(TableColumns) || got.Columns[3].Key != ColThroughput {
		t.Errorf("columns = %+v", got.Columns)
	}
	r := got.Rows[0]
	if r.Repetitions != 3 || r.Cells[ColThroughput] != "152,340 (148,100–155,020)" {
		t.Errorf("row = %+v", r)
	}
	if s := r.Metrics[results.MetricThroughputRPS]; s.Median != 152340 || s.Min != 148100 || s.Max != 155020 {
		t.Errorf("throughput metric = %+v", s)
	}
}

// A report written before the database figures existed shows "–" in their columns, and a
// summary row reads its runs, not the summary stored beside them.
func TestTableCostColumns(t *testing.T) {
	old := resultstest.SingleReport()
	for i := range old.Runs {
		old.Runs[i].Database, old.Runs[i].Efficiency = nil, 0
	}
	row := cellsByTitle(t, Table([]*results.Report{old}), 0)
	for _, col := range []string{"WAL B/req", "stmts/req", "efficiency"} {
		if row[col] != missingValue {
			t.Errorf("%s = %q in a report without database figures, want %s", col, row[col], missingValue)
		}
	}
	rep := resultstest.RepeatedReport()
	stale := resultstest.Degraded(rep)
	stale.Summaries = rep.Summaries
	if got := cellsByTitle(t, Table([]*results.Report{stale}), 0)["rps"]; got != "50,780 (49,367–51,673)" {
		t.Errorf("summary row rps = %q, want the runs' medians", got)
	}
}

// TestTableSlotRows: a slotted row shows its slot count with the mode and, per hot table, the
// most waiters on one physical row beside the table's.
func TestTableSlotRows(t *testing.T) {
	runs := resultstest.SlotRuns()
	td := Table([]*results.Report{{Suite: "s", Runs: runs}})
	if got := td.Rows[0].Cells[1]; got != "sync · 16 slots" {
		t.Errorf("mode cell = %q, want the slot count beside the mode", got)
	}
	if got := td.Rows[0].Cells[9]; got != "api_keys 48 (3/row), providers 2 (1/row)" {
		t.Errorf("waiters cell = %q, want each table's waiters with the most on one row", got)
	}
	for i := range runs {
		runs[i].Config.SlotPick = "session"
	}
	td = Table([]*results.Report{{Suite: "s", Runs: runs}})
	if got := td.Rows[0].Cells[1]; got != "sync · 16 slots by session" {
		t.Errorf("mode cell = %q, want the slot pick beside the count when it is not the default hash", got)
	}
}

// A pool ladder has one row per mode and pool size, named by its size, with the pool wait
// beside the lock waiters; the best size of each mode is marked, and the summary says the
// ladder and how its best size was chosen.
func TestTablePoolLadder(t *testing.T) {
	rep := resultstest.PoolLadderReport(40)
	td := Table([]*results.Report{rep})
	if len(td.Rows) != 6 {
		t.Fatalf("%d rows, want 6 (one per mode and pool size)", len(td.Rows))
	}
	for i, want := range []map[string]string{
		{"mode": "sync · pool 4", "rps": "1,500", "p99 ms": "35.00", "pool wait p99 ms": "30.00", "requests × conc": "100,000 × 64"},
		{"mode": "sync · pool 16", "rps": "2,100", "pool wait p99 ms": "9.00", "requests × conc": "100,000 × 64 (best pool at SLO)"},
		{"mode": "sync · pool 64", "p99 ms": "60.00", "pool wait p99 ms": "0.40", "requests × conc": "100,000 × 64"},
		{"mode": "async-compact · pool 4", "requests × conc": "100,000 × 64"},
		{"mode": "async-compact · pool 64", "rps": "160,000", "requests × conc": "100,000 × 64 (best pool at SLO)"},
	} {
		row := i
		if i == 4 {
			row = 5
		}
		got := cellsByTitle(t, td, row)
		for col, w := range want {
			if got[col] != w {
				t.Errorf("row %d %q = %q, want %q", row, col, got[col], w)
			}
		}
	}
	if r := td.Rows[1]; r.At["max_connections"] != results.Number(16) || r.Found != "best pool at SLO" {
		t.Errorf("sync pool 16 row: at %v, found %q", r.At, r.Found)
	}

	for i := range rep.Runs[:2] { // where the time went, once per pool size
		rep.Runs[i].RequestTime = &results.RequestTime{LatencyMeanMs: 20, AcquireMeanMs: float64(10 - i)}
	}
	var buf bytes.Buffer
	Summary(&buf, rep, SummaryOptions{Wide: true})
	for _, want := range []string{"sync · pool 4 request 20.0 ms: pool 10.0 ms", "sync · pool 16 request 20.0 ms: pool 9.00 ms",
		"sync pool ladder: 4 → 1,500 rps, p99 35.0 ms", "pool wait p99 9.00 ms, lock waiters 15, longest lock wait 30.0 ms",
		"best 16 (highest throughput with p99 ≤ 40.0 ms)", "async-compact pool ladder: ", "best 64 (highest throughput"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, buf.String())
		}
	}
	// Without an objective the best size is the fastest, and the table and summary say so.
	rep = resultstest.PoolLadderReport(0)
	if got := cellsByTitle(t, Table([]*results.Report{rep}), 1)["requests × conc"]; got != "100,000 × 64 (best pool by throughput)" {
		t.Errorf("no objective: sync pool 16 load cell %q", got)
	}
	buf.Reset()
	Summary(&buf, rep, SummaryOptions{})
	if !strings.Contains(buf.String(), "best 16 by throughput alone (no --slo-p99-ms given)") {
		t.Errorf("the summary does not say the best size is by throughput alone:\n%s", buf.String())
	}
}
