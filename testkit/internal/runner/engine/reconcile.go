package engine

import (
	"context"
	"errors"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// reconcile accounts for every request layer by layer — attempted, acknowledged, failed,
// outcome unknown (looked up, not guessed), persisted, lost, duplicated — and returns which
// requests the suite's expectations must include: those acknowledged, plus the unknown ones
// found in the database.
func reconcile(ctx context.Context, s testkit.Suite, r *testkit.Run, res *load.Result) (*results.Reconciliation, testkit.Result, error) {
	outcomes := res.Outcomes
	n := outcomes.Len()
	rec, ok := s.(testkit.Reconciler)
	var counts []int32
	var err error
	if ok {
		counts, err = rec.Persisted(ctx, r, n)
	}
	if !ok || errors.Is(err, testkit.ErrNothingToReconcile) {
		return nil, applied{n, func(i int64) bool { return outcomes.Get(i) == load.Succeeded }, outcomes.Count(load.UnknownOutcome)}, nil
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
	}, 0}, nil
}

// applied is the Result a suite verifies against; unresolved counts the unknown outcomes no
// Reconciler looked up (testkit.Unresolved).
type applied struct {
	n          int64
	must       func(i int64) bool
	unresolved int64
}

func (a applied) Len() int64           { return a.n }
func (a applied) Applied(i int64) bool { return a.must(i) }
func (a applied) Unresolved() int64    { return a.unresolved }

// reconciliationChecks turns the must-be-zero lines into checks.
func reconciliationChecks(c *results.Reconciliation, checks *testkit.Checks) {
	checks.Int("reconciliation: lost (acknowledged, not persisted)", 0, c.Lost)
	checks.Int("reconciliation: duplicated (applied more than once)", 0, c.Duplicated)
	checks.Int("reconciliation: failed requests found persisted", 0, c.FailedButPersisted)
}
