package advise

import (
	"fmt"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
)

// Pruning: when a configuration fails, the configurations that cannot win where it failed are
// ruled out without a run. Each rule is a monotonicity the search assumes; where it may not
// hold is said beside it (and in docs/advisor.md).

// prune rules out what configuration c's failing trial t shows cannot win.
func (s *Search) prune(c *config, t trial) {
	f := t.figs
	for _, m := range t.misses {
		switch {
		case m.NotMeasured && m.Objective == results.ObjectiveLagP99:
			// The mode records no lag (an outbox): none of its configurations can be shown
			// to hold the lag's objective. Not an assumption: what the mode measures.
			s.pruneMode(c, fmt.Sprintf("%s records no persist lag: the lag objective cannot be shown held", c.mode))
		case m.NotMeasured:
		case m.Objective == results.ObjectiveSessions:
			// A larger pool holds no fewer sessions. (It may where the pool never filled:
			// a run whose requests needed fewer connections than it had.)
			s.pruneAbove(c, results.AxisPool, fmt.Sprintf("a larger pool holds no fewer sessions, and %s held %s (%s)",
				s.label(c.index), render.FormatCount(f.sessions), render.MissText(m)))
		case m.Objective == results.ObjectiveP99 && !c.mode.Async() && f.waiters >= max(1, int64(f.pool/2)):
			// The requests' sessions queued on a row lock: the lock serializes the writes, and
			// a larger pool only queues more sessions on it. (It may help where the requests
			// spread over several hot rows, --hot-keys, and one of them is the bottleneck.) Not
			// for a queue's mode, whose requests write no row but when the queue is full.
			s.pruneAbove(c, results.AxisPool, fmt.Sprintf("%s sessions of %s queued on a row lock at once, half its pool or more: a larger pool queues more on it",
				render.FormatCount(float64(f.waiters)), s.label(c.index)))
		case m.Objective == results.ObjectiveLagP99 && c.mode.Async():
			// A queue's lag is its workers', on connections of their own: the load's pool
			// writes none of its batches. (A larger pool may still shorten a lag that comes
			// from the queue filling up and writing inline, --queue-full sync.)
			s.pruneAbove(c, results.AxisPool, fmt.Sprintf("the lag of %s is its queue's workers' (%s), and the load's pool writes none of their batches",
				s.label(c.index), render.MissText(m)))
		}
		if m.Objective == results.ObjectiveP99 && noRowQueue(f) {
			// No row had a session waiting behind another: more slots split rows nobody waited
			// on. (They may still help a run whose waits were elsewhere and moved onto a row.)
			s.pruneAbove(c, results.AxisSlots, fmt.Sprintf("no row of %s had a session waiting behind another: more slots split rows nobody waited on",
				s.label(c.index)))
		}
	}
	if t.rung <= 0 || len(c.trials) == 0 {
		return
	}
	// c held (or nearly held) its screening and failed a longer trial: a configuration its
	// screening dominated on every objective can hold only where c did, and c did not. (It
	// may, where the longer trial's failure came from something the screening did not show.)
	screen := c.trials[0].figs
	for _, d := range s.configs {
		if d == c || d.status != "" || d.rung < 0 || !dominates(screen, d.trials[0].figs, s.spec.Objectives) {
			continue
		}
		d.status, d.prunedBy = results.ConfigPruned, c.index
		d.why = fmt.Sprintf("its screening was no better than that of %s on any objective, which then failed (%s)", s.label(c.index), missesText(t.misses))
	}
}

// pruneAbove rules out, for the reason why, every configuration not yet run that is c with a
// larger value on axis a.
func (s *Search) pruneAbove(c *config, a *results.Axis, why string) {
	for _, d := range s.configs {
		if d.status == "" && len(d.trials) == 0 && siblingAbove(c, d, a) {
			d.status, d.why, d.prunedBy = results.ConfigPruned, why, c.index
		}
	}
}

// pruneMode rules out, for the reason why, every configuration of c's mode not yet run.
func (s *Search) pruneMode(c *config, why string) {
	for _, d := range s.configs {
		if d.status == "" && len(d.trials) == 0 && d.mode == c.mode {
			d.status, d.why, d.prunedBy = results.ConfigPruned, why, c.index
		}
	}
}

// noRowQueue says no physical row had a session waiting behind another: the most sessions
// queued on one row (the holder counted) is at most 1, or, where that was not measured, no
// session waited on a lock at all.
func noRowQueue(f figures) bool {
	if f.waitersPerRow >= 0 {
		return f.waitersPerRow <= 1
	}
	return f.waiters == 0
}
