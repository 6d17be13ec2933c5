package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
)

// Axes and ladders as people read them: a value in its unit, a row's name with its rung, a
// ladder's line and its answer, each written from the axis's declaration (results.Axis) so
// that a new axis prints without code of its own here.

// AxisValue writes a value of axis a as the table, the summary and the charts show it: a count
// with its thousands grouped ("16", "1,024"), a round trip as a duration ("0", "200µs",
// "1ms"), a rate per second ("400/s"), a name as it is.
func AxisValue(a *results.Axis, v results.Value) string {
	switch {
	case v.IsText():
		return v.Text
	case a.Unit == results.UnitMs:
		return FormatRTT(v.Num)
	case a.Unit == results.UnitRPS:
		return formatRPS(v.Num) + "/s"
	}
	return formatCount(v.Num)
}

// ModeLabel is a run's mode as the table, the progress line and the charts name it: with its
// value on each axis its invocation stepped over or that it set away from the axis's unset
// value, but for the axes of its load (a concurrency, a rate), which the load column shows:
// "sync · 16 slots by session @ 1ms · pool 16".
func ModeLabel(mode string, c results.RunConfig) string {
	return positionLabel(mode, results.Shown(c), c, false)
}

// RowLabel is a row's mode with its rung on every axis it names, those of the load included:
// "sync ×64", "sync @ 400/s", "sync · 16 slots".
func RowLabel(row TableRow) string { return positionLabel(row.Mode, row.At, row.Config, true) }

// positionLabel is mode followed by each axis's name of the value at holds on it (in the order
// of the axes), those of the load only with load.
func positionLabel(mode string, at results.Position, c results.RunConfig, load bool) string {
	label := mode
	for _, a := range results.Axes {
		if v, ok := at[a.Name]; ok && (load || !a.Load) {
			if row := a.Row(AxisValue(a, v), c); row != "" {
				label += " " + row
			}
		}
	}
	return label
}

// formatFigure writes a ladder's figure in its unit (results.Column.Unit).
func formatFigure(unit string, v float64) string {
	switch unit {
	case results.UnitMs:
		return FormatDuration(v)
	case results.UnitRPS:
		return formatRPS(v) + " rps"
	case results.UnitShare:
		return formatShare(v)
	case results.UnitBytes:
		return FormatBytes(v)
	}
	return formatCount(v)
}

// printLadders writes a line per ladder of the report: per level its value and figures (the
// axis's columns), then what the axis's rule found.
func printLadders(w io.Writer, rep *results.Report) {
	for _, l := range rep.Ladders {
		if a := l.AxisOf(); a != nil {
			fmt.Fprintf(w, "  %s\n", ladderLine(a, l))
		}
	}
}

// ladderLine is "sync pool ladder: 4 → 1,500 rps, p99 35.0 ms, …; 16 → …; best 16 (…)": the
// first column leads each level, a column shown beside the value is in parentheses after it,
// the throughput of every level after the first is also given as a share of the first's (not
// on an axis whose values are Apart), and a level not verified says so.
func ladderLine(a *results.Axis, l results.Ladder) string {
	var levels []string
	var first float64
	for i, lv := range l.Levels {
		s := AxisValue(a, lv.Value)
		var figures []string
		for _, key := range a.Columns {
			c, _ := results.LadderColumn(key)
			v, ok := lv.Figures[key]
			switch {
			case !ok:
			case c.Beside && v != 0:
				s += " (" + c.Label + " " + formatFigure(c.Unit, v) + ")"
			case c.Beside:
			case key == results.MetricThroughputRPS:
				text := formatFigure(c.Unit, v)
				if i == 0 {
					first = v
				} else if first > 0 && !a.Apart {
					text += " (" + FormatRatio(v/first) + ")"
				}
				figures = append(figures, text)
			default:
				figures = append(figures, c.Label+" "+formatFigure(c.Unit, v))
			}
		}
		s += " → " + strings.Join(figures, ", ")
		if !lv.Verified {
			s += " UNVERIFIED"
		}
		levels = append(levels, s)
	}
	line := l.Mode + " " + a.Title + " ladder: " + strings.Join(levels, "; ")
	if answer := LadderAnswer(l); answer != "" {
		line += "; " + answer
	}
	return line
}

// LadderAnswer says what the ladder's rule found, in words ("" for a ladder without a rule, or
// a rule with nothing to say: a rate ladder without an objective).
func LadderAnswer(l results.Ladder) string {
	a := l.AxisOf()
	if a == nil {
		return ""
	}
	var found string
	if l.Found != nil {
		found = AxisValue(a, *l.Found)
	}
	slo := FormatDuration(l.SLOP99Ms)
	switch rule := results.RuleNamed(l.Rule); {
	case rule == results.RuleKnee && found != "":
		return fmt.Sprintf("saturates at %s %s: beyond it throughput gains < 5%% while p95 rises", a.Across, found)
	case rule == results.RuleKnee:
		return "no knee (throughput still rising, or p95 not)"
	case rule == results.RuleStopsPaying && found != "":
		return fmt.Sprintf("stops paying beyond %s: the next adds < 5%% throughput", found)
	case rule == results.RuleStopsPaying:
		return "throughput still rising at the last level"
	case rule == results.RuleBest && l.SLOP99Ms > 0 && found == "":
		return "no verified level kept p99 ≤ " + slo
	case rule == results.RuleBest && l.SLOP99Ms > 0:
		return fmt.Sprintf("best %s (highest throughput with p99 ≤ %s)", found, slo)
	case rule == results.RuleBest && found == "":
		return "no level verified"
	case rule == results.RuleBest:
		return fmt.Sprintf("best %s by throughput alone (no --slo-p99-ms given)", found)
	case rule == results.RuleMaxAtSLO && l.SLOP99Ms == 0:
	case rule == results.RuleMaxAtSLO && found != "":
		return fmt.Sprintf("max %s at p99 ≤ %s (≥ 95%% of arrivals sent): %s", a.Title, slo, found)
	case rule == results.RuleMaxAtSLO:
		return fmt.Sprintf("no %s kept p99 ≤ %s with ≥ 95%% of its arrivals sent", a.Title, slo)
	}
	return ""
}

// FoundMark names, in a table row's load cell, what a ladder's rule found at that row: "knee",
// "best pool at SLO", "max rate at SLO".
func FoundMark(l results.Ladder) string {
	a := l.AxisOf()
	switch results.RuleNamed(l.Rule) {
	case results.RuleKnee, results.RuleStopsPaying:
		return "knee"
	case results.RuleBest:
		if l.SLOP99Ms > 0 {
			return "best " + a.Title + " at SLO"
		}
		return "best " + a.Title + " by throughput"
	case results.RuleMaxAtSLO:
		return "max " + a.Title + " at SLO"
	}
	return ""
}
