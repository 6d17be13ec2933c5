package engine

import (
	"context"
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
)

// The engine's side of the runs' queues: their backend is chosen once (package redisrun: the
// in-process queue, or a Redis stream in this process's role), and each run's is asked what
// this process runs and verifies (package backend's Backend), never which one it is.

// openQueues opens what the flags choose for the runs' queues, and records it in the report's
// environment.
func (e *engine) openQueues(ctx context.Context) error {
	c := e.cfg
	qs, err := redisrun.Choose(ctx, c.Streams(), c.Role, slices.ContainsFunc(c.Modes, testkit.Mode.Async),
		!c.Joining(e.target), c.QueueWorkers, e.net.RedisRoute(), &e.report.Environment)
	if err != nil {
		if c.RedisURL != "" {
			err = usageError{err} // the server given is unreachable: bad input, before any run
		}
		return err
	}
	e.queues = qs
	return nil
}

// ownPartOnly is the suite as seen by a producer or a plain consumer: the database is not
// theirs to verify (the run is not over, or someone else verifies it), so the suite's
// checks and reconciliation are left out and only the backend's checks remain.
type ownPartOnly struct{ testkit.Suite }

func (ownPartOnly) Verify(context.Context, *testkit.Run, testkit.Result) ([]results.Check, error) {
	return nil, nil
}

// verification returns what this process verifies the run with: the suite (or not, see
// ownPartOnly), the request outcomes to check against, and the backend's own checks.
func (e *engine) verification(ctx context.Context, r *run, res *load.Result) (testkit.Suite, *load.Result, []results.Check, error) {
	c := r.suite.NewChecks()
	res, ownPart, err := r.backend.Verification(ctx, r.Env, res, c.Int)
	if err != nil {
		return nil, nil, nil, err
	}
	if ownPart {
		return ownPartOnly{e.suite}, res, c.List(), nil
	}
	return e.suite, res, c.List(), nil
}
