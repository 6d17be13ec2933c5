package engine

import (
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/advise"
)

// The runs of an invocation come from a source of trials: the fixed list of the flags (every
// mode × every rung of the ladders × every repetition), or, with --advise, a search that
// proposes each next trial from the runs so far (package advise). The engine runs each trial the
// same way (runTrials, engine.go): on fresh state, verified, into the report.

// trial is one run to make: a mode at a rung, for length (0: as the plan says), and its
// repetition (0: not repeated).
type trial struct {
	mode       testkit.Mode
	rung       results.Position
	length     time.Duration
	repetition int
}

// trialSource hands out the invocation's trials.
type trialSource interface {
	// next is the next trial, elapsed into the invocation (false: none left).
	next(elapsed time.Duration) (trial, bool)
	// observe takes the run of the last trial, its index in the report, and what it took.
	observe(index int, run results.Run, took time.Duration)
	// stop says no more trials will run (a signal, a broken run).
	stop()
}

// trialSource is the invocation's: the search of --advise, else the fixed list.
func (e *engine) trialSource() trialSource {
	c := e.cfg
	if c.Advice.On {
		s := &search{e: e, s: advise.New(advise.Spec{Modes: c.Modes, Space: c.Space(), Objectives: c.Advice.Objectives,
			Rate: c.Rate, Concurrency: c.Concurrency, Length: c.Duration, Budget: c.Advice.Budget})}
		e.advice = s.s
		return s
	}
	var list []trial
	for _, mode := range c.Modes {
		for _, rung := range c.Rungs() { // slot counts × (ladder levels or rates)
			for rep := 1; rep <= c.Repeat; rep++ {
				t := trial{mode: mode, rung: rung}
				if c.Repeat > 1 {
					t.repetition = rep
				}
				list = append(list, t)
			}
		}
	}
	return &fixedTrials{list: list}
}

// fixedTrials is the flags' list of runs.
type fixedTrials struct{ list []trial }

func (f *fixedTrials) next(time.Duration) (trial, bool) {
	if len(f.list) == 0 {
		return trial{}, false
	}
	t := f.list[0]
	f.list = f.list[1:]
	return t, true
}

func (*fixedTrials) observe(int, results.Run, time.Duration) {}
func (f *fixedTrials) stop()                                 { f.list = nil }

// search is the search of --advise as a source of trials; each trial's outcome is a line on
// stderr.
type search struct {
	e *engine
	s *advise.Search
	t advise.Trial
}

func (s *search) next(elapsed time.Duration) (trial, bool) {
	t, ok := s.s.Next(elapsed)
	s.t = t
	return trial{mode: t.Mode, rung: t.At, length: t.Length}, ok
}

func (s *search) observe(index int, run results.Run, took time.Duration) {
	outcome := "held"
	if missed := s.s.Observe(index, run, took); missed != "" {
		outcome = missed
	}
	fmt.Fprintf(s.e.stderr, "%s: advise: run %d, %s %s for %s: %s\n", s.e.info.Name, index+1, s.t.Phase,
		run.Label(), s.t.Length, outcome)
}

func (s *search) stop() { s.s.Stop() }

// finishAdvice records what the search found in the report, and the time it took.
func (e *engine) finishAdvice() {
	if e.advice == nil {
		return
	}
	a := e.advice.Advice(e.report.Runs)
	a.UsedMs = results.Milliseconds(time.Since(e.started))
	e.report.Advice = a
}

// adviceExit is the exit line of an advice that failed ("" when it answered and no run's check
// failed): no configuration held, the search could not decide, or a check failed.
func adviceExit(r *results.Report) string {
	for _, run := range r.Runs {
		for _, c := range run.Verification.Checks {
			if c.State == results.CheckFailed {
				return notVerified(r)[0]
			}
		}
	}
	switch r.Advice.Outcome {
	case results.AdviceAnswer:
		return ""
	case results.AdviceNoneHolds:
		return "no configuration held the objectives (the closest is named above)"
	case results.AdviceCannotDecide:
		return "cannot decide within --advise-budget (what it would run next is named above)"
	}
	return "the search was stopped before it decided"
}
