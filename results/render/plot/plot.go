// Package plot draws reports (package results) as one self-contained HTML page: the table of
// package render, throughput and latency per mode, ladders, and the monitor's samples over
// time (go-echarts, with the ECharts script embedded from assets/). It is apart from render so
// that only what draws (the baseline tool) links go-echarts.
package plot

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/components"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
)

// echartsJS is Apache ECharts, inlined into every page so that it opens with no network; see
// assets/README.md for its version and licence.
//
//go:embed assets/echarts.min.js
var echartsJS string

// SamplesKey is the key of the samples of reports[i] in the map Plot takes.
func SamplesKey(i int) string { return strconv.Itoa(i) }

// Page layout: bar charts go two to a row, time series take the whole row.
const (
	halfWidth = "660px"
	fullWidth = "1380px"
)

// Plot writes one self-contained HTML page (ECharts inlined, no http(s) reference to load) with,
// for every report: a table of its rows (as render.Table gives them); throughput and p50/p95/p99 per
// mode as bars, side by side (medians when repeated; a log scale when the modes differ by more
// than 20×); for each ladder, throughput and p95 against concurrency with the knee marked; for
// each rate ladder, latency (from the intended start and of service) against the offered rate,
// with the objective and the max rate at it marked; and,
// from samples[SamplesKey(i)], one chart per run of lock waiters by table, pool usage (basis
// points) and queue depth over time.
func Plot(reports []*results.Report, samples map[string][]results.Sample, w io.Writer) error {
	return PlotPage(Page{Reports: reports, Samples: samples}, w)
}

// Page is what PlotPage draws: reports (with their samples, as Plot takes them) and A/Bs.
type Page struct {
	Reports []*results.Report
	Samples map[string][]results.Sample
	// AB are A/Bs (baseline ab), each drawn first as its own section (ab.go).
	AB []*judge.AB
}

// PlotPage writes the page of Plot for pg's reports, after a section per A/B of pg.AB.
func PlotPage(pg Page, w io.Writer) error {
	reports, samples := pg.Reports, pg.Samples
	if len(reports) == 0 && len(pg.AB) == 0 {
		return errors.New("plot: no report")
	}
	if strings.Contains(strings.ToLower(echartsJS), "</script") {
		return errors.New("plot: embedded echarts.min.js contains </script and cannot be inlined")
	}
	p := &plotter{page: components.NewPage()}
	var suites []string
	for _, ab := range pg.AB {
		suites = append(suites, ab.Suite)
		p.abCharts(ab)
	}
	for i, rep := range reports {
		suites = append(suites, rep.Suite)
		prefix := ""
		if len(reports) > 1 {
			prefix = fmt.Sprintf("#%d ", i+1)
		}
		p.modeBars(prefix, rep)
		ladders := rep.Ladders
		if len(ladders) == 0 {
			ladders = laddersFromRuns(rep.Runs)
		}
		for _, l := range ladders {
			p.ladder(prefix+rep.Suite, l)
		}
		for _, l := range rep.SlotLadders {
			p.slotLadder(prefix+rep.Suite, l, slotPick(rep))
		}
		for _, l := range rep.RTTLadders {
			p.rttLadder(prefix+rep.Suite, l)
		}
		p.poolLadders(prefix+rep.Suite, rep.PoolLadders)
		rateLadders := rep.RateLadders
		if len(rateLadders) == 0 {
			rateLadders = rateLaddersFromRuns(rep.Runs)
		}
		for _, l := range rateLadders {
			p.rateLadder(prefix+rep.Suite, l)
		}
		for _, run := range groupSamples(samples[SamplesKey(i)]) {
			if run.run < len(rep.Runs) && rep.Runs[run.run].Mode == run.mode { // a pool ladder's run says its size
				run.mode += render.PoolText(rep.Runs[run.run].PoolSize)
			}
			p.samplesChart(prefix+rep.Suite, run)
		}
	}
	p.page.SetPageTitle("hotspotkit baseline: " + strings.Join(uniq(suites), ", "))
	p.page.SetLayout(components.PageFlexLayout)
	// The charts asked for echarts.min.js from the go-echarts CDN; the page inlines it instead.
	p.page.ClearPresetJSAssets()
	p.page.ClearPresetCSSAssets()

	var buf bytes.Buffer
	if err := p.page.Render(&buf); err != nil {
		return err
	}
	page := buf.String()
	script := "<script type=\"text/javascript\">\n" + echartsJS + "\n</script>\n"
	head := strings.Index(page, "</head>")
	body := strings.Index(page, "<body>")
	if head < 0 || body < head {
		return errors.New("plot: unexpected page template (no </head> or <body>)")
	}
	body += len("<body>")
	var out strings.Builder
	out.WriteString(page[:head])
	out.WriteString(pageStyle)
	out.WriteString(script)
	out.WriteString(page[head:body])
	out.WriteString(pageHeader(reports, pg.AB))
	out.WriteString(page[body:])
	_, err := io.WriteString(w, out.String())
	return err
}

const pageStyle = `<style>
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 16px; color: #222; }
header h1 { font-size: 20px; margin: 0 0 4px; }
header h2 { font-size: 16px; margin: 18px 0 4px; }
header p { margin: 2px 0 8px; color: #555; font-size: 13px; }
table.baseline { border-collapse: collapse; font-size: 12px; margin-bottom: 8px; }
table.baseline th, table.baseline td { border: 1px solid #ddd; padding: 3px 6px; white-space: nowrap; vertical-align: top; }
table.baseline th { background: #f4f4f4; white-space: normal; max-width: 90px; }
table.baseline td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.baseline td.wrap { white-space: normal; min-width: 120px; max-width: 220px; }
table.baseline span.range { color: #777; font-size: 10px; }
</style>
`

// pageHeader is the heading of the page: per report what was measured on what, and its table.
func pageHeader(reports []*results.Report, abs []*judge.AB) string {
	var b strings.Builder
	b.WriteString("<header>\n<h1>hotspotkit baseline</h1>\n")
	for _, ab := range abs {
		b.WriteString(abHeader(ab)) // abplot.go
	}
	for i, rep := range reports {
		title := rep.Suite
		if len(reports) > 1 {
			title = fmt.Sprintf("#%d %s", i+1, rep.Suite)
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n", html.EscapeString(title), html.EscapeString(environmentLine(rep)))
		if rep.Error != "" {
			fmt.Fprintf(&b, "<p>error: %s</p>\n", html.EscapeString(rep.Error))
		}
		b.WriteString(pageTable(render.Table([]*results.Report{rep})))
	}
	b.WriteString("</header>\n")
	return b.String()
}

// pageTable is the table of one report for a page 1,400 px wide: the heading above names the
// suite, so its column is left out; a spread shows its median with the min–max range in small
// type beneath it; column titles and the waiters list wrap.
func pageTable(t render.TableData) string {
	var b strings.Builder
	b.WriteString("<table class=\"baseline\">\n<tr>")
	for _, c := range t.Columns {
		if c.Key != render.ColSuite {
			fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c.Title))
		}
	}
	b.WriteString("</tr>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i, cell := range r.Cells {
			c := t.Columns[i]
			var class []string
			switch {
			case c.Key == render.ColSuite:
				continue
			case c.Numeric:
				class = append(class, "num")
			case c.Key == render.ColMaxWaiters:
				class = append(class, "wrap")
			}
			text := html.EscapeString(cell)
			if med, rng, ok := splitSpread(cell); ok {
				text = html.EscapeString(med) + "<br><span class=\"range\">" + html.EscapeString(rng) + "</span>"
			}
			attr := ""
			if len(class) > 0 {
				attr = ` class="` + strings.Join(class, " ") + `"`
			}
			fmt.Fprintf(&b, "<td%s>%s</td>", attr, text)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	return b.String()
}

// splitSpread splits a cell formatted by formatSpread, "median (min–max)", into its median and
// its range.
func splitSpread(cell string) (median, rng string, ok bool) {
	med, rest, found := strings.Cut(cell, " (")
	if !found || !strings.HasSuffix(rest, ")") || !strings.Contains(rest, render.SpreadSep) {
		return "", "", false
	}
	return med, strings.TrimSuffix(rest, ")"), true
}

func environmentLine(rep *results.Report) string {
	e := rep.Environment
	var parts []string
	add := func(label, v string) {
		if v != "" {
			parts = append(parts, label+v)
		}
	}
	if !rep.StartedAt.IsZero() {
		add("", rep.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	add("git ", e.GitRevision)
	add("", e.MachineClass)
	if e.NumCPU > 0 {
		add("", fmt.Sprintf("%d CPU", e.NumCPU))
	}
	add("", e.CPUModel)
	add("PostgreSQL ", e.PostgresVersion)
	add("durability ", e.DurabilityText())
	if !e.DataInMemory() {
		add("data on ", e.PostgresDataFS)
	}
	add("queue ", e.QueueBackend)
	add("", e.GoVersion)
	if c := e.Calibration; c != nil && !c.Skipped {
		add("calibration: ", fmt.Sprintf("hot row %s/s on %d conns, batched %s rows/s on %d",
			render.FormatRPS(c.HotRowUpdateRPSPool.Median), c.PoolConns, render.FormatRPS(c.BatchedWriteRowsPerSec.Median), c.BatchedWriteConns))
	} else {
		add("", "no calibration")
	}
	if rep.Interrupted {
		parts = append(parts, "INTERRUPTED")
	}
	return strings.Join(parts, " · ")
}

type plotter struct {
	page   *components.Page
	charts int
}

// init gives each chart a stable id (so the same reports give the same page) and its size.
func (p *plotter) init(width, height string) opts.Initialization {
	p.charts++
	return opts.Initialization{ChartID: fmt.Sprintf("chart_%d", p.charts), Width: width, Height: height}
}

// slotPick is how the report's slotted runs picked their slot (--slot-pick); "" when unslotted.
func slotPick(rep *results.Report) string {
	for _, r := range rep.Runs {
		if pick := runSlotPick(r); pick != "" {
			return pick
		}
	}
	return ""
}

// runSlotPick is how run r picked its slots (its config's slot_pick); "" when unslotted.
func runSlotPick(r results.Run) string { return r.Config.SlotPick }

// modeBars adds the throughput chart and the latency chart of the non-ladder rows of a report.
func (p *plotter) modeBars(prefix string, rep *results.Report) {
	var rows []render.TableRow
	for _, r := range render.Table([]*results.Report{rep}).Rows {
		if r.Level == 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	pick := slotPick(rep)
	labels := make([]string, len(rows))
	for i, r := range rows {
		labels[i] = render.ModeLabel(r.Mode, r.Slots, pick)
		if r.Rate > 0 { // a rung of --rates, or one --rate run: the bars of one mode differ by it
			labels[i] += " @ " + render.FormatRPS(r.Rate) + "/s"
		}
		if r.RTT != "" { // a rung of --rtt-levels, or one --db-rtt run
			labels[i] += " @ " + r.RTT
		}
		labels[i] += render.PoolText(r.Pool) // a rung of --pool-levels
		if r.Repetition > 0 {
			labels[i] = fmt.Sprintf("%s #%d", labels[i], r.Repetition)
		}
	}
	// Every bar keeps its label; past four bars they lean so that they fit.
	xAxis := opts.XAxis{AxisLabel: &opts.AxisLabel{Interval: "0"}}
	gridBottom := "60"
	if len(labels) > 4 {
		xAxis.AxisLabel.Rotate = 25
		gridBottom = "110"
	}
	subtitle := "one run per bar"
	if rows[0].Repetitions > 0 {
		subtitle = "medians of the repetitions (range in the table above)"
	}

	tput := charts.NewBar()
	values := metricValues(rows, results.MetricThroughputRPS)
	tput.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(halfWidth, "420px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: prefix + rep.Suite + ": throughput", Subtitle: subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithYAxisOpts(valueAxis("rps", values)),
		charts.WithXAxisOpts(xAxis),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "30", Top: "70", Bottom: gridBottom}),
	)
	tput.SetXAxis(labels).AddSeries("throughput rps", barData(values, render.FormatRPS))
	p.page.AddCharts(tput)

	p.latencyBars(prefix, rep.Suite, rows, labels, xAxis, gridBottom, subtitle)
}

// latencyBars adds the latency charts of modeBars' rows. Queue modes answer a request once it
// is enqueued, in microseconds, and the write lands later: on one axis with a sync mode's
// seconds their requests would not show. So the first chart has the request latency of the
// other modes and, beside it, the queue modes' persist lag (enqueue to commit), so that an
// async mode never reads as if its writes were instant; a second chart has the queue modes'
// enqueue latency in µs.
func (p *plotter) latencyBars(prefix, suite string, rows []render.TableRow, labels []string, xAxis opts.XAxis, gridBottom, subtitle string) {
	type series struct {
		metric, name string
		queue        bool // a queue mode's figure: its bar empty for the other modes, and theirs for it
	}
	latSeries := []series{{results.MetricP50Ms, "p50 ms", false}, {results.MetricP95Ms, "p95 ms", false}, {results.MetricP99Ms, "p99 ms", false}}
	isQueue := make([]bool, len(rows))
	var queueRows []int
	for i, r := range rows {
		if _, ok := r.Metrics[results.MetricPersistLagP99Ms]; ok {
			isQueue[i] = true
			queueRows = append(queueRows, i)
		}
	}
	latSubtitle := subtitle
	if len(queueRows) > 0 {
		latSeries = append(latSeries, series{results.MetricPersistLagP50Ms, "persist lag p50 ms", true},
			series{results.MetricPersistLagP99Ms, "persist lag p99 ms", true})
		latSubtitle += "; queue modes: persist lag = enqueue to commit (their enqueue: next chart)"
	}
	lat := charts.NewBar()
	data := make([][]opts.BarData, len(latSeries))
	var all []float64
	for j, m := range latSeries {
		data[j] = barDataOf(rows, m.metric, render.FormatMs)
		for i, r := range rows {
			if isQueue[i] != m.queue {
				data[j][i] = opts.BarData{Value: "-"}
			} else if v, ok := r.Metrics[m.metric]; ok {
				all = append(all, v.Median)
			}
		}
	}
	lat.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(halfWidth, "420px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: prefix + suite + ": latency", Subtitle: latSubtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Right: "10", Top: "40"}),
		charts.WithYAxisOpts(valueAxis("ms", all)),
		charts.WithXAxisOpts(xAxis),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "30", Top: "90", Bottom: gridBottom}),
	)
	lat.SetXAxis(labels)
	for j, m := range latSeries {
		lat.AddSeries(m.name, data[j])
	}
	p.page.AddCharts(lat)
	if len(queueRows) == 0 {
		return
	}

	enq := charts.NewBar()
	qLabels := make([]string, len(queueRows))
	for k, i := range queueRows {
		qLabels[k] = labels[i]
	}
	enqSeries := []struct{ metric, name string }{{results.MetricP50Ms, "p50 µs"}, {results.MetricP95Ms, "p95 µs"}, {results.MetricP99Ms, "p99 µs"}}
	enqData := make([][]opts.BarData, len(enqSeries))
	most := 1.0
	for j, m := range enqSeries {
		for _, i := range queueRows {
			ms := rows[i].Metrics[m.metric].Median
			most = max(most, ms*1000)
			enqData[j] = append(enqData[j], opts.BarData{Value: max(ms*1000, 1),
				Label: &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: render.FormatDuration(ms), FontSize: 10}})
		}
	}
	// An enqueue takes from 1 µs (the histogram's floor) to milliseconds behind a full queue:
	// a log axis when the bars span two decades or more, else a linear one (on a log axis
	// from 1 µs, a bar of 1 µs has no height).
	yAxis := opts.YAxis{Name: "µs", Type: "value"}
	if most >= 100 {
		yAxis = opts.YAxis{Name: "µs (log)", Type: "log"}
	}
	enq.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(halfWidth, "420px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: prefix + suite + ": enqueue latency", Subtitle: subtitle + "; queue modes, whose request is the enqueue"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Right: "10", Top: "40"}),
		charts.WithYAxisOpts(yAxis),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "30", Top: "90", Bottom: "60"}),
	)
	enq.SetXAxis(qLabels)
	for j, m := range enqSeries {
		enq.AddSeries(m.name, enqData[j])
	}
	p.page.AddCharts(enq)
}

// barDataOf is barData of a metric some rows may lack (persist lag of a sync mode): their bar
// is left empty rather than drawn at 0.
func barDataOf(rows []render.TableRow, metric string, format func(float64) string) []opts.BarData {
	out := barData(metricValues(rows, metric), format)
	for i, r := range rows {
		if _, ok := r.Metrics[metric]; !ok {
			out[i] = opts.BarData{Value: "-"}
		}
	}
	return out
}

func metricValues(rows []render.TableRow, metric string) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = r.Metrics[metric].Median
	}
	return out
}

// barData labels every bar with its value in the table's format, so the page and the table
// read the same.
func barData(values []float64, format func(float64) string) []opts.BarData {
	out := make([]opts.BarData, len(values))
	for i, v := range values {
		out[i] = opts.BarData{Value: v, Label: &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: format(v), FontSize: 10}}
	}
	return out
}

// valueAxis is linear unless the values span more than 20×, where a linear axis would flatten
// the small ones (a sync mode next to an async one) and a log axis shows both. ECharts starts
// bars on a log axis at 1, so a value below 1 (a sub-millisecond latency) would hang down from
// there: such values keep the linear axis, and their bar labels still give the number.
func valueAxis(name string, values []float64) opts.YAxis {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v < 1 {
			return opts.YAxis{Name: name, Type: "value"}
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi > 20*lo {
		return opts.YAxis{Name: name + " (log)", Type: "log"}
	}
	return opts.YAxis{Name: name, Type: "value"}
}

func laddersFromRuns(runs []results.Run) []results.ConcurrencyLadder {
	var modes []string
	seen := make(map[string]bool)
	for _, r := range runs {
		if r.Level > 0 && !seen[r.Mode] {
			seen[r.Mode] = true
			modes = append(modes, r.Mode)
		}
	}
	out := make([]results.ConcurrencyLadder, 0, len(modes))
	for _, m := range modes {
		out = append(out, results.BuildLadder(m, runs))
	}
	return out
}

// ladder adds throughput (left axis) and p95 (right axis) against concurrency, the knee marked
// by a vertical line and a pin on the throughput line.
func (p *plotter) ladder(title string, l results.ConcurrencyLadder) {
	if len(l.Levels) == 0 {
		return
	}
	levels := append([]results.ConcurrencyLevel(nil), l.Levels...)
	sort.SliceStable(levels, func(i, j int) bool { return levels[i].Concurrency < levels[j].Concurrency })
	x := make([]string, len(levels))
	tput := make([]opts.LineData, len(levels))
	p95 := make([]opts.LineData, len(levels))
	for i, lv := range levels {
		x[i] = strconv.Itoa(lv.Concurrency)
		tput[i] = opts.LineData{Value: lv.ThroughputRPS}
		p95[i] = opts.LineData{Value: lv.P95Ms, YAxisIndex: 1}
	}
	subtitle := "no knee: throughput still grows (or p95 does not rise) at the last level"
	var kneeOpts []charts.SeriesOpts
	if l.KneeConcurrency > 0 {
		subtitle = fmt.Sprintf("knee at concurrency %d: beyond it throughput gains < 5%% while p95 rises", l.KneeConcurrency)
		k := strconv.Itoa(l.KneeConcurrency)
		var kneeTput float64
		for _, lv := range levels {
			if lv.Concurrency == l.KneeConcurrency {
				kneeTput = lv.ThroughputRPS
			}
		}
		kneeOpts = append(kneeOpts,
			charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: "knee " + k, XAxis: k}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
				Symbol:    []string{"none", "none"},
				Label:     &opts.Label{Show: opts.Bool(true), Formatter: "knee " + k},
				LineStyle: &opts.LineStyle{Type: "dashed", Color: "#c23531", Width: 2},
			}),
			charts.WithMarkPointNameCoordItemOpts(opts.MarkPointNameCoordItem{
				Name: "knee", Coordinate: []interface{}{k, kneeTput}, Value: render.FormatRPS(kneeTput),
				Label: &opts.Label{Show: opts.Bool(true), FontSize: 10},
			}),
		)
	}
	c := p.ladderChart(opts.Title{Title: title + ": " + l.Mode + " ladder", Subtitle: subtitle}, "concurrency",
		opts.YAxis{Name: "rps", Type: "value"}, "p95 ms")
	c.SetXAxis(x).
		AddSeries("throughput rps", tput, kneeOpts...).
		AddSeries("p95 ms", p95, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}))
	p.page.AddCharts(c)
}

// rateLaddersFromRuns rebuilds the rate ladders of a report that did not store them, with the
// objective its runs recorded.
func rateLaddersFromRuns(runs []results.Run) []results.RateLadder {
	var out []results.RateLadder
	seen := make(map[string]bool)
	for _, r := range runs {
		if len(r.Config.Rates) > 0 && r.Rate > 0 && r.Level == 0 && !seen[r.Mode] { // --rates, not one --rate
			seen[r.Mode] = true
			out = append(out, results.BuildRateLadder(r.Mode, runs, r.Config.SLOP99Ms))
		}
	}
	return out
}

// rateLadder adds p50, p99 and service p99 (left axis) and the achieved rate (right axis)
// against the offered rate, the objective as a horizontal line and the max rate at it as a
// vertical one.
func (p *plotter) rateLadder(title string, l results.RateLadder) {
	if len(l.Rates) == 0 {
		return
	}
	x := make([]string, len(l.Rates))
	p50 := make([]opts.LineData, len(l.Rates))
	p99 := make([]opts.LineData, len(l.Rates))
	service := make([]opts.LineData, len(l.Rates))
	achieved := make([]opts.LineData, len(l.Rates))
	latencies := []float64{l.SLOP99Ms}
	for i, s := range l.Rates {
		x[i] = render.FormatRPS(s.TargetRPS)
		p50[i] = opts.LineData{Value: s.P50Ms}
		p99[i] = opts.LineData{Value: s.P99Ms}
		service[i] = opts.LineData{Value: s.ServiceP99Ms}
		achieved[i] = opts.LineData{Value: s.AchievedRPS, YAxisIndex: 1}
		latencies = append(latencies, s.P50Ms, s.P99Ms, s.ServiceP99Ms)
	}
	if l.SLOP99Ms == 0 {
		latencies = latencies[1:]
	}
	subtitle := "latency from the intended start (what a client sees) and service time, against the offered rate"
	var p99Opts []charts.SeriesOpts
	if l.SLOP99Ms > 0 {
		subtitle = fmt.Sprintf("no rate kept p99 ≤ %g ms with ≥ 95%% of its arrivals sent", l.SLOP99Ms)
		if l.MaxRateAtSLO > 0 {
			k := render.FormatRPS(l.MaxRateAtSLO)
			subtitle = fmt.Sprintf("max rate at p99 ≤ %g ms (≥ 95%% of arrivals sent): %s/s", l.SLOP99Ms, k)
			p99Opts = append(p99Opts, charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: "max at SLO " + k, XAxis: k}))
		}
		p99Opts = append(p99Opts,
			charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: fmt.Sprintf("SLO %g ms", l.SLOP99Ms), YAxis: l.SLOP99Ms}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
				Symbol:    []string{"none", "none"},
				Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}"},
				LineStyle: &opts.LineStyle{Type: "dashed", Color: "#c23531", Width: 2},
			}))
	}
	c := p.ladderChart(opts.Title{Title: title + ": " + l.Mode + " rate ladder", Subtitle: subtitle}, "offered rps",
		valueAxis("ms", latencies), "achieved rps")
	c.SetXAxis(x).
		AddSeries("p99 ms", p99, p99Opts...).
		AddSeries("p50 ms", p50).
		AddSeries("service p99 ms", service).
		AddSeries("achieved rps", achieved, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}))
	p.page.AddCharts(c)
}

// slotLadder adds, against the slots per hot row, throughput (left axis) and what slots change
// on the right axis: the most waiters on one physical row, and the p99 of reading a total and
// (queue modes) of the persist lag, in ms.
func (p *plotter) slotLadder(title string, l results.SlotLadder, pick string) {
	if len(l.Levels) == 0 {
		return
	}
	levels := append([]results.SlotLevel(nil), l.Levels...)
	sort.SliceStable(levels, func(i, j int) bool { return levels[i].Slots < levels[j].Slots })
	x := make([]string, len(levels))
	series := map[string][]opts.LineData{}
	names := []string{"throughput rps", "max waiters per row", "read total p99 ms", "persist lag p99 ms"}
	for i, lv := range levels {
		x[i] = strconv.Itoa(lv.Slots)
		for j, v := range []float64{lv.ThroughputRPS, lv.MaxWaitersPerRow, lv.TotalReadP99Ms, lv.PersistLagP99Ms} {
			d := opts.LineData{Value: v}
			if j > 0 {
				d.YAxisIndex = 1
			}
			series[names[j]] = append(series[names[j]], d)
		}
	}
	subtitle := "more slots still add throughput at the last count"
	if l.KneeSlots > 0 {
		subtitle = fmt.Sprintf("beyond %d slots throughput gains < 5%%", l.KneeSlots)
	}
	if pick != "" {
		subtitle = "slot picked by " + pick + "; " + subtitle
	}
	c := p.ladderChart(opts.Title{Title: title + ": " + l.Mode + " slot ladder", Subtitle: subtitle}, "slots per hot row",
		opts.YAxis{Name: "rps", Type: "value"}, "waiters / ms")
	c.SetXAxis(x).AddSeries(names[0], series[names[0]])
	for _, name := range names[1:] {
		if slices.ContainsFunc(series[name], func(d opts.LineData) bool { return d.Value.(float64) > 0 }) {
			c.AddSeries(name, series[name], charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}))
		}
	}
	p.page.AddCharts(c)
}

// rttLadder charts an RTT ladder: throughput, p99, persist lag, the most waiters and the
// longest lock wait against the round trip added to PostgreSQL.
func (p *plotter) rttLadder(title string, l results.RTTLadder) {
	if len(l.Levels) == 0 {
		return
	}
	levels := append([]results.RTTLevel(nil), l.Levels...)
	sort.SliceStable(levels, func(i, j int) bool { return levels[i].RTTMs < levels[j].RTTMs })
	x := make([]string, len(levels))
	names := []string{"throughput rps", "p99 ms", "persist lag p99 ms", "max waiters", "longest lock wait ms"}
	series := map[string][]opts.LineData{}
	for i, lv := range levels {
		x[i] = render.FormatRTT(lv.RTTMs)
		for j, v := range []float64{lv.ThroughputRPS, lv.P99Ms, lv.PersistLagP99Ms, lv.MaxWaiters, lv.MaxLockWaitMs} {
			d := opts.LineData{Value: v}
			if j > 0 {
				d.YAxisIndex = 1
			}
			series[names[j]] = append(series[names[j]], d)
		}
	}
	c := p.ladderChart(opts.Title{Title: title + ": " + l.Mode + " RTT ladder", Subtitle: "round trip added to PostgreSQL (--rtt-levels)"},
		"round trip", opts.YAxis{Name: "rps", Type: "value"}, "ms / waiters")
	c.SetXAxis(x).AddSeries(names[0], series[names[0]])
	for _, name := range names[1:] {
		if slices.ContainsFunc(series[name], func(d opts.LineData) bool { return d.Value.(float64) > 0 }) {
			c.AddSeries(name, series[name], charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}))
		}
	}
	p.page.AddCharts(c)
}

// poolLadders charts the pool ladders of a report (--pool-levels): throughput, request p99,
// the p99 wait for a pool connection and the most lock waiters against the pool size, one line per mode in each, the
// best size of each mode named in the throughput chart's subtitle.
func (p *plotter) poolLadders(title string, ladders []results.PoolLadder) {
	if len(ladders) == 0 {
		return
	}
	var sizes []int
	var best []string
	for _, l := range ladders {
		for _, lv := range l.Levels {
			if !slices.Contains(sizes, lv.Pool) {
				sizes = append(sizes, lv.Pool)
			}
		}
		if l.BestPool > 0 {
			best = append(best, fmt.Sprintf("%s %d", l.Mode, l.BestPool))
		} else {
			best = append(best, l.Mode+" none")
		}
	}
	slices.Sort(sizes)
	x := make([]string, len(sizes))
	for i, n := range sizes {
		x[i] = strconv.Itoa(n)
	}
	bestText := "best pool by throughput (no --slo-p99-ms): " + strings.Join(best, ", ")
	if slo := ladders[0].SLOP99Ms; slo > 0 {
		bestText = fmt.Sprintf("best pool with p99 ≤ %g ms: %s", slo, strings.Join(best, ", "))
	}
	for _, m := range []struct {
		name, unit, subtitle string
		value                func(results.PoolLevel) float64
	}{
		{"throughput", "rps", bestText, func(lv results.PoolLevel) float64 { return lv.ThroughputRPS }},
		{"request p99", "ms", "a queue mode's request is its enqueue", func(lv results.PoolLevel) float64 { return lv.P99Ms }},
		{"pool wait p99", "ms", "the wait for a connection of the load's pool", func(lv results.PoolLevel) float64 { return lv.AcquireWaitP99Ms }},
		{"lock waiters", "sessions", "the most sessions waiting on a lock at once (the monitor's samples)", func(lv results.PoolLevel) float64 { return lv.MaxLockWaiters }},
	} {
		c := charts.NewLine()
		var all []float64
		for _, l := range ladders {
			for _, lv := range l.Levels {
				all = append(all, m.value(lv))
			}
		}
		c.SetGlobalOptions(
			charts.WithInitializationOpts(p.init(halfWidth, "420px")),
			charts.WithAnimation(false),
			charts.WithTitleOpts(opts.Title{Title: title + ": " + m.name + " by pool size", Subtitle: m.subtitle}),
			charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
			charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Right: "10", Top: "48"}),
			charts.WithXAxisOpts(opts.XAxis{Name: "pool size (--pool-levels)", Type: "category", NameLocation: "middle", NameGap: 28}),
			charts.WithYAxisOpts(valueAxis(m.unit, all)),
			charts.WithGridOpts(opts.Grid{Left: "80", Right: "40", Top: "100", Bottom: "50"}),
		)
		c.SetXAxis(x)
		for _, l := range ladders {
			data := make([]opts.LineData, len(sizes))
			for i, n := range sizes {
				data[i] = opts.LineData{Value: "-"} // a size this mode did not run at: a gap
				for _, lv := range l.Levels {
					if lv.Pool == n {
						data[i] = opts.LineData{Value: m.value(lv)}
					}
				}
			}
			c.AddSeries(l.Mode, data)
		}
		p.page.AddCharts(c)
	}
}

// ladderChart is the frame of a ladder's chart: the rungs along a category x axis, a left axis
// and a right one named right.
func (p *plotter) ladderChart(title opts.Title, x string, left opts.YAxis, right string) *charts.Line {
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(halfWidth, "420px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(title),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Right: "10", Top: "48"}),
		charts.WithXAxisOpts(opts.XAxis{Name: x, Type: "category", NameLocation: "middle", NameGap: 28}),
		charts.WithYAxisOpts(left),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "70", Top: "100", Bottom: "50"}),
	)
	c.ExtendYAxis(opts.YAxis{Name: right, Type: "value", Position: "right"})
	return c
}

// runSamples is the samples of one run, in time order.
type runSamples struct {
	run        int
	mode       string
	repetition int
	level      int
	samples    []results.Sample
}

func groupSamples(samples []results.Sample) []runSamples {
	type key struct {
		run, rep, level int
		mode            string
	}
	var order []key
	byKey := make(map[key]*runSamples)
	for _, s := range samples {
		k := key{s.Run, s.Repetition, s.Level, s.Mode}
		g, ok := byKey[k]
		if !ok {
			g = &runSamples{run: s.Run, mode: s.Mode, repetition: s.Repetition, level: s.Level}
			byKey[k] = g
			order = append(order, k)
		}
		g.samples = append(g.samples, s)
	}
	out := make([]runSamples, 0, len(order))
	for _, k := range order {
		g := byKey[k]
		sort.SliceStable(g.samples, func(i, j int) bool { return g.samples[i].ElapsedMs < g.samples[j].ElapsedMs })
		out = append(out, *g)
	}
	return out
}

// Fixed colours for the series every samples chart has, so they read the same from run to run;
// per-table waiter lines take the palette.
const (
	colorAllLocks = "#333333"
	colorPool     = "#3ba272"
	colorDepth    = "#ee6666"
	colorPending  = "#fc8452"
	colorOutbox   = "#9a60b4"
	colorWaiting  = "#e6a23c"
	colorServers  = "#5470c6"
	colorSessions = "#73c0de"
)

// samplesChart adds one chart for one run: panels over the same time axis, lock waiters by table
// (and in all), pool usage in basis points, and, when the run had a queue or an outbox, its
// depth.
func (p *plotter) samplesChart(title string, rs runSamples) {
	name := rs.mode
	if rs.level > 0 {
		name += fmt.Sprintf(" @%d", rs.level)
	}
	if rs.repetition > 0 {
		name += fmt.Sprintf(" #%d", rs.repetition)
	}
	tables := make(map[string]bool)
	for _, s := range rs.samples {
		for t := range s.WaitersByRelation {
			tables[t] = true
		}
	}
	tableNames := make([]string, 0, len(tables))
	for t := range tables {
		tableNames = append(tableNames, t)
	}
	sort.Strings(tableNames)

	point := func(s results.Sample, v float64) opts.LineData {
		return opts.LineData{Value: []float64{math.Round(s.ElapsedMs) / 1000, v}}
	}
	waiters := make(map[string][]opts.LineData)
	var total, pool, depth, pending, outbox []opts.LineData
	var waiting, servers, sessions []opts.LineData // through a pooler
	for _, s := range rs.samples {
		if s.SampleError == "" {
			total = append(total, point(s, float64(s.LockWaiters)))
			for _, t := range tableNames {
				waiters[t] = append(waiters[t], point(s, float64(s.WaitersByRelation[t])))
			}
		}
		pool = append(pool, point(s, float64(s.PoolUsageBasisPts)))
		if s.QueueDepth != nil {
			depth = append(depth, point(s, float64(*s.QueueDepth)))
		}
		if s.QueuePendingDepth != nil {
			pending = append(pending, point(s, float64(*s.QueuePendingDepth)))
		}
		if s.OutboxPending != nil {
			outbox = append(outbox, point(s, float64(*s.OutboxPending)))
		}
		if s.Pooler != nil {
			waiting = append(waiting, point(s, float64(s.Pooler.ClientsWaiting)))
			servers = append(servers, point(s, float64(s.Pooler.ServersActive)))
			sessions = append(sessions, point(s, float64(s.ServerSessions)))
		}
	}
	hasDepth := len(depth)+len(pending)+len(outbox) > 0

	// Panels are stacked: a 130 px waiters panel, then 110 px panels 50 px apart.
	panels := []struct {
		axis   opts.YAxis
		height int
	}{
		{opts.YAxis{Name: "lock waiters", Type: "value", MinInterval: 1}, 130},
		{opts.YAxis{Name: "pool usage bp", Type: "value", Min: 0, Max: 10000}, 110},
	}
	subtitle := "lock waiters by table · pool usage (basis points)"
	if hasDepth {
		panels = append(panels, struct {
			axis   opts.YAxis
			height int
		}{opts.YAxis{Name: "queue depth", Type: "value", MinInterval: 1}, 110})
		subtitle += " · queue depth"
	}
	poolerPanel := -1
	if len(waiting) > 0 {
		poolerPanel = len(panels)
		panels = append(panels, struct {
			axis   opts.YAxis
			height int
		}{opts.YAxis{Name: "pooler", Type: "value", MinInterval: 1}, 110})
		subtitle += " · pooler"
	}
	top := 70
	var grids []opts.Grid
	for i := range panels {
		grids = append(grids, opts.Grid{Left: "80", Right: "40", Top: strconv.Itoa(top), Height: strconv.Itoa(panels[i].height)})
		panels[i].axis.GridIndex = i
		top += panels[i].height + 50
	}
	c := charts.NewLine()
	c.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(fullWidth, strconv.Itoa(top+10)+"px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: title + ": " + name + " — monitor samples",
			Subtitle: fmt.Sprintf("%d samples: %s", len(rs.samples), subtitle)}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Right: "10", Top: "5", Width: "55%"}),
		charts.WithGridOpts(grids...),
	)
	for i, panel := range panels {
		x := opts.XAxis{Type: "value", GridIndex: i, Min: 0}
		if i == len(panels)-1 {
			x.Name, x.NameLocation, x.NameGap = "elapsed s", "middle", 25
		}
		if i == 0 {
			c.XAxisList[0], c.YAxisList[0] = x, panel.axis
			continue
		}
		c.ExtendXAxis(x)
		c.ExtendYAxis(panel.axis)
	}
	series := func(panel int, color string) []charts.SeriesOpts {
		out := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{XAxisIndex: panel, YAxisIndex: panel, ShowSymbol: opts.Bool(false)})}
		if color != "" {
			out = append(out, charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.Color = color }))
		}
		return out
	}
	c.AddSeries("all locks", total, series(0, colorAllLocks)...)
	for _, t := range tableNames {
		c.AddSeries(t, waiters[t], series(0, "")...)
	}
	c.AddSeries("pool usage bp", pool, series(1, colorPool)...)
	for _, s := range []struct {
		name, color string
		data        []opts.LineData
	}{{"queue depth", colorDepth, depth}, {"queue pending", colorPending, pending}, {"outbox pending", colorOutbox, outbox}} {
		if len(s.data) > 0 {
			c.AddSeries(s.name, s.data, series(2, s.color)...)
		}
	}
	if poolerPanel >= 0 {
		c.AddSeries("waiting in the pooler", waiting, series(poolerPanel, colorWaiting)...)
		c.AddSeries("pooler's server conns active", servers, series(poolerPanel, colorServers)...)
		c.AddSeries("PostgreSQL sessions", sessions, series(poolerPanel, colorSessions)...)
	}
	p.page.AddCharts(c)
}

func uniq(ss []string) []string {
	var out []string
	seen := make(map[string]bool)
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
