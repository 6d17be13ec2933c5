package results

import (
	"bytes"
	"strings"
	"testing"
)

// rateLadderReport is an open-loop ladder of sync and async-compact judged at p99 ≤ 200 ms:
// sync holds 400/s within it and not 800/s (its p99 explodes once it falls behind);
// async-compact holds every rate up to 16,000/s.
func rateLadderReport() *Report {
	var runs []Run
	step := func(spec runSpec, rate, achieved, p99, service float64) {
		spec.rps, spec.p99, spec.p95 = achieved, p99, p99*0.8
		r := makeRun(spec)
		r.Rate = rate
		r.Config["rate"], r.Config["rates"], r.Config["slo-p99-ms"] = rate, []float64{100, 200}, 200.0
		r.Config["arrivals"], r.Config["ramp"], r.Config["max-lag"] = "poisson", "0s", "0s"
		share := min(1, achieved/rate)
		r.Load.OpenLoop = &OpenLoop{TargetRPS: rate, AchievedRPS: achieved, SentShare: share, HeldRate: HeldRate(share),
			Arrivals: "poisson", ServiceMs: Latency{P99: service}}
		runs = append(runs, r)
	}
	for _, s := range []struct{ rate, achieved, p99, service float64 }{
		{100, 100, 20, 19}, {200, 199, 45, 30}, {400, 396, 150, 60}, {800, 520, 9000, 120},
	} {
		step(syncSpec(), s.rate, s.achieved, s.p99, s.service)
	}
	for _, s := range []struct{ rate, achieved, p99, service float64 }{
		{1000, 1000, 1, 0.5}, {4000, 3999, 1.2, 0.6}, {16000, 15900, 2, 0.8},
	} {
		step(asyncCompactSpec(), s.rate, s.achieved, s.p99, s.service)
	}
	rep := newReport(runs...)
	for _, m := range []string{"sync", "async-compact"} {
		rep.RateLadders = append(rep.RateLadders, BuildRateLadder(m, runs, 200))
	}
	return rep
}

func TestBuildRateLadder(t *testing.T) {
	rep := rateLadderReport()
	sync, compact := rep.RateLadders[0], rep.RateLadders[1]
	if sync.MaxRateAtSLO != 400 || compact.MaxRateAtSLO != 16000 {
		t.Fatalf("max rate at SLO: sync %g, async-compact %g; want 400 and 16000", sync.MaxRateAtSLO, compact.MaxRateAtSLO)
	}
	if len(sync.Rates) != 4 || sync.Rates[0].TargetRPS != 100 || sync.Rates[3].MetSLO || !sync.Rates[2].MaxAtSLO {
		t.Errorf("sync steps %+v", sync.Rates)
	}
	if s := sync.Rates[2]; s.AchievedRPS != 396 || s.ServiceP99Ms != 60 || s.P99Ms != 150 {
		t.Errorf("sync 400/s step %+v", s)
	}
	// A rate whose p99 is within the objective but that sent fewer than 95% of its arrivals
	// does not count: the latency of the requests it never sent is not in its p99.
	runs := rep.Runs[:3]
	short := rep.Runs[2]
	short.Load.OpenLoop = &OpenLoop{TargetRPS: 400, AchievedRPS: 370, SentShare: 0.925}
	short.Load.ThroughputRPS = 370
	l := BuildRateLadder("sync", append(runs[:2:2], short), 200)
	if l.MaxRateAtSLO != 200 {
		t.Errorf("max rate %g, want 200 (400/s sent only 92.5%% of its arrivals)", l.MaxRateAtSLO)
	}
	if l := BuildRateLadder("sync", rep.Runs, 0); l.MaxRateAtSLO != 0 || len(l.Rates) != 4 {
		t.Errorf("without an objective: max rate %g over %d steps, want 0 over 4", l.MaxRateAtSLO, len(l.Rates))
	}
}

func TestTableRateLadderRows(t *testing.T) {
	tbl := Table([]*Report{rateLadderReport()})
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

func TestCompareRateLadders(t *testing.T) {
	old, new := rateLadderReport(), rateLadderReport()
	new.RateLadders[0].MaxRateAtSLO = 200
	c, err := Compare(old, new, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 7 {
		t.Errorf("%d pairs, want the 7 (mode, rate) runs paired by rate", len(c.Pairs))
	}
	for _, p := range c.Pairs {
		if !pairHas(p, MetricAchievedRPS) || !pairHas(p, MetricServiceP99Ms) {
			t.Errorf("pair %s %s lacks achieved rps or service p99", p.Mode, p.Load)
		}
	}
	if len(c.RateLadders) != 2 || c.RateLadders[0].Old != 400 || c.RateLadders[0].New != 200 {
		t.Errorf("rate ladders %+v", c.RateLadders)
	}
	var b bytes.Buffer
	if err := RenderComparison(&b, c, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "sync rate ladder, max rate at p99 ≤ 200 ms: 400/s → 200/s") {
		t.Errorf("comparison does not show the ladder's max rate:\n%s", b.String())
	}
	// A rate is a shaping key: 400/s does not pair with 800/s.
	other := rateLadderReport()
	for i := range other.Runs {
		other.Runs[i].Rate *= 2
		other.Runs[i].Config["rate"] = other.Runs[i].Rate
	}
	c, _ = Compare(old, other, DefaultOptions())
	for _, p := range c.Pairs {
		if !strings.Contains(p.Config, "rate") {
			t.Errorf("pair %s %s has no rate in its config %q", p.Mode, p.Load, p.Config)
		}
	}
	// Doubled, sync's 100, 200, 400, 800 become 200, 400, 800, 1,600: three rates on both
	// sides; async-compact's 1,000, 4,000, 16,000 become 2,000, 8,000, 32,000: none.
	if len(c.Pairs) != 3 {
		t.Errorf("%d pairs across doubled rates, want 3 (sync at 200/s, 400/s and 800/s)", len(c.Pairs))
	}
}

func TestPlotRateLadder(t *testing.T) {
	page := renderPlot(t, []*Report{rateLadderReport()}, nil)
	for _, want := range []string{"sync rate ladder", "async-compact rate ladder", `"name":"offered rps"`,
		"max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 400/s", `"xAxis":"400"`, `"yAxis":200`, `"name":"service p99 ms"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	rep := rateLadderReport()
	rep.RateLadders = nil // an older writer: rebuilt from the runs and their objective
	if page := renderPlot(t, []*Report{rep}, nil); !strings.Contains(page, "max rate at p99 ≤ 200 ms (≥ 95% of arrivals sent): 16,000/s") {
		t.Errorf("rate ladder not rebuilt from the runs")
	}
}

func pairHas(p Pair, metric string) bool {
	for _, d := range p.Metrics {
		if d.Metric == metric {
			return true
		}
	}
	return false
}
