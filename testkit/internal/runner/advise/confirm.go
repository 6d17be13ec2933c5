package advise

import (
	"fmt"
	"slices"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// The confirmation: the winner (A) and the runner-up (B) of the search repeated at the full
// length, interleaved, and each side's runs judged together: a side holds when every run of it
// was verified and the medians of its figures meet every objective; the two sides' figures are
// compared with results/verdict's statistics.

// confirmation is the repeats under way.
type confirmation struct {
	a, b  int   // the configurations: the winner and the runner-up (-1: none)
	queue []int // the configurations of the repeats left to run, in order

	judgements  []results.Judgement
	withinNoise bool
	swapped     bool
	cheaperBy   string
}

// startConfirmation queues the repeats of the first two configurations that held (A B A B ...),
// or says the search cannot decide when the budget left would not hold them.
func (s *Search) startConfirmation() {
	a, b := s.holders[0], -1
	if len(s.holders) > 1 {
		b = s.holders[1]
	}
	var queue []int
	for range ConfirmPairs {
		queue = append(queue, a)
		if b >= 0 {
			queue = append(queue, b)
		}
	}
	full := s.lengths[s.full()]
	if !s.fits(full, time.Duration(len(queue)-1)*s.est(full)) {
		s.outcome, s.state = results.AdviceCannotDecide, done
		for _, i := range queue[:min(len(queue), Proposals)] {
			s.next = append(s.next, proposal(s.confirmTrial(i)))
		}
		s.notes = append(s.notes, s.label(a)+" held at the full length, but the budget left would not hold its confirmation")
		return
	}
	s.conf = &confirmation{a: a, b: b, queue: queue}
	s.state = confirming
}

func (c *confirmation) next(s *Search) (Trial, bool) {
	if len(c.queue) == 0 {
		return Trial{}, false
	}
	i := c.queue[0]
	c.queue = c.queue[1:]
	return s.confirmTrial(i), true
}

func (s *Search) confirmTrial(i int) Trial {
	c := s.configs[i]
	return Trial{Mode: c.mode, At: c.at, Length: s.lengths[s.full()], Phase: results.PhaseConfirm, config: i, rung: -1}
}

// fullTrials are c's trials at the full length at its position: its search trial and its
// repeats.
func (s *Search) fullTrials(c *config) []trial {
	var out []trial
	for _, t := range c.trials {
		if t.phase == results.PhaseConfirm || t.rung == s.full() {
			out = append(out, t)
		}
	}
	return out
}

// overFull is what c's full-length trials missed together (their medians), and their figures.
func (s *Search) overFull(c *config) ([]results.Miss, []figures) {
	var fs []figures
	for _, t := range s.fullTrials(c) {
		fs = append(fs, t.figs)
	}
	return missesOf(merge(fs), c.mode, s.spec.Objectives, s.spec.Rate > 0), fs
}

// judgeConfirmation decides from the repeats: the winner, and the runner-up when it held too;
// a winner that missed over its repeats gives way to a runner-up that held; when neither held,
// the search walks on.
func (s *Search) judgeConfirmation() {
	cf := s.conf
	a := s.configs[cf.a]
	ma, fa := s.overFull(a)
	var b *config
	var mb []results.Miss
	var fb []figures
	if cf.b >= 0 {
		b = s.configs[cf.b]
		mb, fb = s.overFull(b)
		cf.judgements = s.judge(fa, fb)
	}
	holdsA, holdsB := len(ma) == 0, b != nil && len(mb) == 0
	switch {
	case holdsA && holdsB:
		if sameStructure(a, b) && measuredBetter(cf.judgements) {
			a, b = b, a
			cf.swapped = true
		}
		s.winner, s.runner = a.index, b.index
		cf.withinNoise = s.withinNoise(cf.judgements, sameStructure(a, b))
		cf.cheaperBy = cheaperBy(a, b, cf.judgements, cf.swapped)
	case holdsA:
		s.winner = a.index
		if b != nil {
			s.failConfirmation(b, mb)
		}
	case holdsB:
		s.failConfirmation(a, ma)
		s.winner, cf.swapped = b.index, true
		s.notes = append(s.notes, s.label(a.index)+" held its first full-length trial but not over its repeats; the runner-up, which held, is the answer")
	default:
		s.failConfirmation(a, ma)
		if b != nil {
			s.failConfirmation(b, mb)
		}
		s.state = searching // the walk goes on for others that hold
		return
	}
	s.outcome, s.state = results.AdviceAnswer, ramping
	s.head = newHeadroom(s, s.winner)
}

// failConfirmation marks c, which held a full-length trial, failed over its repeats.
func (s *Search) failConfirmation(c *config, misses []results.Miss) {
	c.status = results.ConfigFailed
	c.why = fmt.Sprintf("held at %s once; over its %d runs at that length: %s", lengthText(results.Milliseconds(s.lengths[s.full()])),
		len(s.fullTrials(c)), missesText(misses))
	s.holders = slices.DeleteFunc(s.holders, func(i int) bool { return i == c.index })
}

// judged are the figures a confirmation compares, and which way each improves.
var judged = []struct {
	metric string
	dir    verdict.Direction
	of     func(figures) (float64, bool)
}{
	{results.MetricP99Ms, verdict.LowerIsBetter, func(f figures) (float64, bool) { return f.p99, true }},
	{results.MetricPersistLagP99Ms, verdict.LowerIsBetter, func(f figures) (float64, bool) { return f.lag, f.hasLag }},
	{results.MetricServerSessions, verdict.LowerIsBetter, func(f figures) (float64, bool) { return f.sessions, f.sessions > 0 }},
	{results.MetricWALBytesPerRequest, verdict.LowerIsBetter, func(f figures) (float64, bool) { return f.wal, f.wal > 0 }},
	{results.MetricThroughputRPS, verdict.HigherIsBetter, func(f figures) (float64, bool) { return f.throughput, true }},
}

// judge compares the runner-up's figures (B) with the winner's (A), each figure that every run
// of both sides has.
func (s *Search) judge(fa, fb []figures) []results.Judgement {
	var out []results.Judgement
	for _, j := range judged {
		a, okA := values(fa, j.of)
		b, okB := values(fb, j.of)
		if !okA || !okB {
			continue
		}
		r := verdict.Judge(a, b, j.dir, verdict.DefaultMinEffect)
		out = append(out, results.Judgement{Metric: j.metric, MedianA: r.MedianA, MedianB: r.MedianB, Ratio: r.Ratio,
			Lo: r.Lo, Hi: r.Hi, HasRatio: r.HasRatio, Bounded: r.Bounded, P: r.P, Verdict: string(r.Verdict)})
	}
	return out
}

func values(fs []figures, of func(figures) (float64, bool)) ([]float64, bool) {
	var out []float64
	for _, f := range fs {
		v, ok := of(f)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// cheaperBy says what puts winner a before runner-up b in the order of cost (judgements js
// are b's against the search's winner: against a itself unless swapped).
func cheaperBy(a, b *config, js []results.Judgement, swapped bool) string {
	slots, pool := results.AxisSlots, results.AxisPool
	switch {
	case a.mode != b.mode:
		return "less change to the service"
	case valueOf(a.at, slots) != valueOf(b.at, slots):
		return "fewer slots"
	case valueOf(a.at, pool) != valueOf(b.at, pool):
		return "a smaller pool"
	}
	better := string(verdict.Worse) // the search's runner-up, b, was worse
	if swapped {
		better = string(verdict.Better) // the search's runner-up was better: it is a now
	}
	switch {
	case verdictOn(js, results.MetricWALBytesPerRequest) == better:
		return "less WAL per request"
	case verdictOn(js, results.MetricPersistLagP99Ms) == better:
		return "less lag"
	}
	return ""
}

// verdictOn is the verdict on metric among js ("" when it was not judged).
func verdictOn(js []results.Judgement, metric string) string {
	for _, j := range js {
		if j.Metric == metric {
			return j.Verdict
		}
	}
	return ""
}

// measuredBetter says the runner-up is cheaper than the winner on what the order of cost
// measures, by the verdicts: less WAL per request, or as much and less lag.
func measuredBetter(js []results.Judgement) bool {
	wal := verdictOn(js, results.MetricWALBytesPerRequest)
	return wal == string(verdict.Better) ||
		wal != string(verdict.Worse) && verdictOn(js, results.MetricPersistLagP99Ms) == string(verdict.Better)
}

// withinNoise says no verdict told the two apart on an objective's figure (nor, for two
// configurations the order of cost told apart by what it measures, on the WAL and the lag).
func (s *Search) withinNoise(js []results.Judgement, measured bool) bool {
	o := s.spec.Objectives
	deciding := map[string]bool{results.MetricP99Ms: o.P99Ms > 0, results.MetricPersistLagP99Ms: o.LagP99Ms > 0 || measured,
		results.MetricServerSessions: o.MaxServerSessions > 0, results.MetricWALBytesPerRequest: measured}
	for _, j := range js {
		if deciding[j.Metric] && (j.Verdict == string(verdict.Better) || j.Verdict == string(verdict.Worse)) {
			return false
		}
	}
	return true
}

// label names configuration i: "async-compact · pool 8".
func (s *Search) label(i int) string {
	c := s.configs[i]
	return render.PositionLabel(c.mode.String(), c.at)
}
