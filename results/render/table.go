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
	// Level is the ladder concurrency, 0 outside a ladder.
	Level int `json:"level,omitempty"`
	// Rate is the offered rate of an open-loop row (requests per second), 0 in a closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Slots is the slots per hot row (--slots), 0 for a suite without them.
	Slots int `json:"slots,omitempty"`
	// RTT is the round trip the row's runs added to PostgreSQL ("1ms"; "0" at an RTT ladder's
	// loopback rung), "" when they added none.
	RTT string `json:"rtt,omitempty"`
	// Pool is the load's pool size of a pool ladder's row (--pool-levels), 0 off one.
	Pool int `json:"pool,omitempty"`
	// Repetition is the run's repetition for a run row.
	Repetition int `json:"repetition,omitempty"`
	// Repetitions is how many runs a summary row stands for; 0 for a run row.
	Repetitions int  `json:"repetitions,omitempty"`
	Knee        bool `json:"knee,omitempty"`
	// MaxAtSLO marks the rate of a rate ladder named max_rate_at_slo.
	MaxAtSLO bool `json:"max_at_slo,omitempty"`
	// BestPool marks the size a pool ladder names its mode's best (PoolLadder.BestPool);
	// BestPoolBy says how it was chosen (PoolLadder.BestBy).
	BestPool   bool   `json:"best_pool,omitempty"`
	BestPoolBy string `json:"best_pool_by,omitempty"`
	Verified   bool   `json:"verified"`
	// Unverified: a run of the row could not be verified (results.Unverified), which is not
	// the same as a check that failed.
	Unverified bool `json:"unverified,omitempty"`
	// Metrics holds every metric of the row by Metric name; a run row has Min = Median = Max.
	Metrics map[string]results.Spread `json:"metrics"`
	Cells   []string                  `json:"-"`
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
	knees := make(map[string]int)
	for _, l := range rep.Ladders {
		knees[l.Mode] = l.KneeConcurrency
	}
	maxAtSLO := make(map[string]float64)
	for _, l := range rep.RateLadders {
		maxAtSLO[l.Mode] = l.MaxRateAtSLO
	}
	bestPools := make(map[string]results.PoolLadder)
	for _, l := range rep.PoolLadders {
		bestPools[l.Mode] = l
	}
	marks := func(row *TableRow) {
		row.Knee = row.Level > 0 && knees[row.Mode] == row.Level
		row.MaxAtSLO = row.Rate > 0 && maxAtSLO[row.Mode] == row.Rate
		if l := bestPools[row.Mode]; row.Pool > 0 && l.BestPool == row.Pool {
			row.BestPool, row.BestPoolBy = true, l.BestBy
		}
	}
	var rows []TableRow
	covered := make(map[[6]string]bool)
	for _, s := range rep.Summaries {
		group := runsOf(rep.Runs, s.Mode, s.Level, s.Slots, s.PoolSize, s.Rate, s.RTTMs)
		// The runs win: a stored summary is derived data, used only for what no run has.
		metrics := results.SummarizeGroup(s.Mode, s.Level, group).Metrics
		for k, v := range s.Metrics {
			if _, ok := metrics[k]; !ok {
				metrics[k] = v
			}
		}
		row := TableRow{Suite: rep.Suite, Mode: s.Mode, Level: s.Level, Slots: s.Slots, Pool: s.PoolSize, Rate: s.Rate, Repetitions: s.Repetitions,
			Verified: s.Verified, Metrics: metrics}
		var cfg results.Run
		if len(group) > 0 {
			cfg = group[0]
		}
		row.RTT = rttText(cfg)
		marks(&row)
		row.Cells = formatRow(row, cfg)
		rows = append(rows, row)
		covered[groupKey(s.Mode, s.Level, s.Slots, s.PoolSize, s.Rate, s.RTTMs)] = true
	}
	for _, r := range rep.Runs {
		if covered[groupKey(r.Mode, r.Level, r.Slots, r.PoolSize, r.Rate, r.RTTMs)] {
			continue
		}
		row := TableRow{Suite: rep.Suite, Mode: r.Mode, Level: r.Level, Slots: r.Slots, Pool: r.PoolSize, Rate: r.Rate, Repetition: r.Repetition,
			RTT: rttText(r), Verified: r.Verification.Passed, Unverified: r.Verification.Unverified != nil,
			Metrics: results.RunSpreads(r)}
		marks(&row)
		row.Cells = formatRow(row, r)
		rows = append(rows, row)
	}
	return rows
}

func groupKey(mode string, level, slots, pool int, rate, rtt float64) [6]string {
	return [6]string{mode, strconv.Itoa(level), strconv.Itoa(slots), strconv.Itoa(pool), strconv.FormatFloat(rate, 'g', -1, 64), strconv.FormatFloat(rtt, 'g', -1, 64)}
}

func runsOf(runs []results.Run, mode string, level, slots, pool int, rate, rtt float64) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Mode == mode && r.Level == level && r.Slots == slots && r.PoolSize == pool && r.Rate == rate && r.RTTMs == rtt {
			out = append(out, r)
		}
	}
	return out
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
	mode := ModeLabel(row.Mode, row.Slots, cfg.Config.SlotPick)
	if row.RTT != "" {
		mode += " @ " + row.RTT
	}
	mode += PoolText(row.Pool)
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
			v = loadText(cfg, row.Level, rowMark(row))
		case ColMaxWaiters:
			v = waitersText(m, row.Slots > 1)
		case ColPoolerWaiting:
			v = missingValue
			if w, ok := m[results.MetricPoolerMaxWaiting]; ok {
				v = formatCount(w.Median) + " / " + formatMs(m[results.MetricPoolerAvgWaitMs].Median)
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
	return strconv.FormatFloat(v, 'f', 4, 64)
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

// rowMark names what a ladder found at a row: its knee, or its max rate at the objective.
func rowMark(row TableRow) string {
	switch {
	case row.Knee:
		return "knee"
	case row.MaxAtSLO:
		return "max rate at SLO"
	case row.BestPool && row.BestPoolBy == results.PoolBestBySLO:
		return "best pool at SLO"
	case row.BestPool:
		return "best pool by throughput"
	}
	return ""
}

// loadText is "requests × concurrency", and "@ rate/s" for an open-loop run. Concurrency is the
// ladder level, else the concurrency flag, else what the load engine measured; requests is the
// requests flag, else the duration flag, else "–". A mark is added in parentheses.
func loadText(r results.Run, level int, mark string) string {
	requests := missingValue
	if n := r.Config.Requests; n > 0 {
		requests = formatCount(float64(n))
	} else if ms := r.Config.DurationMs; ms > 0 {
		requests = results.Duration(ms).String() // a duration-bound run (ladder levels)
	}
	conc := missingValue
	if level > 0 {
		conc = strconv.Itoa(level)
	} else if n := r.Config.Concurrency; n > 0 {
		conc = formatCount(float64(n))
	} else if r.Load.Concurrency > 0 {
		conc = strconv.Itoa(r.Load.Concurrency)
	}
	s := requests + " × " + conc
	if r.Rate > 0 {
		s += " @ " + formatRPS(r.Rate) + "/s"
	}
	if mark != "" {
		s += " (" + mark + ")"
	}
	return s
}

// ModeLabel is a mode as tables and progress show it: with its slot count when there are
// several slots ("sync · 16 slots"), and how a write picked its slot when not by the default
// hash of its request id ("sync · 16 slots by session").
func ModeLabel(mode string, slots int, pick string) string {
	switch {
	case slots <= 1:
		return mode
	case pick == "" || pick == "hash":
		return fmt.Sprintf("%s · %d slots", mode, slots)
	}
	return fmt.Sprintf("%s · %d slots by %s", mode, slots, pick)
}

// rttText is the round trip run r added to PostgreSQL as a row shows it: "" when it added none
// outside an RTT ladder.
func rttText(r results.Run) string {
	if r.Config.DBRTTMs > 0 || len(r.Config.RTTLevelsMs) > 0 {
		return FormatRTT(r.Config.DBRTTMs)
	}
	return ""
}

// PoolText is a pool ladder's size as a mode label ends with it: " · pool 16"; "" for 0 (a
// run off a pool ladder).
func PoolText(pool int) string {
	if pool <= 0 {
		return ""
	}
	return " · pool " + strconv.Itoa(pool)
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
