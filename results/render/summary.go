package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
)

// Summary writes the summary a suite binary prints on stderr at the end: the side-by-side table
// of the runs (the table of `baseline table`), the machine's calibration, what went wrong
// (errors, retries, failed checks), ladder knees, open-loop rates not held and, in one warning
// line, a queue that overflowed. modes are the suite's, in the order that line lists them.
func Summary(w io.Writer, rep *results.Report, modes []string) {
	if len(rep.Runs) == 0 {
		if rep.Error != "" {
			fmt.Fprintf(w, "%s: no run completed: %s\n", rep.Suite, rep.Error)
		}
		return
	}
	fmt.Fprintf(w, "\n%s  (PostgreSQL %s, durability %s, %s)\n", rep.Suite, rep.Environment.PostgresVersion, rep.Environment.Durability, rep.Environment.MachineClass)
	// One row per run, or with repetitions the medians with their min–max spread, one row per
	// mode (and level).
	_ = RenderMarkdown(w, Table([]*results.Report{rep}))
	printCalibration(w, rep.Environment.Calibration)
	printFlushTime(w, rep)
	printProblems(w, rep)
	printOpenLoop(w, rep)
	printOverflow(w, rep, modes)
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
		if r.Error != "" { // redacted by the engine, as the report holds it
			fmt.Fprintf(w, "  %s: %s\n", r.Mode, r.Error)
		}
		for _, c := range r.Verification.Checks {
			if !c.OK {
				fmt.Fprintf(w, "  %s: check %q failed: expected %v, got %v\n", r.Mode, c.Name, c.Expected, c.Actual)
			}
		}
	}
	for _, l := range rep.Ladders {
		fmt.Fprintf(w, "  %s ladder knee: ", l.Mode)
		if l.KneeConcurrency > 0 {
			fmt.Fprintf(w, "saturates at concurrency %d\n", l.KneeConcurrency)
		} else {
			fmt.Fprintln(w, "none (throughput still rising)")
		}
	}
	for _, l := range rep.SlotLadders {
		printSlotLadder(w, l)
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

// printOverflow says, in one line, that a queue overflowed: how many records a full queue
// made the requests write inline (or dropped), under which policy, and the flags that change
// it. Those writes land on the hot rows the queue exists to spare, so they explain a slow run.
func printOverflow(w io.Writer, rep *results.Report, modes []string) {
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
		return
	}
	fmt.Fprintf(w, "%s: warning: the queue overflowed (--queue-capacity %d, --queue-full %s): %s; raise --queue-capacity or use --queue-full block to wait for room instead\n",
		rep.Suite, capacity, policy, strings.Join(parts, ", "))
}

// printSlotLadder says, per slot count, what slots bought and what they cost a reader, and
// where more stopped paying.
func printSlotLadder(w io.Writer, l results.SlotLadder) {
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

// printOpenLoop says which runs could not hold their rate, and each rate ladder's answer.
func printOpenLoop(w io.Writer, rep *results.Report) {
	for _, r := range rep.Runs {
		ol := r.Load.OpenLoop
		if ol == nil {
			continue
		}
		fmt.Fprintf(w, "  %s at %s/s: achieved %.0f/s, sent %d of %d arrivals, service p99 %.2f ms, schedule lag p99 %.2f ms, late %d, skipped %d, unsent %d\n",
			r.Mode, formatRate(ol.TargetRPS), ol.AchievedRPS, ol.Scheduled-ol.Skipped-ol.Unsent, ol.Scheduled,
			ol.ServiceMs.P99, ol.ScheduleLagMs.P99, ol.Late, ol.Skipped, ol.Unsent)
		if !ol.HeldRate {
			fmt.Fprintf(w, "%s: warning: %s could not hold --rate %s: sent %.1f%% of its arrivals, achieved %.0f/s; latency counts the wait of the requests it fell behind on\n",
				rep.Suite, r.Mode, formatRate(ol.TargetRPS), 100*ol.SentShare, ol.AchievedRPS)
		}
	}
	for _, l := range rep.RateLadders {
		switch {
		case l.SLOP99Ms == 0:
		case l.MaxRateAtSLO > 0:
			fmt.Fprintf(w, "  %s rate ladder: max rate at p99 ≤ %g ms: %s/s\n", l.Mode, l.SLOP99Ms, formatRate(l.MaxRateAtSLO))
		default:
			fmt.Fprintf(w, "  %s rate ladder: no rate kept p99 ≤ %g ms with ≥ 95%% of its arrivals sent\n", l.Mode, l.SLOP99Ms)
		}
	}
}

func formatRate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
