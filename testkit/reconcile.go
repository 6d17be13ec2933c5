package testkit

import (
	"context"
	"errors"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
)

// Reconciler is a suite whose writes can be found per request in the database.
type Reconciler interface {
	// Persisted returns, for request indexes 0..n-1, how many times each request's write is
	// in the database (0: not there; 1: once; more: applied more than once).
	Persisted(ctx context.Context, r *Run, n int64) ([]int32, error)
}

// ErrNothingToReconcile is what Persisted returns for a run whose requests write nothing
// (e.g. a suite's persistence level "none"): the run is then accounted like a suite without
// a Reconciler, instead of every request looking lost.
var ErrNothingToReconcile = errors.New("testkit: the run persists nothing per request")

// reconcile accounts for every request layer by layer — attempted, acknowledged, failed,
// outcome unknown (looked up, not guessed), persisted, lost, duplicated — and returns which
// requests the suite's expectations must include: those acknowledged, plus the unknown ones
// found in the database.
func reconcile(ctx context.Context, s Suite, r *Run, res *load.Result) (*results.Reconciliation, Result, error) {
	outcomes := res.Outcomes
	n := outcomes.Len()
	rec, ok := s.(Reconciler)
	var counts []int32
	var err error
	if ok {
		counts, err = rec.Persisted(ctx, r, n)
	}
	if !ok || errors.Is(err, ErrNothingToReconcile) {
		return nil, applied{n, func(i int64) bool { return outcomes.Get(i) == load.Succeeded }}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	persistedAt := func(i int64) int32 {
		if i < int64(len(counts)) {
			return counts[i]
		}
		return 0
	}
	var c results.Reconciliation
	for i := int64(0); i < n; i++ {
		o := outcomes.Get(i)
		p := persistedAt(i)
		if o != load.NotAttempted {
			c.Attempted++
		}
		if p > 0 {
			c.Persisted++
		}
		if p > 1 {
			c.Duplicated++
		}
		switch o {
		case load.Succeeded:
			c.Acknowledged++
			if p == 0 {
				c.Lost++
			}
		case load.Failed:
			c.Failed++
			if p > 0 {
				c.FailedButPersisted++
			}
		case load.UnknownOutcome:
			c.OutcomeUnknown++
			if p > 0 {
				c.UnknownPersisted++
			} else {
				c.UnknownNotPersisted++
			}
		case load.NotAttempted:
			if p > 0 {
				c.FailedButPersisted++ // written without being attempted: a bug to surface
			}
		}
	}
	return &c, applied{n, func(i int64) bool {
		switch outcomes.Get(i) {
		case load.Succeeded:
			return true
		case load.UnknownOutcome:
			return persistedAt(i) > 0
		}
		return false
	}}, nil
}

// applied is the Result a suite verifies against.
type applied struct {
	n    int64
	must func(i int64) bool
}

func (a applied) Len() int64           { return a.n }
func (a applied) Applied(i int64) bool { return a.must(i) }

// reconciliationChecks turns the must-be-zero lines into checks.
func reconciliationChecks(c *results.Reconciliation, checks *Checks) {
	checks.Int("reconciliation: lost (acknowledged, not persisted)", 0, c.Lost)
	checks.Int("reconciliation: duplicated (applied more than once)", 0, c.Duplicated)
	checks.Int("reconciliation: failed requests found persisted", 0, c.FailedButPersisted)
}
