// Package merge joins the reports of one run split over processes (--role producer and
// consumer, each process writing its own report) into one report of the whole run, which
// reads, tables, compares and plots like any other. It checks first that the reports are one
// split run, then merges run by run: latency distributions from their HDR histograms (never
// by averaging percentiles), counts summed, throughput over the union of the processes'
// measured windows, and the verifying consumer's verification as the run's.
//
// It owns no format of its own: the merged report is a results.Report whose Processes list
// the processes and whose Environment says it is merged. It must not read anything but the
// reports it is given.
package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
)

// Input is one process's report and the file it was read from (named in errors and in the
// merged report's process list).
type Input struct {
	Path   string
	Report *results.Report
}

// RoleMerged is the role a merged run's config records: the run of every process together.
const RoleMerged = "merged"

// Merged is the result of Merge: the report, and notes on what could not be merged exactly
// (a figure left out or taken from one process), one line each, for the user to read.
type Merged struct {
	Report *results.Report
	Notes  []string
}

// process is one input as the merge sees it.
type process struct {
	Input
	role       string // results: producer or consumer
	producerID int
	verify     bool
}

func (p *process) String() string {
	switch {
	case p.role == "producer":
		return fmt.Sprintf("producer %d (%s)", p.producerID, p.Path)
	case p.verify:
		return fmt.Sprintf("verifying consumer (%s)", p.Path)
	}
	return fmt.Sprintf("consumer (%s)", p.Path)
}

// Merge checks that inputs are the reports of the processes of one split run and merges them.
// An error means they are not (or a report cannot be merged): bad input, said in one line.
func Merge(inputs []Input) (*Merged, error) {
	procs, err := check(inputs)
	if err != nil {
		return nil, err
	}
	m := &merger{procs: procs}
	return m.merge()
}

// merger merges the checked processes' reports.
type merger struct {
	procs []*process
	notes []string
}

func (m *merger) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(m.notes, s) {
		m.notes = append(m.notes, s)
	}
}

func (m *merger) verifier() *process {
	for _, p := range m.procs {
		if p.verify {
			return p
		}
	}
	return nil
}

func (m *merger) merge() (*Merged, error) {
	first := m.procs[0].Report
	out := &results.Report{SchemaVersion: results.SchemaVersion, Suite: first.Suite, StartedAt: first.StartedAt, FinishedAt: first.FinishedAt}
	var errs []string
	for _, p := range m.procs {
		r := p.Report
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(out.FinishedAt) {
			out.FinishedAt = r.FinishedAt
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Error != "" {
			errs = append(errs, p.String()+": "+r.Error)
		}
		env := r.Environment
		out.Processes = append(out.Processes, results.Process{Role: p.role, ProducerID: p.producerID, Verify: p.verify,
			Hostname: env.Hostname, PID: env.PID, Report: p.Path, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Environment: env})
	}
	out.Error = strings.Join(errs, "; ")
	env, err := m.environment()
	if err != nil {
		return nil, err
	}
	out.Environment = env
	if m.verifier() == nil {
		m.note("no verifying consumer's report (--verify) among them: the merged runs are not verified")
	}
	for i := range first.Runs {
		run, err := m.run(i, env.Calibration)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, run)
	}
	rebuildDerived(out, first)
	return &Merged{Report: out, Notes: m.notes}, nil
}

// rebuildDerived computes the summaries and ladders from the merged runs, as the engine
// computed them from a process's runs: those the first producer's report had.
func rebuildDerived(out, like *results.Report) {
	if len(like.Summaries) > 0 {
		out.Summaries = results.Summarize(out.Runs)
	}
	if len(like.Ladders) > 0 {
		out.Ladders = results.BuildLadders(out.Runs)
	}
}

// span is a process's measured window of one run on the wall clock.
type span struct{ from, intakeEnd, end time.Time }

func windowOf(r results.Run) (span, bool) {
	l := r.Load
	from := r.StartedAt // before version 8: the run's start, setup included
	exact := l.MeasuredFrom != nil
	if exact {
		from = *l.MeasuredFrom
	}
	return span{from: from, intakeEnd: from.Add(results.Duration(l.IntakeMs)), end: from.Add(results.Duration(l.DurationMs))}, exact
}

// run merges run i of every process.
func (m *merger) run(i int, cal *results.Calibration) (results.Run, error) {
	runs := make([]results.Run, len(m.procs))
	for j, p := range m.procs {
		runs[j] = p.Report.Runs[i]
	}
	out := results.Run{Mode: runs[0].Mode, Repetition: runs[0].Repetition, StartedAt: runs[0].StartedAt}
	out.Config = m.config(runs)
	var errs []string
	for j, r := range runs {
		if r.StartedAt.Before(out.StartedAt) {
			out.StartedAt = r.StartedAt
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Error != "" {
			errs = append(errs, m.procs[j].String()+": "+r.Error)
		}
		for _, f := range r.Faults {
			f.Detail = strings.TrimSpace(m.procs[j].String() + " " + f.Detail)
			out.Faults = append(out.Faults, f)
		}
	}
	out.Error = strings.Join(errs, "; ")
	load, err := m.load(runs)
	if err != nil {
		return out, fmt.Errorf("run %d (%s): %w", i, runName(runs[0]), err)
	}
	out.Load = load
	out.Pool = m.pool(runs)
	out.Pooler = mergePooler(runs)
	if out.LockMonitor, err = m.lockMonitor(runs); err != nil {
		return out, fmt.Errorf("run %d (%s): %w", i, runName(runs[0]), err)
	}
	if out.Queue, err = m.queue(runs); err != nil {
		return out, fmt.Errorf("run %d (%s): %w", i, runName(runs[0]), err)
	}
	nets := make([]*results.Network, len(runs))
	for j, r := range runs {
		nets[j] = r.Network
	}
	out.Network = m.network(nets)
	out.Verification, out.Reconciliation, out.Figures, out.HotSets = m.verification(runs)
	if u := out.Verification.Unverified; u != nil {
		u.Succeeded, u.Failed = out.Load.CompletedRequests, out.Load.FailedRequests
		if rc := out.Reconciliation; rc != nil {
			u.Unknown = rc.OutcomeUnknown
		}
	}
	out.Database = m.database(runs, out.Load.CompletedRequests+out.Load.WarmupRequests)
	out.Efficiency, out.EfficiencyBasis = results.Efficiency(out, cal)
	return out, nil
}

// config is the merged run's config: a producer's, with the consumers' settings of their
// side (those RunConfig tags split:"consumer") taken from a consumer, role "merged", requests and concurrency summed over the producers (the run's), and
// the faults of every process.
func (m *merger) config(runs []results.Run) results.RunConfig {
	c := runs[0].Config // a producer's: producers come first
	var consumer *results.RunConfig
	var requests int64
	var concurrency, producers int
	var faults []string
	verify := false
	for j, r := range runs {
		p := m.procs[j]
		if p.role == "producer" {
			requests += r.Config.Requests
			concurrency += r.Config.Concurrency
			producers++
		} else if consumer == nil {
			consumer = &runs[j].Config
		}
		verify = verify || p.verify
		for _, f := range r.Config.Faults {
			if !slices.Contains(faults, f) {
				faults = append(faults, f)
			}
		}
	}
	if consumer != nil {
		c.TakeSplit(results.SplitConsumer, *consumer)
	}
	c.Role, c.ProducerID, c.Verify, c.ExpectProducers = RoleMerged, 0, verify, producers
	c.Requests, c.Concurrency, c.Faults = requests, concurrency, faults
	return c.Canonical()
}

// errNoHistogram: a report has values of a distribution but not the histogram behind them
// (a report written before reports kept it), so that distribution cannot be merged.
var errNoHistogram = errors.New("a report has its values but not the histogram behind them (written before reports kept it), so they cannot be merged")

// distribution merges one distribution of every run from the HDR histograms behind it (of
// returns a run's encoded histogram, "" for none, and how many values it summarises): the
// merged summary, read anew from the merged histogram, and that histogram encoded.
func distribution(name string, runs []results.Run, of func(results.Run) (string, int64)) (results.Latency, string, error) {
	hs := make([]encodedHist, len(runs))
	for i, r := range runs {
		hs[i].enc, hs[i].count = of(r)
	}
	return union(name, hs)
}

// encodedHist is a distribution as a report holds it: its histogram encoded ("" for none)
// and how many values its summary says it has.
type encodedHist struct {
	enc   string
	count int64
}

// union merges the histograms hs: the summary read anew from the merged histogram, and that
// histogram encoded; errNoHistogram when one of them has values but no histogram.
func union(name string, hs []encodedHist) (results.Latency, string, error) {
	merged := hist.New()
	for _, e := range hs {
		enc, count := e.enc, e.count
		if enc == "" {
			if count > 0 {
				return results.Latency{}, "", fmt.Errorf("%s: %w", name, errNoHistogram)
			}
			continue
		}
		h, err := hist.Decode(enc)
		if err != nil {
			return results.Latency{}, "", fmt.Errorf("%s: %w", name, err)
		}
		merged.Merge(h)
	}
	enc, err := merged.Encode()
	return results.Latency(merged.Summary()), enc, err
}

func (m *merger) load(runs []results.Run) (results.Load, error) {
	var l results.Load
	l.ErrorCounts = map[string]int64{}
	var windows []span
	exact := true
	for j, r := range runs {
		in := r.Load
		l.CompletedRequests += in.CompletedRequests
		l.FailedRequests += in.FailedRequests
		l.WarmupRequests += in.WarmupRequests
		l.ColdSessionRequests += in.ColdSessionRequests
		l.ConnectionsOpened += in.ConnectionsOpened
		addCounts(l.ErrorCounts, in.ErrorCounts)
		w, ok := windowOf(r)
		exact = exact && ok
		windows = append(windows, w)
		if m.procs[j].role == "producer" {
			l.Concurrency += in.Concurrency
			l.Retries = mergeRetries(l.Retries, in.Retries)
		}
	}
	if !exact {
		m.note("a report before schema_version 8 has no load.measured_from: the union of the windows is taken from the runs' starts (set-up included), and throughput reads low")
	}
	// Throughput over the union of the measured windows: the earliest start of any process to
	// the latest end of any (a consumer's drain included); the intake from the earliest start
	// to the last producer's last request.
	from, intakeEnd, end := windows[0].from, time.Time{}, windows[0].end
	for j, w := range windows {
		if w.from.Before(from) {
			from = w.from
		}
		if w.end.After(end) {
			end = w.end
		}
		if m.procs[j].role == "producer" && w.intakeEnd.After(intakeEnd) {
			intakeEnd = w.intakeEnd
		}
	}
	fromUTC := from.UTC()
	l.MeasuredFrom = &fromUTC
	l.DurationMs = units.Ms(end.Sub(from))
	l.IntakeMs = units.Ms(intakeEnd.Sub(from))
	l.DrainMs = units.Ms(end.Sub(intakeEnd))
	if l.DurationMs > 0 {
		l.ThroughputRPS = units.Round(float64(l.CompletedRequests)/(l.DurationMs/1000), 1)
	}
	if l.IntakeMs > 0 && runs[0].Load.AcceptRPS > 0 {
		l.AcceptRPS = units.Round(float64(l.CompletedRequests)/(l.IntakeMs/1000), 1)
	}

	var err error
	l.LatencyMs, l.LatencyHistogram, err = distribution("latency_histogram", runs, func(r results.Run) (string, int64) {
		return r.Load.LatencyHistogram, r.Load.LatencyMs.Count
	})
	if err != nil {
		return l, err
	}
	l.AcquireWaitMs, l.AcquireWaitHistogram, err = distribution("acquire_wait_histogram", runs, func(r results.Run) (string, int64) {
		return r.Load.AcquireWaitHistogram, r.Load.AcquireWaitMs.Count
	})
	switch {
	case errors.Is(err, errNoHistogram):
		m.note("acquire_wait_ms left out: a report was written before reports kept its histogram")
	case err != nil:
		return l, err
	}
	if l.ColdSessionRequests > 0 {
		cold, enc, err := distribution("cold_session_histogram", runs, func(r results.Run) (string, int64) {
			if c := r.Load.ColdSessionLatencyMs; c != nil {
				return r.Load.ColdSessionHistogram, c.Count
			}
			return "", 0
		})
		if err != nil {
			return l, err
		}
		if cold.Count > 0 {
			l.ColdSessionLatencyMs, l.ColdSessionHistogram = &cold, enc
		}
	}
	l.OpenLoop, err = m.openLoop(runs)
	return l, err
}

func addCounts(to, from map[string]int64) {
	for k, v := range from {
		to[k] += v
	}
}

func mergeRetries(to, from *results.Retries) *results.Retries {
	if from == nil {
		return to
	}
	if to == nil {
		to = &results.Retries{MaxTries: from.MaxTries, Classes: from.Classes, TriesPerRequest: map[int]int64{},
			RetriesByClass: map[string]int64{}, FailedAfterLastTryByClass: map[string]int64{}}
	}
	to.RetriedRequests += from.RetriedRequests
	for k, v := range from.TriesPerRequest {
		to.TriesPerRequest[k] += v
	}
	addCounts(to.RetriesByClass, from.RetriesByClass)
	addCounts(to.FailedAfterLastTryByClass, from.FailedAfterLastTryByClass)
	return to
}

// openLoop merges the producers' schedules: their rates and counts add up (they offered
// load at once), the sent share is recounted, service time and schedule lag come from the
// histograms.
func (m *merger) openLoop(runs []results.Run) (*results.OpenLoop, error) {
	var out *results.OpenLoop
	var sent float64
	var withLoop []results.Run
	for _, r := range runs {
		ol := r.Load.OpenLoop
		if ol == nil {
			continue
		}
		withLoop = append(withLoop, r)
		if out == nil {
			out = &results.OpenLoop{Arrivals: ol.Arrivals}
		}
		out.TargetRPS += ol.TargetRPS
		out.AchievedRPS += ol.AchievedRPS
		out.Scheduled += ol.Scheduled
		out.Late += ol.Late
		out.Skipped += ol.Skipped
		out.Unsent += ol.Unsent
		sent += ol.SentShare * float64(ol.Scheduled)
	}
	if out == nil {
		return nil, nil
	}
	out.AchievedRPS = units.Round(out.AchievedRPS, 1)
	if out.Scheduled > 0 {
		out.SentShare = units.Round(sent/float64(out.Scheduled), 4)
	}
	out.HeldRate = results.HeldRate(out.SentShare)
	var err error
	out.ServiceMs, out.ServiceHistogram, err = distribution("service_histogram", withLoop, func(r results.Run) (string, int64) {
		return r.Load.OpenLoop.ServiceHistogram, r.Load.OpenLoop.ServiceMs.Count
	})
	if err != nil {
		return nil, err
	}
	out.ScheduleLagMs, out.ScheduleLagHistogram, err = distribution("schedule_lag_histogram", withLoop, func(r results.Run) (string, int64) {
		return r.Load.OpenLoop.ScheduleLagHistogram, r.Load.OpenLoop.ScheduleLagMs.Count
	})
	return out, err
}

// mergePooler: the processes of a split run went through one pooler (baseline pgbouncer) and
// each read it, so its maxima are the largest any process saw, not a sum; its totals (SHOW
// STATS over each process's own window) are those of the process whose window saw the most
// transactions: the windows overlap, and adding them would count a transaction more than once.
// nil when no process had a pooler.
func mergePooler(runs []results.Run) *results.Pooler {
	var out *results.Pooler
	for _, r := range runs {
		in := r.Pooler
		if in == nil {
			continue
		}
		if out == nil {
			c := *in
			out = &c
			continue
		}
		out.Samples += in.Samples
		out.SampleErrors += in.SampleErrors
		out.WaitingSamples += in.WaitingSamples
		out.MaxClientsActive = max(out.MaxClientsActive, in.MaxClientsActive)
		out.MaxClientsWaiting = max(out.MaxClientsWaiting, in.MaxClientsWaiting)
		out.MaxWaitMs = max(out.MaxWaitMs, in.MaxWaitMs)
		out.MaxServersActive = max(out.MaxServersActive, in.MaxServersActive)
		out.MaxServersIdle = max(out.MaxServersIdle, in.MaxServersIdle)
		if in.Transactions > out.Transactions {
			out.Transactions, out.AvgWaitMs, out.AvgXactMs = in.Transactions, in.AvgWaitMs, in.AvgXactMs
		}
	}
	return out
}

// pool: every process had its own pool. The connections add up; the busiest process's peak
// usage is the run's (the peaks need not have fallen at once, so they are not summed).
func (m *merger) pool(runs []results.Run) results.Pool {
	var p results.Pool
	for _, r := range runs {
		in := r.Pool
		p.MaxConns += in.MaxConns
		p.MaxAcquired = max(p.MaxAcquired, in.MaxAcquired)
		p.MinIdle = max(p.MinIdle, in.MinIdle)
		p.MaxUsageBasisPoints = max(p.MaxUsageBasisPoints, in.MaxUsageBasisPoints)
		p.IdleReserve = max(p.IdleReserve, in.IdleReserve)
		p.PressureSamples += in.PressureSamples
		// Every process counted the same server's sessions of the service (pg_stat_activity):
		// the largest count any of them saw, not a sum.
		p.MaxServerSessions = max(p.MaxServerSessions, in.MaxServerSessions)
		p.AcquireCount += in.AcquireCount
		p.EmptyAcquireCount += in.EmptyAcquireCount
		p.CanceledAcquireCount += in.CanceledAcquireCount
	}
	return p
}

// lockMonitor: every process's monitor sampled the same server, so the most waiters any of
// them saw is the run's most; samples add up; the timed reads of a hot row's total merge.
func (m *merger) lockMonitor(runs []results.Run) (results.LockMonitor, error) {
	out := results.LockMonitor{IntervalMs: runs[0].LockMonitor.IntervalMs, MaxWaitersByRelation: map[string]int64{}}
	var withReads []results.Run
	for _, r := range runs {
		in := r.LockMonitor
		out.Samples += in.Samples
		out.WaiterSamples += in.WaiterSamples
		out.BlockerSamples += in.BlockerSamples
		out.SampleErrors += in.SampleErrors
		out.MaxLockWaiters = max(out.MaxLockWaiters, in.MaxLockWaiters)
		out.MaxLockWaitMs = max(out.MaxLockWaitMs, in.MaxLockWaitMs)
		out.MaxBlockedSessions = max(out.MaxBlockedSessions, in.MaxBlockedSessions)
		out.MaxBlockers = max(out.MaxBlockers, in.MaxBlockers)
		out.MaxWaitersByRelation = maxCounts(out.MaxWaitersByRelation, in.MaxWaitersByRelation)
		out.MaxWaitersPerRowByRelation = maxCounts(out.MaxWaitersPerRowByRelation, in.MaxWaitersPerRowByRelation)
		out.MaxWaitersByLockType = maxCounts(out.MaxWaitersByLockType, in.MaxWaitersByLockType)
		out.MaxServerLockWaits = max(out.MaxServerLockWaits, in.MaxServerLockWaits)
		for rel, ms := range in.MaxLockWaitMsByRelation {
			if out.MaxLockWaitMsByRelation == nil {
				out.MaxLockWaitMsByRelation = map[string]float64{}
			}
			out.MaxLockWaitMsByRelation[rel] = max(out.MaxLockWaitMsByRelation[rel], ms)
		}
		// Each process saw the waiters of its own sessions: the blocker that most of one
		// process's waited for stands for the run (a sum would need the same instant).
		if b := in.Blocker; b != nil && (out.Blocker == nil || b.Waiters > out.Blocker.Waiters) {
			out.Blocker = b
		}
		if in.TotalReadMs != nil {
			withReads = append(withReads, r)
		}
	}
	if len(withReads) == 0 {
		return out, nil
	}
	// Every monitor timed the same read on the same server: their timings merge.
	reads, enc, err := distribution("total_read_histogram", withReads, func(r results.Run) (string, int64) {
		return r.LockMonitor.TotalReadHistogram, r.LockMonitor.TotalReadMs.Count
	})
	switch {
	case errors.Is(err, errNoHistogram):
		m.note("lock_monitor.total_read_ms left out: a report was written before reports kept its histogram")
		return out, nil
	case err != nil:
		return out, err
	}
	out.TotalReadMs, out.TotalReadHistogram = &reads, enc
	return out, nil
}

func maxCounts(to, from map[string]int64) map[string]int64 {
	if len(from) == 0 {
		return to
	}
	if to == nil {
		to = map[string]int64{}
	}
	for k, v := range from {
		to[k] = max(to[k], v)
	}
	return to
}

// queue sums the processes' queue counters (each counts what it did, so the queue's invariant
// holds for the sum), takes the stream's run-wide gauges from the process that finished last,
// and merges the consumers' persist lags from their histograms.
func (m *merger) queue(runs []results.Run) (*results.Queue, error) {
	var out *results.Queue
	var last time.Time
	var withQueue []results.Run
	for _, r := range runs {
		in := r.Queue
		if in == nil {
			continue
		}
		withQueue = append(withQueue, r)
		if out == nil {
			out = &results.Queue{Backend: in.Backend, Compaction: in.Compaction, FullPolicy: in.FullPolicy}
			out.Capacity = in.Capacity
		}
		q, s := &out.QueueMetrics, in.QueueMetrics
		q.MaxDepth = max(q.MaxDepth, s.MaxDepth)
		q.EnqueuedTotal += s.EnqueuedTotal
		q.FlushedTotal += s.FlushedTotal
		q.FlushBatchesTotal += s.FlushBatchesTotal
		q.FlushSQLOpsTotal += s.FlushSQLOpsTotal
		q.FlushSQLRecordsTotal += s.FlushSQLRecordsTotal
		q.CompactedTotal += s.CompactedTotal
		q.DroppedTotal += s.DroppedTotal
		q.FlushFailedTotal += s.FlushFailedTotal
		q.RetriesTotal += s.RetriesTotal
		q.SyncFallbackTotal += s.SyncFallbackTotal
		q.RejectedTotal += s.RejectedTotal
		q.AbandonedTotal += s.AbandonedTotal
		w, _ := windowOf(r)
		if in.Stream != nil {
			if out.Stream == nil {
				out.Stream = &results.Stream{}
			}
			st, si := out.Stream, in.Stream
			st.AckedTotal += si.AckedTotal
			st.ReclaimedTotal += si.ReclaimedTotal
			st.RedeliveredTotal += si.RedeliveredTotal
			st.DeadLetteredTotal += si.DeadLetteredTotal
			st.DuplicateSkippedTotal += si.DuplicateSkippedTotal
			if !w.end.Before(last) { // run-wide gauges: as the last process to finish left them
				st.Length, st.PendingEntries = si.Length, si.PendingEntries
			}
		}
		if !w.end.Before(last) {
			q.Depth, q.PendingDepth = s.Depth, s.PendingDepth
			last = w.end
		}
		if in.FlushTime != nil {
			m.note("queue.flush_time left out: the in-memory queue's, per process")
		}
	}
	if out == nil {
		return nil, nil
	}
	out.WritesPerUpdate = out.QueueMetrics.WritesPerUpdate()
	var err error
	out.PersistLagMs, out.PersistLagHistogram, err = distribution("persist_lag_histogram", withQueue, func(r results.Run) (string, int64) {
		return r.Queue.PersistLagHistogram, r.Queue.PersistLagMs.Count
	})
	return out, err
}

// verification is the verifying consumer's verification (the run-wide one) with every other
// process's own checks, each named by its process; its reconciliation, the suite's figures and
// the spread over the hot sets are the run's. Without a verifying consumer the run's checks
// were not made: it is not verified, and says so (unverified).
func (m *merger) verification(runs []results.Run) (results.Verification, *results.Reconciliation, []results.Figure, *results.HotSets) {
	v := results.Verification{Passed: true}
	var recon *results.Reconciliation
	var figures []results.Figure
	var hot *results.HotSets
	verified := false
	for j, r := range runs {
		p := m.procs[j]
		prefix := p.String() + ": "
		if p.verify && !verified {
			verified, prefix = true, ""
			recon, figures, hot = r.Reconciliation, r.Figures, r.HotSets
		}
		for _, c := range r.Verification.Checks {
			c.Name = prefix + c.Name
			v.Checks = append(v.Checks, c)
		}
		v.Passed = v.Passed && r.Verification.Passed
	}
	if !verified {
		v.Checks = append(v.Checks, results.NotChecked("the run's checks", "no report of a consumer with --verify was merged"))
	}
	switch results.Verdict(v.Checks) {
	case results.CheckFailed:
		v.Passed = false
	case results.CheckNotChecked:
		v.Passed = false
		v.Unverified = &results.Unverified{Reason: results.NotCheckedReason(v.Checks)} // its requests: the caller's
	}
	return v, recon, figures, hot
}

// database: what PostgreSQL counted is server- and schema-wide over each process's window, so
// the processes' figures overlap and are never summed. The consumers do the writes, so the
// run's figures are those of the process whose window covers most of the consumers' windows
// (all of them, normally; on a tie the verifying consumer's, which waits for the end of the
// run, else the shortest window, which counts least of anything else), per request over the
// merged requests.
func (m *merger) database(runs []results.Run, requests int64) *results.Database {
	windows := make([]span, len(runs))
	var writes span // the consumers' windows together (every process's without a consumer)
	for j, r := range runs {
		windows[j], _ = windowOf(r)
		if m.procs[j].role == "consumer" || !m.hasConsumer() {
			writes = writes.union(windows[j])
		}
	}
	best := -1
	better := func(j int) bool {
		a, b := windows[j].overlap(writes), windows[best].overlap(writes)
		switch {
		case a != b:
			return a > b
		case m.procs[j].verify != m.procs[best].verify:
			return m.procs[j].verify
		}
		return windows[j].length() < windows[best].length()
	}
	for j, r := range runs {
		if r.Database != nil && (best < 0 || better(j)) {
			best = j
		}
	}
	if best < 0 {
		return nil
	}
	if windows[best].overlap(writes) < writes.length() {
		m.note("database figures are %s's, whose window missed part of the consumers' (they count the server's work within it only)", m.procs[best])
	}
	d := *runs[best].Database
	d.PerRequest = d.Per(requests)
	return &d
}

func (m *merger) hasConsumer() bool {
	return slices.ContainsFunc(m.procs, func(p *process) bool { return p.role == "consumer" })
}

func (s span) length() time.Duration { return s.end.Sub(s.from) }

// union is the window from the earlier start to the later end (s itself when o is empty).
func (s span) union(o span) span {
	switch {
	case s.from.IsZero():
		return o
	case o.from.Before(s.from):
		s.from = o.from
	}
	if o.end.After(s.end) {
		s.end = o.end
	}
	return s
}

// overlap is how long s and o overlap.
func (s span) overlap(o span) time.Duration {
	from, end := s.from, s.end
	if o.from.After(from) {
		from = o.from
	}
	if o.end.Before(end) {
		end = o.end
	}
	return max(end.Sub(from), 0)
}

// environment keeps what every process's environment agrees on, and says it is merged; its
// network is the union of the processes' probes (network.go), its calibration the verifying
// consumer's (else the first measured one): the consumers write to the server it measured.
func (m *merger) environment() (results.Environment, error) {
	envs := make([]results.Environment, len(m.procs))
	for i, p := range m.procs {
		envs[i] = p.Report.Environment
	}
	out, err := agreed(envs)
	if err != nil {
		return out, err
	}
	out.Merged = true
	nets := make([]*results.Network, len(envs))
	for i, e := range envs {
		nets[i] = e.Network
	}
	out.Network = m.network(nets)
	out.Calibration = nil
	if v := m.verifier(); v != nil && v.Report.Environment.Calibration != nil {
		out.Calibration = v.Report.Environment.Calibration
	}
	for _, e := range envs {
		if out.Calibration == nil && e.Calibration != nil && !e.Calibration.Skipped {
			out.Calibration = e.Calibration
		}
	}
	return out, nil
}

// agreed is the environment whose every field holds what all envs hold, and is empty where
// they differ (compared as their JSON, so that a map or a nested object counts whole).
func agreed(envs []results.Environment) (results.Environment, error) {
	docs := make([]map[string]json.RawMessage, len(envs))
	for i, e := range envs {
		b, err := json.Marshal(e)
		if err != nil {
			return results.Environment{}, err
		}
		if err := json.Unmarshal(b, &docs[i]); err != nil {
			return results.Environment{}, err
		}
	}
	keep := map[string]json.RawMessage{}
	for k, v := range docs[0] {
		same := true
		for _, d := range docs[1:] {
			same = same && bytes.Equal(d[k], v)
		}
		if same {
			keep[k] = v
		}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		return results.Environment{}, err
	}
	var out results.Environment
	err = json.Unmarshal(b, &out)
	return out, err
}
