package plot

import (
	"fmt"
	"html"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// abHeader is an A/B's part of the page heading: what ran, the method, the verdict and the
// table of every group's metrics, as RenderAB prints them.
func abHeader(ab *judge.AB) string {
	var b strings.Builder
	na, nb := ab.SideRuns()
	fmt.Fprintf(&b, "<h2>A/B: %s</h2>\n", html.EscapeString(ab.Suite))
	fmt.Fprintf(&b, "<p>A: %s<br>B: %s", html.EscapeString(ab.A.String()), html.EscapeString(ab.B.String()))
	if len(ab.SuiteArgs) > 0 {
		fmt.Fprintf(&b, "<br>both: %s", html.EscapeString(strings.Join(ab.SuiteArgs, " ")))
	}
	fmt.Fprintf(&b, "<br>%d + %d runs, interleaved A B B A …; min effect %s</p>\n", na, nb, judge.FormatLimit(ab.MinEffect))
	fmt.Fprintf(&b, "<p>method: %s</p>\n<p><b>verdict: %s</b></p>\n", html.EscapeString(ab.Method), html.EscapeString(ab.Verdict))
	b.WriteString("<table class=\"baseline\">\n<tr><th>group</th><th>metric</th><th>median A</th><th>median B</th><th>B/A</th><th>95% interval</th><th>p</th><th>verdict</th></tr>\n")
	for _, g := range ab.Groups {
		for _, m := range g.Metrics {
			c := m.Cells()
			style := ""
			switch m.Verdict {
			case verdict.Worse:
				style = ` style="background:#f8d0d0"`
			case verdict.Better:
				style = ` style="background:#d4efd4"`
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td%s>%s</td></tr>\n",
				html.EscapeString(g.Group), html.EscapeString(c.Label), c.MedianA, c.MedianB,
				c.Ratio, html.EscapeString(c.Interval), c.P, style, html.EscapeString(c.Verdict))
		}
		for _, c := range g.Checks {
			fmt.Fprintf(&b, "<tr><td>%s</td><td colspan=\"6\">%s</td><td style=\"background:#f8d0d0\">worse</td></tr>\n", html.EscapeString(g.Group), html.EscapeString(c))
		}
	}
	b.WriteString("</table>\n")
	return b.String()
}

// abCharts adds, per group and metric of an A/B, both sides' runs as points against the
// invocation they came from (so drift over time shows too), each side's median as a line, and
// the 95% interval of B/A drawn as a band around A's median times it: where B's median would
// lie by the interval. No band when the interval is unbounded (fewer than 4 runs a side).
func (p *plotter) abCharts(ab *judge.AB) {
	for _, g := range ab.Groups {
		for _, m := range g.Metrics {
			p.abMetricChart(ab, g.Group, m)
		}
	}
}

func (p *plotter) abMetricChart(ab *judge.AB, group string, m judge.ABMetric) {
	c := m.Cells()
	label := c.Label
	points := func(values []float64, runs []int) []opts.ScatterData {
		out := make([]opts.ScatterData, len(values))
		for i, v := range values {
			out[i] = opts.ScatterData{Value: []interface{}{runs[i], v}, SymbolSize: 10}
		}
		return out
	}
	medianLine := func(name string, v float64, color string) []charts.SeriesOpts {
		return []charts.SeriesOpts{
			// From coordinates, not yAxis: ECharts rounds a yAxis mark to 2 decimals (its
			// precision), which would draw 0.005 statements per request at 0.01.
			charts.WithMarkLineNameCoordItemOpts(opts.MarkLineNameCoordItem{Name: name,
				Coordinate0: []interface{}{0, v}, Coordinate1: []interface{}{len(ab.Order) + 1, v}}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
				Label:     &opts.Label{Show: opts.Bool(true), Formatter: name + " " + m.Format(v), Position: "insideEndTop"},
				LineStyle: &opts.LineStyle{Type: "dashed", Color: color}}),
		}
	}
	const colorA, colorB = "#3b6fb6", "#d9822b"
	bOpts := append(medianLine("median B", m.MedianB, colorB), charts.WithItemStyleOpts(opts.ItemStyle{Color: colorB}))
	if m.Bounded {
		lo, hi := m.MedianA+m.DiffLo, m.MedianA+m.DiffHi
		if m.HasRatio {
			lo, hi = m.MedianA*m.Lo, m.MedianA*m.Hi
		}
		bOpts = append(bOpts,
			charts.WithMarkAreaNameCoordItemOpts(opts.MarkAreaNameCoordItem{Name: "95% interval of B/A × median A",
				Coordinate0: []interface{}{0, lo}, Coordinate1: []interface{}{len(ab.Order) + 1, hi}}),
			charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(217,130,43,0.15)"},
				Label: &opts.Label{Show: opts.Bool(true), Position: "insideBottomLeft", FontSize: 10}}))
	}
	subtitle := fmt.Sprintf("B/A %s, 95%% interval %s, p %s: %s", c.Ratio, c.Interval, c.P, c.Verdict)
	sc := charts.NewScatter()
	sc.SetGlobalOptions(
		charts.WithInitializationOpts(p.init(halfWidth, "360px")),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: "A/B " + group + ": " + label, Subtitle: subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Right: "10", Top: "40"}),
		charts.WithXAxisOpts(opts.XAxis{Name: "run", Type: "value", Min: 0, Max: len(ab.Order) + 1, SplitNumber: len(ab.Order) + 1}),
		charts.WithYAxisOpts(opts.YAxis{Name: label, Type: "value", Scale: opts.Bool(true)}),
		charts.WithGridOpts(opts.Grid{Left: "80", Right: "50", Top: "80", Bottom: "50"}),
	)
	sc.AddSeries("A", points(m.A, m.RunsA), append(medianLine("median A", m.MedianA, colorA), charts.WithItemStyleOpts(opts.ItemStyle{Color: colorA}))...)
	sc.AddSeries("B", points(m.B, m.RunsB), bOpts...)
	p.page.AddCharts(sc)
}
