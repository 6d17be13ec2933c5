package plot

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
)

func renderPlot(t *testing.T, reports []*results.Report, samples map[string][]results.Sample) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Plot(reports, samples, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var remoteRef = regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestPlotPage(t *testing.T) {
	reports := []*results.Report{resultstest.SingleReport(), resultstest.LadderReport()}
	samples := map[string][]results.Sample{SamplesKey(0): resultstest.Samples()}
	page := renderPlot(t, reports, samples)

	if m := remoteRef.FindString(page); m != "" {
		t.Errorf("page loads a remote resource: %q", m)
	}
	if strings.Contains(page, "<script src") || strings.Contains(page, "go-echarts.github.io") {
		t.Errorf("page references an external script")
	}
	for _, want := range []string{
		"Licensed to the Apache Software Foundation", // the inlined ECharts keeps its licence header
		"echarts.init(",
		`"value":2100,`,   // sync throughput bar
		`"value":160000,`, // async-compact throughput bar
		`"formatter":"160,000"`,
		`"value":30.1,`, // sync p95 bar
		`"name":"p99 ms"`,
		`"xAxis":"32"`,      // knee mark line on the ladder
		`"knee 32"`,         // its label
		`[0,4096]`,          // first async-compact sample: elapsed 0 s, queue depth 4096
		`"name":"api_keys"`, // lock waiters by table
		`"name":"pool usage bp"`,
		`"name":"queue depth"`,
		"<td class=\"num\">2,100</td>", // the table in the header
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if again := renderPlot(t, reports, samples); again != page {
		t.Errorf("two renders of the same reports differ")
	}
}

func TestPlotChartCount(t *testing.T) {
	reports := []*results.Report{resultstest.SingleReport(), resultstest.LadderReport()}
	page := renderPlot(t, reports, map[string][]results.Sample{SamplesKey(0): resultstest.Samples()})
	// resultstest.SingleReport: throughput, latency and enqueue latency bars (it has a queue
	// mode), 2 sample charts; resultstest.LadderReport: 1 ladder (no non-ladder run, so no bars).
	if n := strings.Count(page, "echarts.init("); n != 6 {
		t.Errorf("page has %d charts, want 6", n)
	}
}

func TestPlotWithoutReports(t *testing.T) {
	if err := Plot(nil, nil, &bytes.Buffer{}); err == nil {
		t.Error("Plot of nothing succeeded")
	}
}

func TestEmbeddedEChartsCanBeInlined(t *testing.T) {
	if len(echartsJS) < 500_000 {
		t.Fatalf("embedded echarts is %d bytes: not the full build", len(echartsJS))
	}
	if strings.Contains(strings.ToLower(echartsJS), "</script") {
		t.Error("echarts.min.js contains </script and would end the inline script early")
	}
	if !strings.HasPrefix(strings.TrimSpace(echartsJS), "/*\n* Licensed to the Apache Software Foundation") {
		t.Error("echarts.min.js lost its licence header")
	}
}

// A queue mode's persist lag stands beside the other modes' request latency, its enqueue
// latency in µs on a chart of its own; the page's table has the cost columns, spreads on two
// lines, and the calibration in the report's heading.
func TestPlotPersistLagAndCost(t *testing.T) {
	page := renderPlot(t, []*results.Report{resultstest.RepeatedReport()}, nil)
	for _, want := range []string{
		`"name":"persist lag p99 ms"`,
		`"value":"-"`, // sync has no persist lag: an empty bar, not 0
		"queue modes: persist lag = enqueue to commit",
		": enqueue latency",
		`"name":"p99 µs"`,
		"<th>WAL B/req</th><th>stmts/req</th><th>efficiency</th>",
		`152,340<br><span class="range">148,100–155,020</span>`,
		"calibration: hot row 2,104/s on 64 conns, batched 450,000 rows/s on 2",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<th>suite</th>") {
		t.Error("the page's table repeats the suite its heading names")
	}
}

func TestPlotSlotLadder(t *testing.T) {
	rep := &results.Report{Suite: "usage_counter_hotspot_baseline"}
	for _, n := range []int{1, 4, 16} {
		r := resultstest.MakeRun(resultstest.SyncSpec())
		resultstest.OnLadder(&r, results.AxisSlots, float64(n), 1, 4, 16)
		r.LockMonitor.MaxWaitersPerRowByRelation = map[string]int64{"api_keys": int64(64 / n)}
		r.LockMonitor.TotalReadMs = &results.Latency{Count: 5, P99: 0.5 * float64(n)}
		rep.Runs = append(rep.Runs, r)
	}
	rep.Ladders = results.BuildLadders(rep.Runs)
	page := renderPlot(t, []*results.Report{rep}, nil)
	for _, want := range []string{"sync slot ladder", "slots per hot row", "max waiters per row", "read total p99 ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "persist lag p99 ms") {
		t.Error("a sync slot ladder plots a persist lag it does not have")
	}
}

func TestPlotRateLadder(t *testing.T) {
	page := renderPlot(t, []*results.Report{resultstest.RateLadderReport()}, nil)
	for _, want := range []string{"sync rate ladder", "async-compact rate ladder", `"name":"offered rps"`,
		"max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 400/s", `"xAxis":"400/s"`, `"yAxis":200`, `"name":"service p99 ms"`,
		"sync @ 100/s", "sync @ 800/s"} { // each rung's bars named by its rate
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	rep := resultstest.RateLadderReport()
	rep.Ladders = nil // a writer that did not store them: rebuilt from the runs and their objective
	if page := renderPlot(t, []*results.Report{rep}, nil); !strings.Contains(page, "max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 16,000/s") {
		t.Errorf("rate ladder not rebuilt from the runs")
	}
	one := resultstest.RateLadderReport() // one --rate run: no ladder to draw
	one.Runs, one.Ladders = one.Runs[:1], nil
	one.Runs[0].Config.Ladder = nil
	if page := renderPlot(t, []*results.Report{one}, nil); strings.Contains(page, "rate ladder") {
		t.Errorf("a single --rate run drawn as a one-step rate ladder")
	}
}

// An RTT ladder's bars are named by their round trip, and an enqueue latency of microseconds
// is drawn on a linear axis (on a log axis from 1 µs its bars have no height).
func TestPlotRTTLadder(t *testing.T) {
	rep, err := results.ReadFile(recordstest.Path(t, "runs/usage_counter_rtt_ladder.json"))
	if err != nil {
		t.Fatal(err)
	}
	page := renderPlot(t, []*results.Report{rep}, nil)
	for _, want := range []string{"sync RTT ladder", "sync @ 0", "sync @ 1ms", "async-compact @ 2ms", `"name":"µs","type":"value"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

// A pool ladder is drawn per mode over the pool sizes: throughput, p99, the pool wait and the
// lock waiters, with the best size named and marked; each run's samples say its pool size.
func TestPlotPoolLadder(t *testing.T) {
	var samples []results.Sample
	for run, pool := range []int{4, 16} { // the report's first two runs: sync at pools 4 and 16
		for ms := range 3 {
			samples = append(samples, results.Sample{Run: run, Mode: "sync", ElapsedMs: float64(100 * ms), LockWaiters: 2, PoolMax: int32(pool)})
		}
	}
	page := renderPlot(t, []*results.Report{resultstest.PoolLadderReport(40)}, map[string][]results.Sample{SamplesKey(0): samples})
	for _, want := range []string{"sync · pool 4 — monitor samples", "sync · pool 16 — monitor samples", "sync pool ladder", "async-compact pool ladder",
		`"name":"pool size (--pool-levels)"`, `"name":"pool wait p99 ms"`, `"name":"lock waiters"`, "best 16 (highest throughput with p99 ≤ 40.0 ms)",
		"best 64 (highest throughput with p99 ≤ 40.0 ms)", `"xAxis":"16"`, "best pool at SLO 16", "sync · pool 16"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}
