// Package advise is the search behind --advise: given the remedy space (the modes crossed with
// the values of the axes given: slots, pool size, the queue's batch and flush interval), the
// load to hold (an open loop's rate, or a closed loop's concurrency) and objectives (a request
// p99, a persist lag p99, a ceiling on the database's sessions), it proposes the engine's next
// trial from the results so far, and ends with the cheapest configuration that held every
// objective, by a stated order of cost (CostOrder), with its evidence, its confirmation
// against the runner-up and its headroom (results.Advice).
//
// It is pure: it runs nothing and reads no clock. The engine asks Next for a trial (a mode, a
// position, a length), runs it as any run (fresh state, verified), and hands the run back to
// Observe with the time it took; Next is told the time spent so far, against the budget.
//
// How it searches (docs/advisor.md says it for users):
//
//  1. The configurations are ranked by the order of cost, and grouped: a group holds those
//     equal in that order but for what is measured (the queue's batch and flush interval).
//  2. Walking the groups in order, every configuration of a group is screened with a short
//     trial (a quarter of the full length); the group's configurations are then ranked by
//     their screening (held first, then less WAL per request, then less lag), and in that
//     order each goes on to a trial of half the full length, then the full length, as long as
//     it holds or misses by no more than NearMiss (successive halving, cheapest first). A
//     configuration that misses by more, misses at the full length, or is not verified is
//     out.
//  3. What cannot win is pruned without a run (the rules are monotonicity assumptions; prune.go
//     states each and where it may not hold): a larger pool of a configuration whose pool's
//     sessions queued on a row lock, or that rose above the sessions ceiling, or whose queue
//     lagged; more slots of one whose rows had no queue; and, once a configuration fails at a
//     longer trial, those its screening dominated on every objective.
//  4. It stops when two configurations held at the full length (the winner and the
//     runner-up), when none is left, or when the budget left would not hold the next trial
//     and the confirmation after it.
//  5. Confirmation: the winner and the runner-up repeated at the full length, interleaved
//     (ConfirmPairs pairs, A B A B ...), each side's runs judged figure by figure with the A/B
//     verdict's statistics; a winner whose repeats miss an objective gives way.
//  6. Headroom: the winner's load doubled step by step (HeadroomSteps at most) until a step
//     misses an objective, then one step between the last that held and the first that did
//     not, each step screened (the screening's length); then the knee, the highest step that
//     held, at the full length (KneeTries at most), within the budget; what broke first at the
//     failing step is read from its figures.
package advise

import (
	"math"
	"slices"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Spec is what a search is given.
type Spec struct {
	// Modes are the modes to search, Space the values of each axis (by axis name, among
	// SpaceAxes) to cross them with.
	Modes []testkit.Mode
	Space map[string][]results.Value
	// Objectives are what a configuration must hold.
	Objectives results.Objectives
	// Rate is the open loop's rate every trial offers (0: a closed loop of Concurrency
	// workers); Concurrency also caps an open loop's requests in flight.
	Rate        float64
	Concurrency int
	// Length is the full length of a trial (--duration); Budget the time the whole invocation
	// may take (--advise-budget).
	Length, Budget time.Duration
}

// The search's constants (docs/advisor.md).
const (
	// NearMiss: a trial shorter than the full length that missed its objectives by at most
	// this ratio earns the next rung all the same (a short trial's tail is noisy).
	NearMiss = 1.25
	// ConfirmPairs is the winner's and the runner-up's repeats, interleaved: with each side's
	// full-length trial of the search, 1 + ConfirmPairs runs a side, the fewest with which
	// results/verdict bounds a 95% interval (verdict.MinRuns).
	ConfirmPairs = 3
	// HeadroomSteps is the most doublings of the winner's load the ramp takes (16×).
	HeadroomSteps = 4
	// PriorOverhead is what a trial is assumed to take beyond its length (reset, seed, drain,
	// verification) before one has run; after, the mean of what they took.
	PriorOverhead = 3 * time.Second
	// Proposals is how many trials a search that could not decide lists as what it would run.
	Proposals = 5
)

// RungShares are the trial lengths of the search's rungs, as shares of the full length.
var RungShares = []float64{0.25, 0.5, 1}

// Trial is what the search asks the engine to run: a mode at a position (its configuration's,
// and for a step of the headroom's ramp the load's axis), for Length.
type Trial struct {
	Mode   testkit.Mode
	At     results.Position
	Length time.Duration
	Phase  string // results.Phase*

	config int // the index of its configuration
	rung   int // the search's rung (-1: confirmation, headroom)
	step   results.Value
	full   bool // a headroom step at the full length (the knee's), not a screening
}

// The states of a search.
const (
	searching = iota
	confirming
	ramping
	done
)

// Search is one search: what it knows and what it has decided.
type Search struct {
	spec    Spec
	configs []*config
	lengths []time.Duration
	state   int
	pending *Trial

	elapsed  time.Duration
	overhead []time.Duration // what each trial took beyond its length

	holders []int // configurations that held at the full length, in the order found
	conf    *confirmation
	winner  int // -1 until decided
	runner  int // -1: none
	head    *headroom
	next    []results.Proposal
	outcome string
	notes   []string
}

// New is a search over spec's space.
func New(spec Spec) *Search {
	s := &Search{spec: spec, configs: buildSpace(spec.Modes, spec.Space), winner: -1, runner: -1}
	for _, share := range RungShares {
		s.lengths = append(s.lengths, time.Duration(float64(spec.Length)*share))
	}
	return s
}

// Lengths are the trial lengths of the search's rungs, shortest first.
func (s *Search) Lengths() []time.Duration { return slices.Clone(s.lengths) }

// full is the full length's rung.
func (s *Search) full() int { return len(s.lengths) - 1 }

// Next is the trial to run next, elapsed into the invocation; ok false when the search is over
// (Advice says what it found).
func (s *Search) Next(elapsed time.Duration) (t Trial, ok bool) {
	if s.pending != nil {
		panic("advise: Next before the last trial was observed")
	}
	s.elapsed = elapsed
	for s.state != done {
		switch s.state {
		case searching:
			t, ok = s.walk()
			switch {
			case !ok:
				s.afterSearch()
				continue
			case !s.fits(t.Length, s.reserve()):
				s.outOfBudget(t)
				continue
			}
		case confirming:
			if t, ok = s.conf.next(s); !ok {
				s.judgeConfirmation()
				continue
			}
		case ramping:
			t, ok = s.head.next(s)
			switch {
			case !ok:
				s.state = done
				continue
			case !s.fits(t.Length, 0):
				s.notes = append(s.notes, s.head.cutShort(t))
				s.state = done
				continue
			}
		}
		s.pending = &t
		return t, true
	}
	return Trial{}, false
}

// Observe takes the run of the trial Next proposed, index its place in the report's runs,
// and the time it took from its start to its verification's end; it returns what the run
// missed of the objectives, in words ("" when it held them).
func (s *Search) Observe(index int, run results.Run, took time.Duration) (missed string) {
	t := s.pending
	if t == nil {
		panic("advise: Observe without a trial")
	}
	s.pending = nil
	s.overhead = append(s.overhead, max(took-t.Length, 0))
	c := s.configs[t.config]
	f := figuresOf(run)
	tr := trial{run: index, phase: t.Phase, rung: t.rung, length: results.Milliseconds(t.Length), figs: f,
		misses: missesOf(f, c.mode, s.spec.Objectives, s.spec.Rate > 0)}
	c.trials = append(c.trials, tr)
	switch t.Phase {
	case results.PhaseScreen, results.PhaseRung:
		s.judgeSearchTrial(c, tr)
	case results.PhaseHeadroom:
		s.head.observe(t.step, t.full, tr)
	}
	return missesText(tr.misses)
}

// Stop ends the search where it is (a signal, a broken run): the advice says so, and keeps an
// answer already confirmed (a stop during the headroom's ramp ends the ramp).
func (s *Search) Stop() {
	s.pending = nil
	switch {
	case s.state == done:
	case s.outcome == results.AdviceAnswer:
		s.notes = append(s.notes, "the search was stopped during the headroom's ramp")
	default:
		s.outcome = results.AdviceStopped
	}
	s.state = done
}

// walk is the search's next trial: in the groups' order, the first group with a configuration
// still open screens all its configurations first, then takes the best-ranked one a rung
// further (none when two have held at the full length, or none is left).
func (s *Search) walk() (Trial, bool) {
	if len(s.holders) >= 2 || len(s.configs) == 0 {
		return Trial{}, false
	}
	for g := 0; g <= s.configs[len(s.configs)-1].group; g++ {
		var open []*config
		for _, c := range s.configs {
			if c.group == g && c.status == "" {
				open = append(open, c)
			}
		}
		for _, c := range open {
			if c.rung < 0 {
				return s.searchTrial(c, 0), true
			}
		}
		if ranked := s.rank(open); len(ranked) > 0 {
			return s.searchTrial(ranked[0], ranked[0].rung+1), true
		}
	}
	return Trial{}, false
}

func (s *Search) searchTrial(c *config, rung int) Trial {
	phase := results.PhaseRung
	if rung == 0 {
		phase = results.PhaseScreen
	}
	return Trial{Mode: c.mode, At: c.at, Length: s.lengths[rung], Phase: phase, config: c.index, rung: rung}
}

// rank orders a group's open configurations by their screening: those that held first, then
// those that missed by least; then less WAL (InnoDB: redo) per request (equal within 5%), then
// less lag.
func (s *Search) rank(open []*config) []*config {
	type key struct {
		worst float64
		wal   float64
		lag   float64
	}
	keys := map[*config]key{}
	for _, c := range open {
		f := c.trials[0].figs
		w, _ := worst(c.trials[0].misses)
		k := key{worst: w, lag: f.lag}
		if l := f.logBytes(); l > 0 {
			k.wal = math.Round(math.Log(l) / math.Log(1.05)) // buckets 5% apart
		}
		keys[c] = k
	}
	ranked := slices.Clone(open)
	slices.SortStableFunc(ranked, func(x, y *config) int {
		kx, ky := keys[x], keys[y]
		switch {
		case kx.worst != ky.worst:
			return cmpFloat(kx.worst, ky.worst)
		case kx.wal != ky.wal:
			return cmpFloat(kx.wal, ky.wal)
		}
		return cmpFloat(kx.lag, ky.lag)
	})
	return ranked
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// judgeSearchTrial takes a screening's or a longer trial's verdict on c: held at the full
// length, a rung further, or out (and what its failure prunes).
func (s *Search) judgeSearchTrial(c *config, tr trial) {
	r, anyHard := worst(tr.misses)
	switch {
	case tr.held() && tr.rung == s.full():
		c.status, c.rung = results.ConfigHeld, tr.rung
		s.holders = append(s.holders, c.index)
	case tr.held():
		c.rung = tr.rung
	case anyHard || tr.rung == s.full() || r > NearMiss:
		c.status, c.why = results.ConfigFailed, s.failedWhy(c, tr)
		s.prune(c, tr)
	default:
		c.rung = tr.rung // a near miss: the next rung tells
	}
}

// failedWhy says what c's failing trial tr missed, and at what length; after shorter trials
// that held, that they did.
func (s *Search) failedWhy(c *config, tr trial) string {
	why := missesText(tr.misses) + " at " + lengthText(tr.length)
	if len(c.trials) > 1 {
		why = "held at " + lengthText(c.trials[len(c.trials)-2].length) + "; " + why
	}
	return why
}

func missesText(misses []results.Miss) string {
	var parts []string
	for _, m := range misses {
		parts = append(parts, render.MissText(m))
	}
	return joinAnd(parts)
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	out := ""
	for i, p := range parts {
		switch {
		case i == 0:
		case i == len(parts)-1:
			out += " and "
		default:
			out += ", "
		}
		out += p
	}
	return out
}

func lengthText(ms float64) string { return results.Duration(ms).String() }

// est is what a trial of length is expected to take: its length and the mean overhead of the
// trials so far (PriorOverhead before any).
func (s *Search) est(length time.Duration) time.Duration {
	o := PriorOverhead
	if n := len(s.overhead); n > 0 {
		var sum time.Duration
		for _, d := range s.overhead {
			sum += d
		}
		o = sum / time.Duration(n)
	}
	return length + o
}

// fits says a trial of length, and reserve after it, fit in the budget left.
func (s *Search) fits(length, reserve time.Duration) bool {
	return s.elapsed+s.est(length)+reserve <= s.spec.Budget
}

// reserve is what the search keeps of the budget for the confirmation: a side's repeats
// until a winner held, both sides' after.
func (s *Search) reserve() time.Duration {
	pairs := ConfirmPairs
	if len(s.holders) > 0 {
		pairs = 2 * ConfirmPairs
	}
	return time.Duration(pairs) * s.est(s.lengths[s.full()])
}

// outOfBudget ends the search's walk at trial t, which the budget would not hold with the
// confirmation after it: a winner alone goes on to its confirmation; without one the search
// cannot decide, and lists what it would run next.
func (s *Search) outOfBudget(t Trial) {
	if len(s.holders) == 1 {
		s.notes = append(s.notes, "the runner-up was not searched for: the budget left would not hold its trials and the confirmation")
		s.startConfirmation()
		return
	}
	s.outcome, s.state = results.AdviceCannotDecide, done
	s.next = append(s.next, proposal(t))
	for _, c := range s.configs {
		if len(s.next) >= Proposals {
			break
		}
		if c.status == "" && c.rung < 0 && c.index != t.config {
			s.next = append(s.next, proposal(s.searchTrial(c, 0)))
		}
	}
}

func proposal(t Trial) results.Proposal {
	return results.Proposal{Mode: t.Mode.String(), At: t.At, Phase: t.Phase, LengthMs: results.Milliseconds(t.Length)}
}

// afterSearch follows a walk that has nothing left to run: a confirmation of what held, or
// none held.
func (s *Search) afterSearch() {
	if len(s.holders) == 0 {
		s.outcome, s.state = results.AdviceNoneHolds, done
		return
	}
	s.startConfirmation()
}
