package engine

import (
	"context"
	"slices"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
)

// The engine's side of the Redis backend: when to open Redis, and how a process's --role
// changes the run's load and verification. Package redisrun does the work (the Redis target,
// the producers' registration and outcomes, the stream's run-wide counters).

// openRedis starts or reaches the Redis the flags choose, when a run needs one, and records
// the queue backend (and Redis) in the report's environment.
func (e *engine) openRedis(ctx context.Context) error {
	c := e.cfg
	if slices.ContainsFunc(c.Modes, testkit.Mode.Async) {
		e.report.Environment.QueueBackend = c.QueueBackend
	}
	if c.QueueBackend != redisrun.BackendRedis || !slices.ContainsFunc(c.Modes, testkit.Mode.Async) {
		return nil
	}
	t, err := redisrun.Open(ctx, c.StreamConfig, c.QueueWorkers, e.redisRoute())
	if err != nil {
		if c.RedisURL != "" {
			err = usageError{err} // the server given is unreachable: bad input, before any run
		}
		return err
	}
	e.redis = t
	env := &e.report.Environment
	env.RedisMode, env.RedisVersion = t.Mode, t.Version
	env.RedisTopology = &results.RedisTopology{Cluster: t.IsCluster(), Masters: max(t.Masters, 1), ReplicasPerMaster: t.Replicas, StreamShards: c.StreamShards}
	return nil
}

func (e *engine) closeRedis() error {
	err := e.redis.Close()
	e.redis = nil
	return err
}

// runLoad runs the load in this process's role: a consumer runs none, a producer registers
// first and records its outcomes after.
func (e *engine) runLoad(r *run, lcfg load.Config, wl *testkit.Workload) (*load.Result, error) {
	sr := r.Backend.StreamOf()
	switch {
	case sr != nil && sr.Role == redisq.RoleConsumer:
		return redisrun.EmptyResult(), nil
	case sr != nil && sr.Role == redisq.RoleProducer:
		ctx := e.hardCtx
		if err := sr.Register(ctx, r.Pool); err != nil {
			return nil, err
		}
		res, err := load.Run(e.stopCtx, lcfg, wl.Op)
		if err != nil {
			return nil, err
		}
		if err := sr.Finish(ctx, r.Pool, res); err != nil {
			return nil, err
		}
		return res, nil
	}
	return load.Run(e.stopCtx, lcfg, wl.Op)
}

// ownPartOnly is the suite as seen by a producer or a plain consumer: the database is not
// theirs to verify (the run is not over, or someone else verifies it), so the suite's
// checks and reconciliation are left out and only the role's checks remain.
type ownPartOnly struct{ testkit.Suite }

func (ownPartOnly) Verify(context.Context, *testkit.Run, testkit.Result) ([]results.Check, error) {
	return nil, nil
}

// verification returns what this process verifies the run with: the suite (or not, see
// ownPartOnly), the request outcomes to check against, and the checks of its role and of the
// stream.
func (e *engine) verification(ctx context.Context, r *run, res *load.Result) (testkit.Suite, *load.Result, []results.Check, error) {
	sr := r.Backend.StreamOf()
	if sr == nil {
		return e.suite, res, nil, nil
	}
	c := r.suite.NewChecks()
	switch {
	case sr.Role == redisq.RoleProducer:
		accepted, err := sr.Accepted(ctx, r.Pool)
		if err != nil {
			return nil, nil, nil, err
		}
		c.Int("producer: accepted requests recorded for the consumers", res.Outcomes.Count(load.Succeeded), accepted)
		return ownPartOnly{e.suite}, res, c.List(), nil
	case sr.Role == redisq.RoleConsumer:
		registered, finished, err := sr.Producers(ctx, r.Pool)
		if err != nil {
			return nil, nil, nil, err
		}
		c.Int("producers finished (of those registered)", int64(registered), int64(finished))
		if !e.cfg.Verify {
			rs, err := sr.RunStats(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			c.Int("stream: entries left unacknowledged", 0, rs.Length)
			return ownPartOnly{e.suite}, res, c.List(), nil
		}
		if res, err = sr.ProducersResult(ctx, r.Pool); err != nil {
			return nil, nil, nil, err
		}
		// The suite verifies the run-wide requests, not this process's --requests (a suite
		// that seeds per request, such as settlement, counts its seed from it).
		r.Requests = res.Outcomes.Len()
	}
	if err := streamChecks(ctx, r, sr, c); err != nil {
		return nil, nil, nil, err
	}
	return e.suite, res, c.List(), nil
}

// streamChecks compares the run-wide counters every process of the run kept in Redis with
// the database: every accepted entry acknowledged, and every id in queue_applied_entries
// acknowledged exactly once as applied, duplicate or written on its own.
func streamChecks(ctx context.Context, r *run, sr *redisrun.Stream, c *testkit.Checks) error {
	rs, err := sr.RunStats(ctx)
	if err != nil {
		return err
	}
	ids, err := sr.AppliedEntries(ctx, r.Target.Admin())
	if err != nil {
		return err
	}
	c.Int("stream: entries left unacknowledged", 0, rs.Length)
	c.Int("stream: acknowledged = accepted (run-wide)", rs.Accepted, rs.Acked)
	c.Int("stream: entries dead-lettered", 0, rs.DeadLettered)
	c.Int("stream: applied entry ids = applied + duplicate + fallback acknowledgements", rs.Applied+rs.Duplicate+rs.Fallback, ids)
	return nil
}
