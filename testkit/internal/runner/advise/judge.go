package advise

import (
	"maps"
	"math"
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Holding: what a run (or a configuration's runs together) missed of the objectives.

// figures are what the objectives judge of a run, or of runs together (merge: the medians of
// the figures, the sums of the counts, verified only when every run was).
type figures struct {
	verified bool
	failed   int64 // failed requests
	dropped  int64 // records a full queue dropped
	p99      float64
	lag      float64
	hasLag   bool // the run's queue measured its persist lag
	sessions float64
	// sent is the share of an open loop's arrivals sent (1 in a closed loop).
	sent float64
	// The figures the order of cost and the evidence read beside the objectives'.
	wal, throughput float64
	// What the pruning rules and the headroom's diagnosis read: the pool's size and the
	// workers, the most sessions waiting on a lock (and on one row: -1 when not measured) and
	// the table most waited on, the longest lock wait, the wait for a pool connection, an open
	// loop's wait to start, the clients waiting in a pooler.
	pool, concurrency      int
	waiters, waitersPerRow int64
	lockTable              string
	lockWaitMs, acquireP99 float64
	scheduleLagP99         float64
	poolerWaiting          int64
	poolerWaitMs           float64
}

// figuresOf reads run r's figures.
func figuresOf(r results.Run) figures {
	f := figures{verified: r.Verification.Passed && r.Error == "" && !r.Interrupted, failed: r.Load.FailedRequests,
		p99: r.Load.LatencyMs.P99, sessions: float64(r.Pool.MaxServerSessions), sent: 1, throughput: r.Load.ThroughputRPS}
	if q := r.Queue; q != nil {
		f.dropped, f.lag, f.hasLag = q.DroppedTotal, q.PersistLagMs.P99, true
	}
	if ol := r.Load.OpenLoop; ol != nil {
		f.sent = ol.SentShare
	}
	if d := r.Database; d != nil {
		f.wal = d.PerRequest.WALBytes
	}
	lm := r.LockMonitor
	f.pool, f.concurrency = r.Config.MaxConnections, r.Config.Concurrency
	f.waiters, f.lockWaitMs, f.acquireP99 = lm.MaxLockWaiters, lm.MaxLockWaitMs, r.Load.AcquireWaitMs.P99
	f.waitersPerRow = -1
	for _, n := range lm.MaxWaitersPerRowByRelation {
		f.waitersPerRow = max(f.waitersPerRow, n)
	}
	var most int64
	for _, table := range slices.Sorted(maps.Keys(lm.MaxWaitersByRelation)) {
		if n := lm.MaxWaitersByRelation[table]; n > most {
			f.lockTable, most = table, n
		}
	}
	if ol := r.Load.OpenLoop; ol != nil {
		f.scheduleLagP99 = ol.ScheduleLagMs.P99
	}
	if p := r.Pooler; p != nil {
		f.poolerWaiting, f.poolerWaitMs = p.MaxClientsWaiting, p.MaxWaitMs
	}
	return f
}

// merge is the figures of several runs together: every one verified, their failures and drops
// summed, the median of each figure (of those that measured it).
func merge(fs []figures) figures {
	if len(fs) == 0 {
		return figures{}
	}
	out := figures{verified: true}
	med := func(of func(figures) (float64, bool)) float64 {
		var vs []float64
		for _, f := range fs {
			if v, ok := of(f); ok {
				vs = append(vs, v)
			}
		}
		return median(vs)
	}
	for _, f := range fs {
		out.verified = out.verified && f.verified
		out.failed += f.failed
		out.dropped += f.dropped
		out.hasLag = out.hasLag || f.hasLag
	}
	out.p99 = med(func(f figures) (float64, bool) { return f.p99, true })
	out.lag = med(func(f figures) (float64, bool) { return f.lag, f.hasLag })
	out.sessions = med(func(f figures) (float64, bool) { return f.sessions, f.sessions > 0 })
	out.sent = med(func(f figures) (float64, bool) { return f.sent, true })
	out.wal = med(func(f figures) (float64, bool) { return f.wal, f.wal > 0 })
	out.throughput = med(func(f figures) (float64, bool) { return f.throughput, true })
	return out
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// defersWrites says how a mode's lag is known: measured (a queue records its persist lag),
// unmeasured (an outbox's flush loop records none), or none at all (the request commits its
// writes).
func lagOf(m testkit.Mode) (defers, measured bool) {
	switch {
	case m.Async():
		return true, true
	case m.Flushes():
		return true, false
	}
	return false, false
}

// missesOf is what figures f of a run in mode m missed of objectives o; openLoop says the load
// was a rate, whose arrivals must be sent.
func missesOf(f figures, m testkit.Mode, o results.Objectives, openLoop bool) []results.Miss {
	var out []results.Miss
	if !f.verified {
		out = append(out, results.Miss{Objective: results.ObjectiveVerified, Limit: 1})
	}
	if f.failed > 0 {
		out = append(out, results.Miss{Objective: results.ObjectiveNoFailures, Value: float64(f.failed)})
	}
	if f.dropped > 0 {
		out = append(out, results.Miss{Objective: results.ObjectiveQueueIntact, Value: float64(f.dropped)})
	}
	if openLoop && !results.HeldRate(f.sent) {
		out = append(out, results.Miss{Objective: results.ObjectiveRateHeld, Limit: results.RateHeldFraction, Value: f.sent,
			Ratio: ratio(results.RateHeldFraction, f.sent)})
	}
	if o.P99Ms > 0 && f.p99 > o.P99Ms {
		out = append(out, results.Miss{Objective: results.ObjectiveP99, Limit: o.P99Ms, Value: f.p99, Ratio: ratio(f.p99, o.P99Ms)})
	}
	if defers, measured := lagOf(m); o.LagP99Ms > 0 && defers {
		switch {
		case !measured || !f.hasLag:
			out = append(out, results.Miss{Objective: results.ObjectiveLagP99, Limit: o.LagP99Ms, NotMeasured: true})
		case f.lag > o.LagP99Ms:
			out = append(out, results.Miss{Objective: results.ObjectiveLagP99, Limit: o.LagP99Ms, Value: f.lag, Ratio: ratio(f.lag, o.LagP99Ms)})
		}
	}
	if limit := float64(o.MaxServerSessions); limit > 0 {
		switch {
		case f.sessions == 0:
			out = append(out, results.Miss{Objective: results.ObjectiveSessions, Limit: limit, NotMeasured: true})
		case f.sessions > limit:
			out = append(out, results.Miss{Objective: results.ObjectiveSessions, Limit: limit, Value: f.sessions, Ratio: ratio(f.sessions, limit)})
		}
	}
	return out
}

// maxRatio bounds a miss's ratio (a rate of which nothing was sent is that far off).
const maxRatio = 1e6

// ratio is how many times over its limit a figure is, at most maxRatio.
func ratio(over, under float64) float64 {
	if under <= 0 {
		return maxRatio
	}
	return math.Min(over/under, maxRatio)
}

// hard says a miss has no ratio: no margin or longer trial can turn it around.
func hard(m results.Miss) bool { return m.Ratio == 0 }

// worst is the largest ratio among misses (1 when there are none), and whether any is hard.
func worst(misses []results.Miss) (r float64, anyHard bool) {
	r = 1
	for _, m := range misses {
		if hard(m) {
			anyHard = true
		}
		r = max(r, m.Ratio)
	}
	return r, anyHard
}

// dominates says figures a are no worse than b on every objective o judges: b can hold
// nothing a misses.
func dominates(a, b figures, o results.Objectives) bool {
	if o.P99Ms > 0 && a.p99 > b.p99 {
		return false
	}
	if o.LagP99Ms > 0 && a.hasLag && b.hasLag && a.lag > b.lag {
		return false
	}
	if o.MaxServerSessions > 0 && a.sessions > b.sessions {
		return false
	}
	return a.sent >= b.sent
}
