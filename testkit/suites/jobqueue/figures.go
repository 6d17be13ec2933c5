package jobqueue

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// The run's own figures (testkit.FigureReporter): rates of the queue's three steps, claim
// latency, time in queue, what the lease path did, and the queue's tables before and after.

// Figure names (results.Run.Figures), stable across runs.
const (
	FigInsertedPerS  = "inserted_jobs_per_s"
	FigClaimedPerS   = "claimed_jobs_per_s"
	FigCompletedPerS = "completed_jobs_per_s"
	FigClaims        = "claims"
	FigJobsPerClaim  = "jobs_per_claim"
	FigClaimP50      = "claim_latency_p50"
	FigClaimP99      = "claim_latency_p99"
	FigInQueueP50    = "time_in_queue_p50"
	FigInQueueP99    = "time_in_queue_p99"
	FigMaxDepth      = "queue_depth_max"
	FigReruns        = "reruns"
	FigKilled        = "workers_killed"
	FigHeld          = "jobs_held_by_killed_workers"
	FigLeasesRunOut  = "leases_run_out"
	FigRenewals      = "lease_renewals"
	FigFenced        = "completions_fenced_off"
	FigWorkerErrors  = "worker_errors"
	FigDeadBefore    = "dead_tuples_before"
	FigDeadAfter     = "dead_tuples_after"
	FigTableBefore   = "table_bytes_before"
	FigTableAfter    = "table_bytes_after"
	FigIndexBefore   = "index_bytes_before"
	FigIndexAfter    = "index_bytes_after"
	FigDeadPer10k    = "dead_tuples_per_10k_jobs"
	FigGrowthPer10k  = "growth_bytes_per_10k_jobs"
	FigAutovacuums   = "autovacuum_runs"
	FigAutoanalyzes  = "autoanalyze_runs"
	// FigRiverPollOnly is 1 when the river mode ran poll-only (no LISTEN/NOTIFY: a pooler in
	// transaction mode), absent otherwise.
	FigRiverPollOnly  = "river_poll_only"
	unitJobsPerS      = "jobs/s"
	unitMs            = "ms"
	unitCount         = "count"
	unitBytes         = "bytes"
	unitJobsPerClaimU = "jobs"
)

// queueTables are the tables the queue of mode lives in.
func queueTables(mode testkit.Mode, policy string) []string {
	switch {
	case mode == River:
		return riverTables
	case policy == Archive:
		return []string{"jobs", "jobs_archive"}
	}
	return []string{"jobs"}
}

// tableFigures are the queue's tables at one moment, summed over them.
type tableFigures struct {
	tables                     []string
	heap, index, dead, av, aan int64
	// noVacuum: the database counts no dead rows and has no autovacuum (InnoDB): dead, av and
	// aan are not read.
	noVacuum bool
}

// Figures are the run's own figures, once it is verified.
func (s *Suite) Figures(ctx context.Context, r *testkit.Run) ([]testkit.Figure, error) {
	rn := s.runOf(r)
	if rn == nil {
		return nil, nil
	}
	st := rn.st
	after, err := rn.sql.readTables(ctx, r.Admin(), st.before.tables)
	if err != nil {
		return nil, err
	}
	var out []testkit.Figure
	add := func(name string, v float64, unit string) {
		out = append(out, testkit.Figure{Name: name, Value: units.Round(v, 3), Unit: unit})
	}
	if r.Mode() == River && pollOnly(r) {
		add(FigRiverPollOnly, 1, unitCount)
	}
	jobs := st.inserted.Load()
	if first := st.firstInsert.Load(); first > 0 {
		since := func(ns int64) float64 { return time.Duration(ns - first).Seconds() }
		if d := since(st.lastInsert.Load()); d > 0 {
			add(FigInsertedPerS, float64(jobs)/d, unitJobsPerS)
		}
		if d := since(st.lastClaim.Load()); d > 0 {
			add(FigClaimedPerS, float64(st.firstClaims.Load())/d, unitJobsPerS)
		}
		if d := since(st.done.Load()); d > 0 && st.done.Load() > 0 {
			add(FigCompletedPerS, float64(jobs)/d, unitJobsPerS)
		}
	}
	claims := st.claims.Load()
	add(FigClaims, float64(claims), unitCount)
	if claims > 0 {
		add(FigJobsPerClaim, float64(st.claimed.Load())/float64(claims), unitJobsPerClaimU)
		cl := st.claimLatency.Merged().Summary()
		add(FigClaimP50, cl.P50, unitMs)
		add(FigClaimP99, cl.P99, unitMs)
	}
	if q := st.timeInQueue.Merged().Summary(); q.Count > 0 {
		add(FigInQueueP50, q.P50, unitMs)
		add(FigInQueueP99, q.P99, unitMs)
	}
	add(FigMaxDepth, float64(st.maxDepth.Load()), unitCount)
	add(FigReruns, float64(st.reruns.Load()), unitCount)
	add(FigKilled, float64(st.killed.Load()), unitCount)
	add(FigHeld, float64(st.held.Load()), unitCount)
	leases := st.reaped.Load()
	if r.Mode() == River {
		leases = st.rescued.Load()
	}
	add(FigLeasesRunOut, float64(leases), unitCount)
	add(FigRenewals, float64(st.renewals.Load()), unitCount)
	add(FigFenced, float64(st.fenced.Load()), unitCount)
	add(FigWorkerErrors, float64(st.errorsAtDone.Load()), unitCount)
	b := st.before
	if !b.noVacuum {
		add(FigDeadBefore, float64(b.dead), unitCount)
		add(FigDeadAfter, float64(after.dead), unitCount)
	}
	add(FigTableBefore, float64(b.heap), unitBytes)
	add(FigTableAfter, float64(after.heap), unitBytes)
	add(FigIndexBefore, float64(b.index), unitBytes)
	add(FigIndexAfter, float64(after.index), unitBytes)
	if jobs > 0 {
		per10k := 10_000 / float64(jobs)
		if !b.noVacuum {
			add(FigDeadPer10k, float64(after.dead-b.dead)*per10k, unitCount)
		}
		add(FigGrowthPer10k, float64(after.heap+after.index-b.heap-b.index)*per10k, unitBytes)
	}
	if !b.noVacuum {
		add(FigAutovacuums, float64(after.av-b.av), unitCount)
		add(FigAutoanalyzes, float64(after.aan-b.aan), unitCount)
	}
	return out, nil
}

// WriteSummary adds, per run, the queue's own figures and what the database counted per job,
// and async-compact beside River when both ran.
func (*Suite) WriteSummary(w io.Writer, rep *results.Report) {
	fmt.Fprintln(w, "\njob queue (per job: the database's counts over the jobs inserted; growth: the queue's tables and indexes):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\tinserted/s\tclaimed/s\tcompleted/s\tclaim p50/p99\tin queue p50/p99\tstmts/job\t%s/job\tcommits/job\tre-runs\tdead/10k\tgrowth/10k\tautovacuum\t\n", logName(rep))
	for _, r := range rep.Runs {
		fig := func(name string) float64 { v, _ := r.Figure(name); return v }
		// a figure the database does not have (InnoDB's dead rows, autovacuum): –
		count := func(name string) string {
			if v, ok := r.Figure(name); ok {
				return units.Count(v)
			}
			return "–"
		}
		db := r.Database
		var stmts, log, commits string = "–", "–", "–"
		if db != nil {
			stmts, log, commits = fmt.Sprintf("%.2f", db.PerRequest.Statements), units.Bytes(logBytes(db.PerRequest)), fmt.Sprintf("%.2f", db.PerRequest.Commits)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s / %s\t%s / %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Label(),
			units.RPS(fig(FigInsertedPerS)), units.RPS(fig(FigClaimedPerS)), units.RPS(fig(FigCompletedPerS)),
			units.Duration(fig(FigClaimP50)), units.Duration(fig(FigClaimP99)),
			units.Duration(fig(FigInQueueP50)), units.Duration(fig(FigInQueueP99)),
			stmts, log, commits, units.Count(fig(FigReruns)), count(FigDeadPer10k),
			units.Bytes(fig(FigGrowthPer10k)), count(FigAutovacuums))
	}
	tw.Flush()
	if rv := firstRun(rep, River.String()); rv != nil {
		if v, _ := rv.Figure(FigRiverPollOnly); v > 0 {
			fmt.Fprintln(w, "- river ran poll-only (River's PollOnly, a fetch every --poll-ms): through a pooler in transaction mode a LISTEN lasts one transaction, so River's notifier cannot work")
		}
	}
	compact, rv := firstRun(rep, testkit.AsyncCompact.String()), firstRun(rep, River.String())
	if compact == nil || rv == nil {
		return
	}
	cps, _ := compact.Figure(FigCompletedPerS)
	rps, _ := rv.Figure(FigCompletedPerS)
	line := fmt.Sprintf("- async-compact against river (same invocation, same server): completed jobs/s %s (%s against %s)",
		ratio(cps, rps), units.RPS(cps), units.RPS(rps))
	if a, b := compact.Database, rv.Database; a != nil && b != nil {
		line += fmt.Sprintf(",\n    statements per job %.2f against %.2f, WAL per job %s against %s, commits per job %.3f against %.3f",
			a.PerRequest.Statements, b.PerRequest.Statements, units.Bytes(a.PerRequest.WALBytes), units.Bytes(b.PerRequest.WALBytes),
			a.PerRequest.Commits, b.PerRequest.Commits)
	}
	fmt.Fprintln(w, line)
}

// logName is the database's log the report's runs wrote: PostgreSQL's WAL, InnoDB's redo.
func logName(rep *results.Report) string {
	for _, r := range rep.Runs {
		if r.Database != nil && r.Database.RedoSource != "" {
			return "redo"
		}
	}
	return "WAL"
}

// logBytes is the log a job wrote: WAL, or InnoDB's redo.
func logBytes(p results.PerRequest) float64 {
	if p.RedoBytes > 0 {
		return p.RedoBytes
	}
	return p.WALBytes
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "–"
	}
	return units.Ratio(a / b)
}

func firstRun(rep *results.Report, mode string) *results.Run {
	for i := range rep.Runs {
		if rep.Runs[i].Mode == mode {
			return &rep.Runs[i]
		}
	}
	return nil
}
