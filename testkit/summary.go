package testkit

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// finishReport adds the repetition summaries and ladders.
func (e *engine) finishReport() {
	if e.cfg.Repeat > 1 {
		e.report.Summaries = results.Summarize(e.report.Runs)
	}
	build := results.BuildLadder
	switch {
	case len(e.cfg.SlotsLevels) > 0:
		build = results.BuildSlotLadder
	case len(e.cfg.Levels) == 0:
		return
	}
	for _, mode := range e.cfg.Modes {
		var runs []results.Run
		for _, r := range e.report.Runs {
			if r.Mode == mode {
				runs = append(runs, r)
			}
		}
		if len(runs) > 0 {
			e.report.Ladders = append(e.report.Ladders, build(mode, runs))
		}
	}
}

// printSummary writes the side-by-side table of the runs to w (stderr).
func printSummary(w io.Writer, rep *results.Report, info Info) {
	if len(rep.Runs) == 0 {
		if rep.Error != "" {
			fmt.Fprintf(w, "%s: no run completed: %s\n", info.Name, rep.Error)
		}
		return
	}
	fmt.Fprintf(w, "\n%s  (PostgreSQL %s, durability %s, %s)\n", info.Name, rep.Environment.PostgresVersion, rep.Environment.Durability, rep.Environment.MachineClass)
	if len(rep.Summaries) > 0 {
		// Repetitions: medians with their min–max spread, one row per mode (and level).
		_ = results.RenderMarkdown(w, results.Table([]*results.Report{rep}))
	} else {
		printRuns(w, rep, info)
	}
	printCalibration(w, rep.Environment.Calibration)
	printProblems(w, rep)
	printOverflow(w, rep, info)
}

// printCalibration says what the machine managed before the runs (the basis of "eff").
func printCalibration(w io.Writer, c *results.Calibration) {
	switch {
	case c == nil:
	case c.Skipped:
		fmt.Fprintln(w, "  calibration skipped (--calibrate=false): no efficiency")
	default:
		fmt.Fprintf(w, "  calibration (%.1f s): hot-row UPDATE %.0f/s on 1 conn, %.0f/s on %d; batched write %.0f rows/s on %d; eff = rps / hot-row rate (sync, outbox), persisted records/s / batched rate (queues)\n",
			c.DurationMs/1000, c.HotRowUpdateRPS1.Median, c.HotRowUpdateRPSPool.Median, c.PoolConns,
			c.BatchedWriteRowsPerSec.Median, c.BatchedWriteConns)
	}
}

// printRuns is the side-by-side table of single runs.
func printRuns(w io.Writer, rep *results.Report, info Info) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\trun\treq×conc\trps\tfailed\tp50 ms\tp95 ms\tp99 ms\tlag p99 ms\tmax waiters (hot)\tpool max %\tsql ops\tcompacted\tWAL B/req\tstmt/req\teff\tinline / dropped\tverified\t")
	for _, r := range rep.Runs {
		run := ""
		switch {
		case r.Level > 0 && r.Repetition > 0:
			run = fmt.Sprintf("L%d#%d", r.Level, r.Repetition)
		case r.Level > 0:
			run = fmt.Sprintf("L%d", r.Level)
		case r.Repetition > 0:
			run = fmt.Sprintf("#%d", r.Repetition)
		}
		lag, ops, compacted, overflow := "–", "–", "–", "–"
		if q := r.Queue; q != nil {
			lag = fmt.Sprintf("%.1f", q.PersistLagMs.P99)
			ops = fmt.Sprint(q.FlushSQLOpsTotal)
			compacted = fmt.Sprint(q.CompactedTotal)
			overflow = fmt.Sprintf("%d / %d", q.SyncFallbackTotal, q.DroppedTotal)
		}
		verified := "yes"
		if !r.Verification.Passed {
			verified = "NO"
		}
		wal, stmts, eff := "–", "–", "–"
		if d := r.Database; d != nil {
			wal = fmt.Sprintf("%.0f", d.PerRequest.WALBytes)
			if d.Statements != nil {
				stmts = fmt.Sprintf("%.3g", d.PerRequest.Statements)
			}
		}
		if r.EfficiencyBasis != "" {
			eff = fmt.Sprintf("%.3g", r.Efficiency)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			results.ModeLabel(r.Mode, r.Slots), run, reqConc(r), r.Load.ThroughputRPS, r.Load.FailedRequests,
			r.Load.LatencyMs.P50, r.Load.LatencyMs.P95, r.Load.LatencyMs.P99, lag,
			waiters(r.LockMonitor, r.Slots, info.HotTables), float64(r.Pool.MaxUsageBasisPoints)/100,
			ops, compacted, wal, stmts, eff, overflow, verified)
	}
	tw.Flush()
}

// printProblems lists error classes, failed checks and ladder knees under the table.
func printProblems(w io.Writer, rep *results.Report) {
	for _, r := range rep.Runs {
		if len(r.Load.ErrorCounts) > 0 {
			fmt.Fprintf(w, "  %s errors: %v\n", r.Mode, r.Load.ErrorCounts)
		}
		if rt := r.Load.Retries; rt != nil && rt.RetriedRequests > 0 {
			fmt.Fprintf(w, "  %s retries: %d requests retried (tries per request %s), retries by class %v\n",
				r.Mode, rt.RetriedRequests, triesText(rt.TriesPerRequest), rt.RetriesByClass)
		}
		if rt := r.Load.Retries; rt != nil && rt.MaxTries > 1 && len(rt.FailedAfterLastTryByClass) > 0 {
			fmt.Fprintf(w, "  %s failed after %d tries: %v\n", r.Mode, rt.MaxTries, rt.FailedAfterLastTryByClass)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Mode, database.Redact(r.Error))
		}
		for _, c := range r.Verification.Checks {
			if !c.OK {
				fmt.Fprintf(w, "  %s: check %q failed: expected %v, got %v\n", r.Mode, c.Name, c.Expected, c.Actual)
			}
		}
	}
	if len(rep.Ladders) > 0 {
		for _, l := range rep.Ladders {
			if l.Over == results.LadderSlots {
				printSlotLadder(w, l)
				continue
			}
			fmt.Fprintf(w, "  %s ladder knee: ", l.Mode)
			if l.KneeConcurrency > 0 {
				fmt.Fprintf(w, "saturates at concurrency %d\n", l.KneeConcurrency)
			} else {
				fmt.Fprintln(w, "none (throughput still rising)")
			}
		}
	}
}

// triesText is the tries-per-request histogram in order: "1:5712 2:250 3:38".
func triesText(h map[int]int64) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(h)) {
		parts = append(parts, fmt.Sprintf("%d:%d", n, h[n]))
	}
	return strings.Join(parts, " ")
}

func reqConc(r results.Run) string {
	req := fmt.Sprint(r.Config["requests"])
	if req == "0" {
		req = fmt.Sprint(r.Config["duration"])
	}
	return fmt.Sprintf("%s×%d", req, r.Load.Concurrency)
}

// waiters shows the hot tables' maximum waiters, largest first, e.g. "api_keys 57 providers 3";
// with several slots, the most on one physical row beside each: "api_keys 48 (3/row)".
func waiters(l results.LockMonitor, slots int, hot []string) string {
	by := l.MaxWaitersByRelation
	type kv struct {
		k string
		v int64
	}
	var list []kv
	for _, t := range hot {
		list = append(list, kv{t, by[t]})
	}
	for k, v := range by {
		if v > 0 && !slices.Contains(hot, k) {
			list = append(list, kv{k, v})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].v > list[j].v })
	var parts []string
	for _, e := range list {
		if e.v > 0 {
			part := fmt.Sprintf("%s %d", e.k, e.v)
			if row, ok := l.MaxWaitersPerRowByRelation[e.k]; ok && slots > 1 {
				part += fmt.Sprintf(" (%d/row)", row)
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// printOverflow says, in one line, that a queue overflowed: how many records a full queue
// made the requests write inline (or dropped), under which policy, and the flags that change
// it. Those writes land on the hot rows the queue exists to spare, so they explain a slow run.
func printOverflow(w io.Writer, rep *results.Report, info Info) {
	var parts []string
	var capacity int64
	policy := ""
	for _, mode := range info.Modes {
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
		return
	}
	fmt.Fprintf(w, "%s: warning: the queue overflowed (--queue-capacity %d, --queue-full %s): %s; raise --queue-capacity or use --queue-full block to wait for room instead\n",
		info.Name, capacity, policy, strings.Join(parts, ", "))
}

// printSlotLadder says, per slot count, what slots bought and what they cost a reader, and
// where more stopped paying.
func printSlotLadder(w io.Writer, l results.Ladder) {
	fmt.Fprintf(w, "  %s slots:", l.Mode)
	for _, lv := range l.Levels {
		fmt.Fprintf(w, " %d → %.0f rps, %.0f waiters (%.0f/row), read total p99 %.2f ms;", lv.Slots, lv.ThroughputRPS,
			lv.MaxWaiters, lv.MaxWaitersPerRow, lv.TotalReadP99Ms)
	}
	if l.KneeSlots > 0 {
		fmt.Fprintf(w, " more than %d slots add < 5%% throughput\n", l.KneeSlots)
	} else {
		fmt.Fprintln(w, " throughput still rising at the last count")
	}
}
