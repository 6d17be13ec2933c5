// Package render turns reports (package results) into what people read: the baseline table
// (Markdown, CSV, JSON) and the run summary a suite binary prints on stderr (the same table and
// what went wrong, summary.go). Every suite binary links it, so what they do not need lives
// apart: the HTML page of plots in package render/plot (go-echarts and its script), the
// comparison of two reports and the A/B with their verdicts in package render/judge (the
// statistics of golang.org/x/perf). Nothing here writes a report or measures anything; the
// report types stay free of these dependencies.
package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/results"
)

// Column is one column of the baseline table.
type Column struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	// Numeric columns are right-aligned in Markdown.
	Numeric bool `json:"-"`
}

// Column keys, in the stable order of TableColumns.
const (
	ColSuite      = "suite"
	ColMode       = "mode"
	ColLoad       = "load"
	ColThroughput = "throughput_rps"
	ColFailed     = "failed"
	ColP50        = "p50_ms"
	ColP95        = "p95_ms"
	ColP99        = "p99_ms"
	ColPersistLag = "persist_lag_p99_ms"
	ColMaxWaiters = "max_waiters"
	ColPoolMax    = "pool_max_pct"
	ColSQLOps     = "sql_ops_compacted"
	ColVerified   = "verified"
	ColWAL        = "wal_bytes_per_request"
	ColStatements = "statements_per_request"
	ColEfficiency = "efficiency"
	ColMaxTries   = "max_tries"
	// ColInlineDropped shows a queue that overflowed: records written inline / dropped.
	ColInlineDropped = "queue_inline_dropped"
	// ColTotalRead is the p99 of reading a hot row's total during the run (with slots, a sum).
	ColTotalRead = "total_read_p99_ms"
	// ColWritesPerUpdate is the queued writes a queue run merged into each write it sent.
	ColWritesPerUpdate = "writes_per_update"
	// ColHottestShare is the share of a run's applied requests its hottest hot key set took.
	ColHottestShare = "hottest_share"
	// ColPoolerWaiting is the most clients waiting in the pooler at once, and the average
	// wait per pooled transaction (runs through a pooler, --pooler); ColServerSessions the
	// most sessions of the service PostgreSQL held at once.
	ColPoolerWaiting  = "pooler_waiting"
	ColServerSessions = "server_sessions"
	// ColAcquireWait is the p99 of the load's wait for a pool connection.
	ColAcquireWait = "acquire_wait_p99_ms"
	// ColRedo is InnoDB's redo per request (ColWAL is PostgreSQL's WAL); ColDeadlocks its
	// deadlocks and lock wait timeouts over the run; ColServerCPU the server process's CPU per
	// request (a temporary MariaDB's).
	ColRedo      = "redo_bytes_per_request"
	ColDeadlocks = "deadlocks_timeouts"
	ColServerCPU = "server_cpu_us_per_request"
	// ColClientCPU is the generator's processor time per request over the run's window.
	ColClientCPU = "client_cpu_us_per_request"
)

const (
	missingValue   = "–" // en dash: the metric does not apply to this row
	spreadSep      = "–" // en dash between min and max
	verifiedMark   = "✓"
	unverifiedMark = "✗"
	// notVerifiedMark: the run could not be verified (a server unreachable after it).
	notVerifiedMark = "unverified"
)

// TableColumns is the column order of every table; it only ever grows at the end.
var TableColumns = []Column{
	{ColSuite, "suite", false},
	{ColMode, "mode", false},
	{ColLoad, "requests × conc", true},
	{ColThroughput, "rps", true},
	{ColFailed, "failed", true},
	{ColP50, "p50 ms", true},
	{ColP95, "p95 ms", true},
	{ColP99, "p99 ms", true},
	{ColPersistLag, "lag p99 ms", true},
	{ColMaxWaiters, "max waiters", false},
	{ColPoolMax, "pool max %", true},
	{ColSQLOps, "sql ops / compacted", true},
	{ColVerified, "verified", false},
	{ColWAL, "WAL B/req", true},
	{ColStatements, "stmts/req", true},
	{ColEfficiency, "efficiency", true},
	{ColMaxTries, "max tries", true},
	{ColInlineDropped, "inline / dropped", true},
	{ColTotalRead, "read total p99 ms", true},
	{ColWritesPerUpdate, "writes/UPDATE", true},
	{ColHottestShare, "hottest share", true},
	{ColPoolerWaiting, "pooler waiting / avg wait ms", true},
	{ColServerSessions, "pg sessions", true},
	{ColAcquireWait, "pool wait p99 ms", true},
	{ColRedo, "redo B/req", true},
	{ColDeadlocks, "deadlocks / timeouts", true},
	{ColServerCPU, "server CPU µs/req", true},
	{ColClientCPU, "client CPU µs/req", true},
}

// TableData is the baseline table: one row per run, or per summary when a report has them.
type TableData struct {
	Columns []Column
	Rows    []TableRow
}

// TableRow is one row: its identity, its formatted cells (in Columns order) and the numbers
// behind them.
type TableRow struct {
	Suite string `json:"suite"`
	Mode  string `json:"mode"`
	// At is where the row's runs stood on the axes its label names (results.Shown): those
	// their invocation stepped over (a ladder's rung), and those they set away from the unset
	// value (a slot count, a round trip, a rate); absent: none.
	At results.Position `json:"at,omitempty"`
	// Repetition is the run's repetition for a run row.
	Repetition int `json:"repetition,omitempty"`
	// Repetitions is how many runs a summary row stands for; 0 for a run row.
	Repetitions int `json:"repetitions,omitempty"`
	// Found names what a ladder's rule found at this row ("knee", "best pool at SLO", "max rate
	// at SLO"); absent for none.
	Found    string `json:"found,omitempty"`
	Verified bool   `json:"verified"`
	// Unverified: a run of the row could not be verified (results.Unverified), which is not
	// the same as a check that failed; NotChecked are the checks its runs could not make,
	// each "name: why" (RenderMarkdown lists them under the table).
	Unverified bool     `json:"unverified,omitempty"`
	NotChecked []string `json:"not_checked,omitempty"`
	// Metrics holds every metric of the row by Metric name; a run row has Min = Median = Max.
	Metrics map[string]results.Spread `json:"metrics"`
	Cells   []string                  `json:"-"`
	// Config is the configuration of a run of the row (the zero value for a stored summary
	// whose runs the report lacks).
	Config results.RunConfig `json:"-"`
}

// Table builds the table of the given reports, in their order. A report with Summaries gives
// one row per summary (medians, with min–max spread), a report without gives one row per run;
// a ladder has one row per level either way because its runs or summaries are per level.
// Runs that no summary covers still get a row of their own.
func Table(reports []*results.Report) TableData {
	t := TableData{Columns: TableColumns}
	for _, rep := range reports {
		t.Rows = append(t.Rows, reportRows(rep)...)
	}
	return t
}

func reportRows(rep *results.Report) []TableRow {
	mark := func(row *TableRow) {
		for _, l := range rep.Ladders {
			if v, ok := row.At[l.Axis]; ok && l.Mode == row.Mode && l.Found != nil && *l.Found == v {
				row.Found = FoundMark(l)
			}
		}
	}
	var rows []TableRow
	covered := make([]bool, len(rep.Runs))
	for _, s := range rep.Summaries {
		var group []results.Run
		for i, r := range rep.Runs {
			if r.Mode == s.Mode && s.At.Holds(r) {
				group, covered[i] = append(group, r), true
			}
		}
		// The runs win: a stored summary is derived data, used only for what no run has.
		metrics := results.SummarizeGroup(group).Metrics
		for k, v := range s.Metrics {
			if _, ok := metrics[k]; !ok {
				metrics[k] = v
			}
		}
		row := TableRow{Suite: rep.Suite, Mode: s.Mode, At: s.At, Repetitions: s.Repetitions, Verified: s.Verified, Metrics: metrics,
			NotChecked: notChecked(group)}
		row.Unverified = !row.Verified && len(row.NotChecked) > 0 && !anyFailed(group)
		var cfg results.Run
		if len(group) > 0 {
			cfg = group[0]
			row.At = results.Shown(cfg.Config)
		}
		row.Config = cfg.Config
		mark(&row)
		row.Cells = formatRow(row, cfg)
		rows = append(rows, row)
	}
	for i, r := range rep.Runs {
		if covered[i] {
			continue
		}
		row := TableRow{Suite: rep.Suite, Mode: r.Mode, At: results.Shown(r.Config), Repetition: r.Repetition, Config: r.Config,
			Verified: r.Verification.Passed, Unverified: r.Verification.Unverified != nil, Metrics: results.RunSpreads(r),
			NotChecked: notChecked([]results.Run{r})}
		mark(&row)
		row.Cells = formatRow(row, r)
		rows = append(rows, row)
	}
	return besideEachOther(rows)
}

// besideEachOther puts the rows of an axis whose values are Apart (the database's kinds) side
// by side under each mode, the modes in the order they ran: "sync on MariaDB", "sync on
// PostgreSQL", "async-compact on MariaDB", … rather than each kind's runs after the other's.
func besideEachOther(rows []TableRow) []TableRow {
	apart := slices.ContainsFunc(rows, func(r TableRow) bool {
		return slices.ContainsFunc(results.Axes, func(a *results.Axis) bool { _, stepped := r.Config.Ladder[a.Name]; return a.Apart && stepped })
	})
	if !apart {
		return rows
	}
	var modes []string
	for _, r := range rows {
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	slices.SortStableFunc(rows, func(a, b TableRow) int { return slices.Index(modes, a.Mode) - slices.Index(modes, b.Mode) })
	return rows
}

// notChecked are the checks runs could not make, each "name: why" once.
func notChecked(runs []results.Run) []string {
	var out []string
	for _, r := range runs {
		for _, c := range r.Verification.Checks {
			if s := c.Name + ": " + c.Reason; c.State == results.CheckNotChecked && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// anyFailed says whether a check of runs failed.
func anyFailed(runs []results.Run) bool {
	for _, r := range runs {
		if results.Verdict(r.Verification.Checks) == results.CheckFailed {
			return true
		}
	}
	return false
}

// metricColumns are the columns that show one metric in one format.
var metricColumns = map[string]struct {
	metric string
	format func(float64) string
}{
	ColThroughput: {results.MetricThroughputRPS, formatRPS},
	ColFailed:     {results.MetricFailedRequests, formatCount},
	ColP50:        {results.MetricP50Ms, formatMs},
	ColP95:        {results.MetricP95Ms, formatMs},
	ColP99:        {results.MetricP99Ms, formatMs},
	ColPersistLag: {results.MetricPersistLagP99Ms, formatMs},
	ColPoolMax:    {results.MetricPoolMaxUsageBasisPoints, formatBasisPointsPct},
	ColWAL:        {results.MetricWALBytesPerRequest, formatPerRequest},
	ColStatements: {results.MetricStatementsPerRequest, formatPerRequest},
	ColEfficiency: {results.MetricEfficiency, formatRatio},
	ColTotalRead:  {results.MetricTotalReadP99Ms, formatMs},

	ColWritesPerUpdate: {results.MetricWritesPerUpdate, formatPerRequest},
	ColHottestShare:    {results.MetricHottestShare, formatShare},
	ColServerSessions:  {results.MetricServerSessions, formatCount},
	ColAcquireWait:     {results.MetricAcquireWaitP99Ms, formatMs},
	ColRedo:            {results.MetricRedoBytesPerRequest, formatPerRequest},
	ColServerCPU:       {results.MetricServerCPUPerRequest, formatPerRequest},
	ColClientCPU:       {results.MetricClientCPUPerRequestUs, formatPerRequest},
}

// queueCountPairs are the columns that show two counts of a queue run, "a / b" (medians).
var queueCountPairs = map[string][2]string{
	ColSQLOps:        {results.MetricFlushSQLOps, results.MetricCompacted},
	ColInlineDropped: {results.MetricQueueInline, results.MetricQueueDropped},
}

// formatRow formats the cells of a row; cfg is a run of the row, read for its configuration.
func formatRow(row TableRow, cfg results.Run) []string {
	m := row.Metrics
	cell := func(metric string, format func(float64) string) string {
		s, ok := m[metric]
		if !ok {
			return missingValue
		}
		return formatSpread(s, format)
	}
	_, hasQueue := m[results.MetricPersistLagP99Ms]
	mode := positionLabel(row.Mode, row.At, row.Config, false)
	if row.Repetitions > 1 {
		mode = fmt.Sprintf("%s (n=%d)", mode, row.Repetitions)
	}
	cells := make([]string, 0, len(TableColumns))
	for _, c := range TableColumns {
		var v string
		switch c.Key {
		case ColSuite:
			v = row.Suite
		case ColMode:
			v = mode
		case ColLoad:
			v = loadText(cfg, row.Found)
		case ColMaxWaiters:
			v = waitersText(m, results.AxisSlots.Of(row.Config).Num > 1)
		case ColPoolerWaiting:
			v = missingValue
			if w, ok := m[results.MetricPoolerMaxWaiting]; ok {
				v = formatCount(w.Median) + " / " + formatMs(m[results.MetricPoolerAvgWaitMs].Median)
			}
		case ColDeadlocks:
			v = missingValue
			if d, ok := m[results.MetricDeadlocks]; ok {
				timeouts := missingValue // not read
				if n, ok := m[results.MetricLockWaitTimeouts]; ok {
					timeouts = formatCount(n.Median)
				}
				v = formatCount(d.Median) + " / " + timeouts
			}
		case ColSQLOps, ColInlineDropped:
			v = missingValue
			if pair := queueCountPairs[c.Key]; hasQueue {
				v = formatCount(m[pair[0]].Median) + " / " + formatCount(m[pair[1]].Median)
			}
		case ColVerified:
			switch {
			case row.Verified:
				v = verifiedMark
			case row.Unverified:
				v = notVerifiedMark
			default:
				v = unverifiedMark
			}
		case ColMaxTries:
			v = missingValue // a report from before --max-tries
			if n := cfg.Config.MaxTries; n > 0 {
				v = formatCount(float64(n))
			} else if cfg.Load.Retries != nil {
				v = strconv.Itoa(cfg.Load.Retries.MaxTries)
			}
		default:
			if mc, ok := metricColumns[c.Key]; ok {
				v = cell(mc.metric, mc.format)
			}
		}
		cells = append(cells, v)
	}
	return cells
}

func formatMs(v float64) string { return decimalsBelow(v, 100, 1000) }

// formatPerRequest writes a cost per request with about three significant digits: 945, 29.7,
// 1.14, 0.110, 0.0052; 0 is "0".
func formatPerRequest(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	// Below 0.01, two significant digits and no trailing zero: 0.008, 0.0083, 0.000012.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 1, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// formatShare writes a share as a percentage with about three significant digits: 18.9%,
// 0.100%, 100%.
func formatShare(v float64) string { return formatPerRequest(100*v) + "%" }

// formatRatio writes an efficiency (a fraction of the calibrated rate) with two decimals, three
// below 0.1.
func formatRatio(v float64) string {
	if math.Abs(v) < 0.1 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func formatBasisPointsPct(bp float64) string { return strconv.FormatFloat(bp/100, 'f', 1, 64) }

func formatSpread(s results.Spread, format func(float64) string) string {
	med := format(s.Median)
	lo, hi := format(s.Min), format(s.Max)
	if lo == hi {
		return med
	}
	return med + " (" + lo + spreadSep + hi + ")"
}

// loadText is "requests × concurrency", and "@ rate/s" for an open-loop run. Concurrency is the
// run's (a ladder's level, else the concurrency flag), else what the load engine measured;
// requests is the requests flag, else the duration flag, else "–". A mark is added in
// parentheses.
func loadText(r results.Run, mark string) string {
	requests := missingValue
	if n := r.Config.Requests; n > 0 {
		requests = formatCount(float64(n))
	} else if ms := r.Config.DurationMs; ms > 0 {
		requests = results.Duration(ms).String() // a duration-bound run (ladder levels)
	}
	conc := missingValue
	if n := r.Config.Concurrency; n > 0 {
		conc = formatCount(float64(n))
	} else if r.Load.Concurrency > 0 {
		conc = strconv.Itoa(r.Load.Concurrency)
	}
	s := requests + " × " + conc
	if rate := r.Config.Rate; rate > 0 {
		s += " @ " + formatRPS(rate) + "/s"
	}
	if mark != "" {
		s += " (" + mark + ")"
	}
	return s
}

// FormatRTT is a round trip in milliseconds as a duration: "0", "200µs", "1ms".
func FormatRTT(ms float64) string {
	if ms == 0 {
		return "0"
	}
	return results.Duration(ms).String()
}

// waitersText lists the hot tables that had waiters, by name: "api_keys 12, providers 3"; "0"
// when none did; with perRow (slotted rows), the most on one physical row beside each:
// "api_keys 48 (3/row)". Summary rows show medians here (no spread) to keep the cell short.
func waitersText(m map[string]results.Spread, perRow bool) string {
	tables := waiterTables(m)
	var parts []string
	for _, t := range tables {
		if v := m[results.MetricMaxWaitersPrefix+t].Median; v > 0 {
			part := t + " " + formatCount(v)
			if row, ok := m[results.MetricMaxWaitersPerRowPrefix+t]; ok && perRow {
				part += " (" + formatCount(row.Median) + "/row)"
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

// waiterTables is the sorted list of tables with a max-waiters metric.
func waiterTables(m map[string]results.Spread) []string {
	var tables []string
	for k := range m {
		if t, ok := strings.CutPrefix(k, results.MetricMaxWaitersPrefix); ok {
			tables = append(tables, t)
		}
	}
	sort.Strings(tables)
	return tables
}

// RenderMarkdown writes the table as a GitHub-flavoured Markdown table, columns padded so that
// it also reads in a terminal; numeric columns are right-aligned.
func RenderMarkdown(w io.Writer, t TableData) error {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = max(3, utf8.RuneCountInString(c.Title))
	}
	for _, r := range t.Rows {
		for i, cell := range r.Cells {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(mdEscape(cell)))
			}
		}
	}
	pad := func(s string, i int) string {
		gap := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
		if t.Columns[i].Numeric {
			return gap + s
		}
		return s + gap
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i := range t.Columns {
			s := ""
			if i < len(cells) {
				s = mdEscape(cells[i])
			}
			b.WriteString(" " + pad(s, i) + " |")
		}
		b.WriteString("\n")
	}
	titles := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		titles[i] = c.Title
	}
	line(titles)
	b.WriteString("|")
	for i, c := range t.Columns {
		if c.Numeric {
			b.WriteString(" " + strings.Repeat("-", widths[i]-1) + ": |")
		} else {
			b.WriteString(" " + strings.Repeat("-", widths[i]) + " |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		line(r.Cells)
	}
	// The checks a row's runs could not make, under the table: its verified cell says only
	// "unverified".
	mode := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Key == ColMode })
	sep := "\n"
	for _, r := range t.Rows {
		if len(r.NotChecked) > 0 && mode >= 0 && mode < len(r.Cells) {
			fmt.Fprintf(&b, "%s%s %s: checks not made: %s\n", sep, r.Suite, r.Cells[mode], strings.Join(r.NotChecked, "; "))
			sep = ""
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// RenderCSV writes the table as CSV: a header of column titles, then the same formatted cells
// as the Markdown table (a spreadsheet reads them as text; use RenderJSON for the numbers).
func RenderCSV(w io.Writer, t TableData) error {
	cw := csv.NewWriter(w)
	titles := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		titles[i] = c.Title
	}
	if err := cw.Write(titles); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(r.Cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// RenderJSON writes the table as JSON: the columns, and per row its identity, its cells keyed by
// column key, and the raw metrics (median, min, max) behind them.
func RenderJSON(w io.Writer, t TableData) error {
	type jsonRow struct {
		TableRow
		Cells map[string]string `json:"cells"`
	}
	out := struct {
		Columns []Column  `json:"columns"`
		Rows    []jsonRow `json:"rows"`
	}{Columns: t.Columns, Rows: make([]jsonRow, 0, len(t.Rows))}
	for _, r := range t.Rows {
		cells := make(map[string]string, len(r.Cells))
		for i, c := range t.Columns {
			if i < len(r.Cells) {
				cells[c.Key] = r.Cells[i]
			}
		}
		out.Rows = append(out.Rows, jsonRow{TableRow: r, Cells: cells})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
