package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
)

// Findings and warnings: what a report says, in sentences, computed from the report alone (the
// rows of its table, its runs' reconciliation and verification, its calibration), so that a
// newcomer need not work the answer out from the columns.

// BaselineMode is the mode the findings compare the others with, when the report has it.
const BaselineMode = "sync"

// Findings are the report's answers in plain words: per mode, against the baseline mode (sync,
// else the report's first), its throughput ratio, the lock waiters on the hot table that had
// most before and after, the WAL per request ratio and its persist lag p99; where requests
// waited through a pooler; whether the generator was a run's limit; then whether every write
// was found exactly once. hotTables are the suite's hot tables (nil: every table named).
// The mode with the most throughput comes first. Modes that ran at several rungs (a ladder)
// are compared at the baseline's rung only.
func Findings(rep *results.Report, hotTables []string) []string {
	var out []string
	for _, rows := range apartGroups(reportRows(rep)) { // each kind of database against itself
		i := baselineRow(rows)
		if i < 0 {
			continue
		}
		base := rows[i]
		var others []TableRow
		for _, r := range rows {
			if r.Mode != base.Mode && r.At.Key() == base.At.Key() {
				others = append(others, r)
			}
		}
		// The most throughput first: the remedy that bought most leads.
		slices.SortStableFunc(others, func(a, b TableRow) int {
			return cmp.Compare(b.Metrics[results.MetricThroughputRPS].Median, a.Metrics[results.MetricThroughputRPS].Median)
		})
		for _, r := range others {
			if f := compareRow(base, r, hotTables); f != "" {
				out = append(out, f)
			}
		}
	}
	out = append(out, waitFindings(rep.Runs)...)      // pooler.go
	out = append(out, generatorFindings(rep.Runs)...) // generator.go
	if v := verifiedFinding(rep.Runs); v != "" {
		out = append(out, v)
	}
	return out
}

// apartGroups splits rows by their values on the axes whose values are Apart (the database's
// kinds), in the order the values first appear: a mode is measured against the baseline of its
// own kind, never another's. One group without such an axis.
func apartGroups(rows []TableRow) [][]TableRow {
	var keys []string
	groups := map[string][]TableRow{}
	for _, r := range rows {
		var parts []string
		for _, a := range results.Axes {
			if v, ok := r.At[a.Name]; ok && a.Apart {
				parts = append(parts, a.Name+"="+v.String())
			}
		}
		k := strings.Join(parts, ",")
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([][]TableRow, 0, len(keys))
	for _, k := range keys {
		out = append(out, groups[k])
	}
	return out
}

// baselineRow is the index of the first row of BaselineMode, else 0; -1 without rows.
func baselineRow(rows []TableRow) int {
	if len(rows) == 0 {
		return -1
	}
	return max(0, slices.IndexFunc(rows, func(r TableRow) bool { return r.Mode == BaselineMode }))
}

// compareRow is one mode's finding against the baseline row: "async-compact: 140× sync's
// throughput (10,207 against 73 requests/s), lock waiters on api_keys 63 → 0, WAL per request
// 3.5× lower (219 B against 766 B), persist lag p99 194 ms".
func compareRow(base, r TableRow, hotTables []string) string {
	bm, m := base.Metrics, r.Metrics
	var parts []string
	if b, v := bm[results.MetricThroughputRPS].Median, m[results.MetricThroughputRPS].Median; b > 0 && v > 0 {
		parts = append(parts, fmt.Sprintf("%s %s's throughput (%s against %s requests/s)",
			FormatRatio(v/b), base.Mode, formatRPS(v), formatRPS(b)))
	}
	if table, before := mostWaiters(bm, hotTables); table != "" {
		parts = append(parts, fmt.Sprintf("lock waiters on %s %s → %s", table, formatCount(before),
			formatCount(m[results.MetricMaxWaitersPrefix+table].Median)))
	} else if table, after := mostWaiters(m, hotTables); table != "" {
		parts = append(parts, fmt.Sprintf("lock waiters on %s 0 → %s", table, formatCount(after)))
	}
	for _, l := range []struct{ metric, name string }{
		{results.MetricWALBytesPerRequest, "WAL"}, {results.MetricRedoBytesPerRequest, "redo"},
	} {
		if f := logFinding(bm, m, l.metric, l.name); f != "" {
			parts = append(parts, f)
		}
	}
	if lag, ok := m[results.MetricPersistLagP99Ms]; ok {
		parts = append(parts, "persist lag p99 "+FormatDuration(lag.Median))
	}
	if len(parts) == 0 {
		return ""
	}
	return RowLabel(r) + ": " + strings.Join(parts, ", ")
}

// logFinding compares the log per request of a row with the baseline's ("WAL per request 3.5×
// lower (219 B against 766 B)"); "" unless both have it.
func logFinding(bm, m map[string]results.Spread, metric, name string) string {
	b, okB := bm[metric]
	v, okV := m[metric]
	if okB && okV && b.Median > 0 && v.Median > 0 {
		ratio, change := b.Median/v.Median, ""
		switch {
		case ratio > 1.05:
			change = FormatRatio(ratio) + " lower"
		case ratio < 1/1.05:
			change = FormatRatio(1/ratio) + " higher"
		default:
			change = "about the same"
		}
		return fmt.Sprintf("%s per request %s (%s against %s)", name, change, FormatBytes(v.Median), FormatBytes(b.Median))
	}
	return ""
}

// mostWaiters is the hot table with the most sessions waiting in the row's metrics ("" when
// none had any) and how many.
func mostWaiters(m map[string]results.Spread, hotTables []string) (string, float64) {
	table, most := "", 0.0
	for _, t := range waiterTables(m) {
		if n := m[results.MetricMaxWaitersPrefix+t].Median; isHotTable(t, hotTables) && n > most {
			table, most = t, n
		}
	}
	return table, most
}

// verifiedFinding says whether every run was verified and nothing lost or applied twice, and
// how many writes that covers: "all 20,000 writes verified exactly once in every mode". A run
// that failed says nothing here: the warnings and the failed checks say it.
func verifiedFinding(runs []results.Run) string {
	if len(runs) == 0 {
		return ""
	}
	var counts []int64
	reconciled := true
	for _, r := range runs {
		rc := r.Reconciliation
		if !r.Verification.Passed || (rc != nil && (rc.Lost > 0 || rc.Duplicated > 0)) {
			return ""
		}
		if rc == nil {
			reconciled = false
			continue
		}
		counts = append(counts, rc.Persisted)
	}
	where := "in every run"
	if len(runs) == 1 {
		where = ""
	}
	switch {
	case !reconciled:
		return strings.TrimSpace("every check passed " + where)
	case slices.Min(counts) == slices.Max(counts):
		return strings.TrimSpace(fmt.Sprintf("all %s writes verified exactly once %s", formatCount(float64(counts[0])), where))
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%s %s", runLabel(r), formatCount(float64(counts[i])))
	}
	return "every write verified exactly once in every run (" + strings.Join(parts, ", ") + ")"
}

// runLabel names a run among the others of its report: "sync", "sync #2", "sync ×64".
func runLabel(r results.Run) string {
	label := positionLabel(r.Mode, results.Shown(r.Config), r.Config, true)
	if r.Repetition > 1 {
		label += fmt.Sprintf(" #%d", r.Repetition)
	}
	return label
}

// NoisyCalibrationSpread is the spread of a calibration rate ((max − min) / median) above
// which the summary warns that the machine was busy while it was measured.
const NoisyCalibrationSpread = 0.3

// Warnings are what deserves a warning line: a mode that failed requests, a queue that
// overflowed, an open-loop run that could not hold its rate, a noisy calibration. modes are the
// suite's, in the order the overflow warning lists them.
func Warnings(rep *results.Report, modes []string) []string {
	var out []string
	out = append(out, failedWarnings(rep.Runs)...)
	if w := overflowWarning(rep, modes); w != "" {
		out = append(out, w)
	}
	for _, r := range rep.Runs {
		if ol := r.Load.OpenLoop; ol != nil && !ol.HeldRate {
			out = append(out, fmt.Sprintf("%s could not hold --rate %s: sent %.1f%% of its arrivals, achieved %s/s; latency counts the wait of the requests it fell behind on",
				runLabel(r), formatRate(ol.TargetRPS), 100*ol.SentShare, formatRPS(ol.AchievedRPS)))
		}
	}
	for _, r := range rep.Runs {
		if l := r.Leftover; l.Leaked() {
			out = append(out, fmt.Sprintf("%s left %d goroutines and %d TCP connections open beyond what the process held before it (%d and %d): something it opened did not close",
				runLabel(r), l.GoroutinesAfter-l.GoroutinesBefore, l.OpenConnsAfter-l.OpenConnsBefore, l.GoroutinesBefore, l.OpenConnsBefore))
		}
	}
	if w := calibrationWarning(rep.Environment.Calibration); w != "" {
		out = append(out, w)
	}
	return out
}

// failedWarnings: one line per mode whose runs failed requests.
func failedWarnings(runs []results.Run) []string {
	var out []string
	var order []string
	failed, total := map[string]int64{}, map[string]int64{}
	for _, r := range runs {
		label := positionLabel(r.Mode, results.Shown(r.Config), r.Config, true)
		if _, ok := total[label]; !ok {
			order = append(order, label)
		}
		failed[label] += r.Load.FailedRequests
		total[label] += r.Load.FailedRequests + r.Load.CompletedRequests
	}
	for _, label := range order {
		if failed[label] > 0 {
			out = append(out, fmt.Sprintf("%s failed %s of %s requests (their errors are listed above and in the report)",
				label, formatCount(float64(failed[label])), formatCount(float64(total[label]))))
		}
	}
	return out
}

// overflowWarning says, in one line, that a queue overflowed: how many records a full queue
// made the requests write inline (or dropped), under which policy, and the flags that change
// it. Those writes land on the hot rows the queue exists to spare, so they explain a slow run.
func overflowWarning(rep *results.Report, modes []string) string {
	var parts []string
	var capacity int64
	policy := ""
	for _, mode := range modes {
		var inline, dropped int64
		for _, r := range rep.Runs {
			if q := r.Queue; q != nil && r.Mode == mode {
				inline += q.SyncFallbackTotal
				dropped += q.DroppedTotal
				capacity, policy = q.Capacity, q.FullPolicy
			}
		}
		switch {
		case dropped > 0:
			parts = append(parts, fmt.Sprintf("%s dropped %d records", mode, dropped))
		case inline > 0 && policy == queue.PolicySync.String(): // else: fallbacks after failed flushes
			parts = append(parts, fmt.Sprintf("%s wrote %d records inline on the hot rows", mode, inline))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the queue overflowed (--queue-capacity %d, --queue-full %s): %s; raise --queue-capacity or use --queue-full block to wait for room instead",
		capacity, policy, strings.Join(parts, ", "))
}

// calibrationWarning names the calibration rates whose windows disagreed by more than
// NoisyCalibrationSpread of their median: the machine was busy, and efficiency is rough.
func calibrationWarning(c *results.Calibration) string {
	if c == nil || c.Skipped {
		return ""
	}
	noisy, widest := 0, 1.0
	for _, s := range []results.Spread{c.HotRowUpdateRPS1, c.HotRowUpdateRPSPool, c.BatchedWriteRowsPerSec} {
		if s.Median > 0 && s.Min > 0 && (s.Max-s.Min)/s.Median > NoisyCalibrationSpread {
			noisy++
			widest = max(widest, s.Max/s.Min)
		}
	}
	if noisy == 0 {
		return ""
	}
	return fmt.Sprintf("the calibration was noisy (%d of its 3 rates varied up to %s between windows): the machine was busy, so throughput and efficiency are rough",
		noisy, FormatRatio(widest))
}
