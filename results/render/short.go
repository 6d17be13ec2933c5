package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/results"
)

// SummaryWidth is the widest line of the default summary: it fits a terminal and a CI log.
const SummaryWidth = 100

// The short table of the default summary: per row (a mode, or a mode's ladder rung), what a
// newcomer reads first, in units that adapt. The full table is `baseline table` (and --wide).
var shortTitles = []column{
	{"mode", false}, {"throughput", true}, {"request p99", true}, {"lag p99", true},
	{"waiters", false}, {"WAL/req", true}, {"verified", false},
}

// waitersColumn is the index of the waiters in shortTitles, logColumn of the log per request.
const (
	waitersColumn = 4
	logColumn     = 5
)

// logMetrics are the log a request wrote: PostgreSQL's WAL, InnoDB's redo (a row has one).
var logMetrics = []struct{ metric, title string }{
	{results.MetricWALBytesPerRequest, "WAL/req"},
	{results.MetricRedoBytesPerRequest, "redo/req"},
}

// logPerRequest is a row's log per request, WAL or redo; "" when it has neither.
func logPerRequest(m map[string]results.Spread) string {
	for _, l := range logMetrics {
		if s, ok := m[l.metric]; ok {
			return FormatBytes(s.Median)
		}
	}
	return missingValue
}

// logTitle is the log column's title: "WAL/req" or "redo/req" as the rows have them, "log/req"
// when some have each (runs on PostgreSQL and on MySQL side by side).
func logTitle(rows []TableRow) string {
	seen := map[string]bool{}
	for _, r := range rows {
		for _, l := range logMetrics {
			if _, ok := r.Metrics[l.metric]; ok {
				seen[l.title] = true
			}
		}
	}
	if len(seen) > 1 {
		return "log/req"
	}
	for _, l := range logMetrics {
		if seen[l.title] {
			return l.title
		}
	}
	return shortTitles[logColumn].title
}

// maxWaitersCell bounds the waiters cell so that the table stays within SummaryWidth.
const maxWaitersCell = 24

// shortCells formats one row of the short table.
func shortCells(row TableRow, hotTables []string) []string {
	m := row.Metrics
	opt := func(metric string, format func(float64) string) string {
		if s, ok := m[metric]; ok {
			return format(s.Median)
		}
		return missingValue
	}
	verified := unverifiedMark
	switch {
	case row.Verified:
		verified = verifiedMark
	case row.Unverified:
		verified = notVerifiedMark
	}
	return []string{
		RowLabel(row),
		formatRPS(m[results.MetricThroughputRPS].Median) + "/s",
		FormatDuration(m[results.MetricP99Ms].Median),
		opt(results.MetricPersistLagP99Ms, FormatDuration),
		truncate(hotWaitersText(m, hotTables, true), maxWaitersCell),
		logPerRequest(m),
		verified,
	}
}

// hotWaitersText lists the hot tables that had sessions waiting, most first: "api_keys 63"
// (named false: "63"); "0" when none did. hotTables nil: every table but the unattributed
// waiters.
func hotWaitersText(m map[string]results.Spread, hotTables []string, named bool) string {
	type waiters struct {
		table string
		n     float64
	}
	var list []waiters
	for _, t := range waiterTables(m) {
		if isHotTable(t, hotTables) && m[results.MetricMaxWaitersPrefix+t].Median > 0 {
			list = append(list, waiters{t, m[results.MetricMaxWaitersPrefix+t].Median})
		}
	}
	if len(list) == 0 {
		return "0"
	}
	slices.SortStableFunc(list, func(a, b waiters) int { return int(b.n - a.n) })
	parts := make([]string, len(list))
	for i, w := range list {
		parts[i] = formatCount(w.n)
		if named {
			parts[i] = w.table + " " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// unattributedWaiters is the monitor's name for waiters on no table it could name.
const unattributedWaiters = "(unattributed)"

func isHotTable(table string, hotTables []string) bool {
	if hotTables == nil {
		return table != unattributedWaiters
	}
	return slices.Contains(hotTables, table)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// writeShortTable writes the short table, columns padded, numbers right-aligned. A long mode
// label (slots, a pool, a rate) takes its room from the waiters: first their tables' names go
// (the detail line below names them), then what is still too long is cut short with "…"; then,
// when every row ran at the same load (which the header line says), its labels leave the load
// out.
func writeShortTable(w io.Writer, rows []TableRow, hotTables []string) {
	cells := make([][]string, 0, len(rows))
	titles := slices.Clone(shortTitles)
	titles[logColumn].title = logTitle(rows)
	for _, r := range rows {
		cells = append(cells, shortCells(r, hotTables))
	}
	if tableWidth(titles, cells) > SummaryWidth {
		for i, r := range rows {
			cells[i][waitersColumn] = hotWaitersText(r.Metrics, hotTables, false)
		}
	}
	if over := tableWidth(titles, cells) - SummaryWidth; over > 0 {
		widths := columnWidths(titles, cells)
		most := max(len(titles[waitersColumn].title), widths[waitersColumn]-over)
		for _, row := range cells {
			row[waitersColumn] = truncate(row[waitersColumn], most)
		}
	}
	if tableWidth(titles, cells) > SummaryWidth && oneLoad(rows) {
		for i, r := range rows {
			cells[i][0] = positionLabel(r.Mode, r.At, r.Config, false)
		}
	}
	writeColumns(w, titles, cells)
}

// oneLoad says every row ran at the same concurrency and rate.
func oneLoad(rows []TableRow) bool {
	for _, r := range rows[min(1, len(rows)):] {
		if r.Config.Concurrency != rows[0].Config.Concurrency || r.Config.Rate != rows[0].Config.Rate {
			return false
		}
	}
	return true
}

// tableWidth is the width of the lines writeColumns writes of rows under titles.
func tableWidth(titles []column, rows [][]string) int {
	total := 1 + 2*len(titles) - 1
	for _, w := range columnWidths(titles, rows) {
		total += w
	}
	return total
}

// column is a column of a table the summary writes: its title, and whether it holds numbers
// (right-aligned).
type column struct {
	title   string
	numeric bool
}

// columnWidths is the width of each column: its widest cell, its title included.
func columnWidths(titles []column, rows [][]string) []int {
	widths := make([]int, len(titles))
	for i, t := range titles {
		widths[i] = utf8.RuneCountInString(t.title)
	}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	return widths
}

// writeColumns writes rows under titles, columns padded, numbers right-aligned.
func writeColumns(w io.Writer, titles []column, rows [][]string) {
	widths := columnWidths(titles, rows)
	head := make([]string, len(titles))
	for i, t := range titles {
		head[i] = t.title
	}
	for _, row := range append([][]string{head}, rows...) {
		var b strings.Builder
		b.WriteString(" ")
		for i, c := range row {
			gap := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			b.WriteString(" ")
			switch {
			case titles[i].numeric:
				b.WriteString(gap + c)
			case i < len(row)-1:
				b.WriteString(c + gap)
			default:
				b.WriteString(c)
			}
			b.WriteString(" ")
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
