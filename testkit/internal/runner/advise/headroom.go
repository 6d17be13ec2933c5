package advise

import (
	"fmt"
	"maps"
	"math"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
)

// The headroom: the winner's load (an open loop's rate, a closed loop's concurrency) doubled
// step by step until a step misses an objective, then one step between the last that held and
// the first that did not: each step a trial of the screening's length, as the search screens
// its configurations. Then the knee, the highest step that held, is run at the full length, and
// only a full-length run is taken as held: when the knee misses there, the step below it that
// held is run at the full length too (KneeTries at most; the winner held its own load at the
// full length already). What broke first at the lowest failing step is read from its figures.

// MaxHeadroomConcurrency bounds a closed loop's ramp: beyond it the workers themselves (a
// goroutine each, and their requests' memory) are what a step would measure.
const MaxHeadroomConcurrency = 50_000

// KneeTries is the most full-length runs the ramp gives its knee: the highest step that held
// its screening, and when that one misses at the full length, the next below it.
const KneeTries = 2

// headroom is the ramp under way.
type headroom struct {
	config   int
	axis     *results.Axis
	base     float64
	steps    []step
	bisected bool
}

type step struct {
	value float64
	full  bool // a full-length run of the knee, not a screening
	tr    trial
}

func newHeadroom(s *Search, config int) *headroom {
	h := &headroom{config: config, axis: results.AxisConcurrency, base: float64(s.spec.Concurrency)}
	if s.spec.Rate > 0 {
		h.axis, h.base = results.AxisRate, s.spec.Rate
	}
	return h
}

// screened are the highest load whose screening held (the base when none did) and the lowest
// whose screening failed (0: none).
func (h *headroom) screened() (held, failed float64) {
	held = h.base
	for _, st := range h.steps {
		switch {
		case st.full:
		case st.tr.held():
			held = max(held, st.value)
		case failed == 0 || st.value < failed:
			failed = st.value
		}
	}
	return held, failed
}

// bounds are the knee, the highest load that held at the full length (the base, which the
// winner held, when no step did), and the lowest above it that failed, at either length (0:
// none).
func (h *headroom) bounds() (held, failed float64) {
	held = h.base
	for _, st := range h.steps {
		if st.full && st.tr.held() {
			held = max(held, st.value)
		}
	}
	for _, st := range h.steps {
		if !st.tr.held() && st.value > held && (failed == 0 || st.value < failed) {
			failed = st.value
		}
	}
	return held, failed
}

// next is the ramp's next step: the next doubling until one fails, then the step between, each
// screened; then the knee at the full length.
func (h *headroom) next(s *Search) (Trial, bool) {
	held, failed := h.screened()
	var v float64
	full := false
	switch {
	case failed == 0 && len(h.steps) < HeadroomSteps:
		v = h.round(h.base * math.Pow(2, float64(len(h.steps)+1)))
		if h.axis == results.AxisConcurrency && v > MaxHeadroomConcurrency {
			v, full = h.knee()
		}
	case failed == 0:
		v, full = h.knee()
	case !h.bisected:
		h.bisected = true
		if v = h.round(math.Sqrt(held * failed)); v <= held || v >= failed {
			v, full = h.knee()
		}
	default:
		v, full = h.knee()
	}
	if v == 0 {
		return Trial{}, false
	}
	c := s.configs[h.config]
	at := maps.Clone(c.at)
	if at == nil {
		at = results.Position{}
	}
	at[h.axis.Name] = results.Number(v)
	length := s.lengths[0]
	if full {
		length = s.lengths[s.full()]
	}
	return Trial{Mode: c.mode, At: at, Length: length, Phase: results.PhaseHeadroom, config: h.config, rung: -1,
		step: results.Number(v), full: full}, true
}

// knee is the next full-length run of the ramp, full true; 0 when there is none to make: the
// knee held at the full length, or KneeTries were made, or no step above the base held its
// screening below the full-length runs that missed.
func (h *headroom) knee() (v float64, full bool) {
	tries, lowest := 0, math.Inf(1) // the full-length runs so far, the lowest of them
	for _, st := range h.steps {
		if st.full {
			if st.tr.held() {
				return 0, false
			}
			tries, lowest = tries+1, min(lowest, st.value)
		}
	}
	if tries >= KneeTries {
		return 0, false
	}
	for _, st := range h.steps {
		if !st.full && st.tr.held() && st.value < lowest {
			v = max(v, st.value)
		}
	}
	return v, v > 0
}

// cutShort is the advice's note when the budget left does not hold the ramp's next trial t.
func (h *headroom) cutShort(t Trial) string {
	if !t.full {
		return "the budget ended the headroom's ramp before a step failed"
	}
	return fmt.Sprintf("the budget ended the headroom's ramp before its knee ran at the full length: its screenings held up to %s, the knee stays at the highest load held at the full length",
		render.FormatCount(t.step.Num))
}

// round is a load as a step takes it: whole workers, a rate to a tenth below 10/s and whole
// above.
func (h *headroom) round(v float64) float64 {
	if h.axis == results.AxisRate && v < 10 {
		return math.Round(v*10) / 10
	}
	return math.Round(v)
}

func (h *headroom) observe(v results.Value, full bool, tr trial) {
	h.steps = append(h.steps, step{value: v.Num, full: full, tr: tr})
}

// report is the ramp as the advice records it, with what broke first at its lowest failing
// step, compared with the highest that held (heldFigs: the winner's at the base).
func (h *headroom) report(heldFigs figures) *results.Headroom {
	out := &results.Headroom{Axis: h.axis.Name, Steps: []results.HeadroomStep{}}
	held, failed := h.bounds()
	for _, st := range h.steps {
		out.Steps = append(out.Steps, results.HeadroomStep{Value: results.Number(st.value), Run: st.tr.run, Held: st.tr.held(),
			Full: st.full, LengthMs: st.tr.length, Misses: st.tr.misses})
		if st.full && st.tr.held() && st.value == held {
			heldFigs = st.tr.figs
		}
	}
	hv := results.Number(held)
	out.Held = &hv
	if failed == 0 {
		return out
	}
	fv := results.Number(failed)
	out.Failed, out.Complete = &fv, true
	for _, st := range h.steps {
		if st.value == failed && !st.tr.held() {
			out.Breaks, out.BreaksDetail = diagnose(st.tr, heldFigs)
		}
	}
	return out
}

// diagnose says what broke first in trial t (a failing step), against the figures of the step
// below it that held: the objective it missed, and what its figures show held the requests up.
func diagnose(t trial, below figures) (breaks, detail string) {
	f := t.figs
	missed := map[string]results.Miss{}
	for _, m := range t.misses {
		missed[m.Objective] = m
	}
	ms := render.FormatDuration
	_, p99 := missed[results.ObjectiveP99]
	switch {
	case !f.verified:
		return results.BreaksVerified, "the step was not verified"
	case has(missed, results.ObjectiveSessions):
		return results.BreaksSessions, render.MissText(missed[results.ObjectiveSessions])
	case has(missed, results.ObjectiveRateHeld) || p99 && f.scheduleLagP99 >= f.p99/2:
		return results.BreaksClient, fmt.Sprintf("requests started late, schedule lag p99 %s of a p99 of %s, %s of the arrivals sent: the client could not start them on time, for want of a free worker (--concurrency %s) or of processor time",
			ms(f.scheduleLagP99), ms(f.p99), render.FormatShare(f.sent), render.FormatCount(float64(f.concurrency)))
	case has(missed, results.ObjectiveLagP99):
		return results.BreaksPersistLag, fmt.Sprintf("the queue's workers fell behind: persist lag p99 %s (%s at the step below)", ms(f.lag), ms(below.lag))
	case f.waiters >= max(1, int64(f.pool/2)):
		return results.BreaksRowLock, lockText(f)
	case f.poolerWaiting > 0:
		return results.BreaksPooler, fmt.Sprintf("%d clients waited in the pooler for a server connection (longest %s)", f.poolerWaiting, ms(f.poolerWaitMs))
	case f.acquireP99 >= f.p99/2:
		return results.BreaksPool, fmt.Sprintf("requests waited for one of the pool's %d connections: pool wait p99 %s of a p99 of %s", f.pool, ms(f.acquireP99), ms(f.p99))
	case f.waiters > 0 && f.lockWaitMs >= f.p99/4:
		return results.BreaksRowLock, lockText(f)
	}
	return results.BreaksUnclear, fmt.Sprintf("no one cause stands out: p99 %s (%s below), pool wait p99 %s, %d lock waiters at most, longest lock wait %s",
		ms(f.p99), ms(below.p99), ms(f.acquireP99), f.waiters, ms(f.lockWaitMs))
}

func has(m map[string]results.Miss, objective string) bool { _, ok := m[objective]; return ok }

func lockText(f figures) string {
	on := ""
	if f.lockTable != "" {
		on = " on " + f.lockTable
	}
	return fmt.Sprintf("%d sessions queued on a row lock%s at once, with a pool of %d (longest wait %s)", f.waiters, on, f.pool, render.FormatDuration(f.lockWaitMs))
}
