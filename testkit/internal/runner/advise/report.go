package advise

import (
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Advice is what the search found, as the report records it (results.Advice); runs are the
// report's runs, whose figures the choices' medians are read from. UsedMs is the engine's to set.
func (s *Search) Advice(runs []results.Run) *results.Advice {
	a := &results.Advice{Objectives: s.spec.Objectives, Rate: s.spec.Rate, Concurrency: s.spec.Concurrency,
		Modes: testkit.ModeNames(s.spec.Modes), Order: CostOrder, BudgetMs: results.Milliseconds(s.spec.Budget),
		Outcome: s.outcome, Next: s.next, Notes: s.notes, Configurations: []results.Configuration{}}
	if a.Outcome == "" { // ended before it decided anything
		a.Outcome = results.AdviceStopped
	}
	for _, ax := range SpaceAxes {
		if vs := s.spec.Space[ax.Name]; len(vs) > 0 {
			if a.Space == nil {
				a.Space = map[string][]results.Value{}
			}
			a.Space[ax.Name] = slices.Clone(vs)
		}
	}
	for _, l := range s.lengths {
		a.LengthsMs = append(a.LengthsMs, results.Milliseconds(l))
	}
	for _, c := range s.configs {
		a.Configurations = append(a.Configurations, s.configuration(c))
	}
	if s.winner >= 0 {
		a.Answer = s.choice(s.winner, runs, false)
	}
	if s.runner >= 0 {
		a.RunnerUp = s.choice(s.runner, runs, false)
	}
	if a.Outcome == results.AdviceNoneHolds {
		if i := s.closest(); i >= 0 {
			a.Closest = s.choice(i, runs, true)
		}
	}
	if cf := s.conf; cf != nil {
		c := &results.Confirmation{Judgements: cf.judgements, WithinNoise: cf.withinNoise, Swapped: cf.swapped, CheaperBy: cf.cheaperBy}
		w, r := cf.a, cf.b
		if cf.swapped && s.winner == cf.b {
			w, r = cf.b, cf.a
		}
		c.Winner = s.fullRuns(s.configs[w])
		if r >= 0 {
			c.RunnerUp = s.fullRuns(s.configs[r])
		}
		a.Confirmation = c
	}
	if s.head != nil {
		_, fa := s.overFull(s.configs[s.winner])
		a.Headroom = s.head.report(merge(fa))
	}
	return a
}

// configuration is c as the advice records it: after the search, a configuration still open
// is unfinished (trials shorter than the full length) or untried.
func (s *Search) configuration(c *config) results.Configuration {
	out := results.Configuration{Mode: c.mode.String(), At: c.at, Status: c.status, Why: c.why}
	if c.prunedBy >= 0 {
		p := c.prunedBy
		out.PrunedBy = &p
	}
	for _, t := range c.trials {
		out.Trials = append(out.Trials, results.Trial{Run: t.run, Phase: t.phase, LengthMs: t.length, Held: t.held(), Misses: t.misses})
	}
	if out.Status != "" {
		return out
	}
	why := "the search ended before it"
	switch {
	case s.outcome == results.AdviceAnswer || s.winner >= 0 || len(s.holders) >= 2:
		why = "cheaper configurations held"
	case s.outcome == results.AdviceCannotDecide:
		why = "the budget ran out first"
	}
	out.Status, out.Why = results.ConfigUntried, "not reached: "+why
	if len(c.trials) > 0 {
		out.Status, out.Why = results.ConfigUnfinished, "held at "+lengthText(c.trials[len(c.trials)-1].length)+
			"; not run longer: "+why
		if !c.trials[len(c.trials)-1].held() {
			out.Why = "nearly held at " + lengthText(c.trials[len(c.trials)-1].length) + " (" +
				missesText(c.trials[len(c.trials)-1].misses) + "); not run longer: " + why
		}
	}
	return out
}

// fullRuns are the report's indexes of c's runs at the full length at its position.
func (s *Search) fullRuns(c *config) []int {
	var out []int
	for _, t := range s.fullTrials(c) {
		out = append(out, t.run)
	}
	return out
}

// choice is configuration i as the advice names it: judged on its runs at the full length (on
// its longest trial when it has none, as the closest may), with the medians of their figures;
// withMisses adds what they missed.
func (s *Search) choice(i int, runs []results.Run, withMisses bool) *results.Choice {
	c := s.configs[i]
	ts := s.fullTrials(c)
	if len(ts) == 0 {
		ts = []trial{s.longest(c)}
	}
	out := &results.Choice{Configuration: i, Mode: c.mode.String(), At: c.at, Figures: map[string]float64{}}
	var group []results.Run
	var fs []figures
	for _, t := range ts {
		out.Runs = append(out.Runs, t.run)
		fs = append(fs, t.figs)
		if t.run < len(runs) {
			group = append(group, runs[t.run])
		}
	}
	for k, sp := range results.SummarizeGroup(group).Metrics {
		if shownFigure[k] {
			out.Figures[k] = sp.Median
		}
	}
	if withMisses {
		out.Misses = missesOf(merge(fs), c.mode, s.spec.Objectives, s.spec.Rate > 0)
	}
	return out
}

// shownFigure are the figures a choice records: the objectives' and what the order of cost
// and the headroom's diagnosis read.
var shownFigure = map[string]bool{
	results.MetricThroughputRPS: true, results.MetricP50Ms: true, results.MetricP99Ms: true,
	results.MetricPersistLagP99Ms: true, results.MetricServerSessions: true, results.MetricWALBytesPerRequest: true,
	results.MetricMaxLockWaiters: true, results.MetricAcquireWaitP99Ms: true, results.MetricSentShare: true,
	results.MetricAchievedRPS: true,
}

// longest is c's last trial of the search's longest rung it ran.
func (s *Search) longest(c *config) trial {
	best := c.trials[0]
	for _, t := range c.trials {
		if t.rung >= best.rung {
			best = t
		}
	}
	return best
}

// closest is the configuration that came nearest to holding: among those run, verified ones
// before others, the one whose longest trial missed by the least (its worst ratio); -1 when
// none ran.
func (s *Search) closest() int {
	best, bestHard, bestWorst := -1, true, 0.0
	for _, c := range s.configs {
		if len(c.trials) == 0 {
			continue
		}
		w, anyHard := worst(s.longest(c).misses)
		if best < 0 || bestHard && !anyHard || bestHard == anyHard && w < bestWorst {
			best, bestHard, bestWorst = c.index, anyHard, w
		}
	}
	return best
}
