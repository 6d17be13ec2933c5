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
// than 20×); for each ladder (every axis alike: concurrency, slots, round trip, pool size,
// rate, ...), the figures its axis charts against its values, with what its rule found (a knee,
// a best size, the max rate at the objective) and the objective marked; and,
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
		if len(ladders) == 0 && rep.Advice == nil { // a writer that did not store them: rebuilt from the runs (a search's make none)
			ladders = results.BuildLadders(rep.Runs)
		}
		for _, l := range ladders {
			p.ladder(prefix+rep.Suite, l)
		}
		for _, run := range groupSamples(samples[SamplesKey(i)]) {
			if r := run.run; r < len(rep.Runs) && rep.Runs[r].Mode == run.mode { // a ladder's run says its rung
				run.mode = render.ModeLabel(run.mode, rep.Runs[r].Config)
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
	add(render.DatabaseName(e)+" ", e.DatabaseVersion)
	add("durability ", e.DurabilityText())
	if !e.DataInMemory() {
		add("data on ", e.DatabaseDataFS)
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

// modeBars adds the throughput chart and the latency chart of the non-ladder rows of a report.
func (p *plotter) modeBars(prefix string, rep *results.Report) {
	var rows []render.TableRow
	for _, r := range render.Table([]*results.Report{rep}).Rows {
		if _, onLevels := r.At[results.AxisConcurrency.Name]; !onLevels { // a concurrency ladder is a line
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	labels := make([]string, len(rows))
	for i, r := range rows {
		labels[i] = render.RowLabel(r) // a rung of any other ladder, one --rate or --db-rtt run: named by it
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

// ladder charts one mode's ladder against its axis: the axis's chart figures, the first on the
// left axis with those of its unit, the others on the right one; the level its rule found
// marked by a vertical line, and the objective of a rule that judges by one by a horizontal
// line on the p99. A figure the levels lack (a sync mode's persist lag) or that is 0 at every
// level is left out.
func (p *plotter) ladder(title string, l results.Ladder) {
	a := l.AxisOf()
	if a == nil || len(l.Levels) == 0 {
		return
	}
	x := make([]string, len(l.Levels))
	for i, lv := range l.Levels {
		x[i] = render.AxisValue(a, lv.Value)
	}
	lead, _ := results.LadderColumn(a.Chart[0])
	type series struct {
		name string
		data []opts.LineData
		opts []charts.SeriesOpts
	}
	var lines []series
	var leftValues []float64
	var rightUnits []string
	slo := l.SLOP99Ms
	if rule := results.RuleNamed(l.Rule); rule == nil || !rule.Objective {
		slo = 0
	}
	for j, key := range a.Chart {
		c, _ := results.LadderColumn(key)
		left := c.Unit == lead.Unit
		data := make([]opts.LineData, len(l.Levels))
		some := false
		for i, lv := range l.Levels {
			v, ok := lv.Figures[key]
			if !ok {
				data[i] = opts.LineData{Value: "-"}
				continue
			}
			some = some || v > 0
			data[i] = opts.LineData{Value: v}
			if left {
				leftValues = append(leftValues, v)
			} else {
				data[i].YAxisIndex = 1
			}
		}
		if !some && j > 0 {
			continue
		}
		s := series{name: c.Label + unitSuffix(c.Unit), data: data}
		if !left {
			s.opts = append(s.opts, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1}))
			if !slices.Contains(rightUnits, unitName(c.Unit)) {
				rightUnits = append(rightUnits, unitName(c.Unit))
			}
		}
		if key == results.MetricP99Ms && slo > 0 {
			s.opts = append(s.opts, markLine(charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: "SLO " + render.FormatDuration(slo), YAxis: slo})))
			if left {
				leftValues = append(leftValues, slo)
			}
		}
		if j == 0 && l.Found != nil {
			k := render.AxisValue(a, *l.Found)
			s.opts = append(s.opts, markLine(charts.WithMarkLineNameXAxisItemOpts(opts.MarkLineNameXAxisItem{Name: render.FoundMark(l) + " " + k, XAxis: k})))
		}
		lines = append(lines, s)
	}
	subtitle := render.LadderAnswer(l)
	if subtitle == "" {
		subtitle = a.Across + " (" + a.FlagName() + ")"
	}
	c := p.ladderChart(opts.Title{Title: title + ": " + l.Mode + " " + a.Title + " ladder", Subtitle: subtitle}, a.Across,
		valueAxis(unitName(lead.Unit), leftValues), strings.Join(rightUnits, " / "))
	c.SetXAxis(x)
	for _, s := range lines {
		c.AddSeries(s.name, s.data, s.opts...)
	}
	p.page.AddCharts(c)
}

// markLine is a dashed red mark line labelled with its name.
func markLine(item charts.SeriesOpts) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		item(s)
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
			Symbol:    []string{"none", "none"},
			Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}"},
			LineStyle: &opts.LineStyle{Type: "dashed", Color: "#c23531", Width: 2},
		})(s)
	}
}

// unitName names a figure's unit on a chart's axis; unitSuffix follows a figure's name with it
// ("p99 ms"; a count goes without).
func unitName(unit string) string {
	switch unit {
	case results.UnitMs:
		return "ms"
	case results.UnitRPS:
		return "rps"
	case results.UnitShare:
		return "share"
	case results.UnitBytes:
		return "bytes"
	}
	return "count"
}

func unitSuffix(unit string) string {
	if unit == results.UnitCount {
		return ""
	}
	return " " + unitName(unit)
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
