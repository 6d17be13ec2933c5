package testkit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/load"
)

// A run split over processes (--role producer / consumer, on the Redis backend):
//
//   - Every process opens the same --postgres-url, --schema and --redis-url. The first one
//     creates the schema, resets and seeds it and starts the stream afresh; the others join
//     with --reuse-schema and touch neither.
//   - A producer registers in queue_producers (its id, first request index and count), runs
//     the load, and once every record it offered has Redis's answer records each request's
//     outcome there and marks itself finished. Producer k's requests are the run-wide indexes
//     [k×requests, (k+1)×requests); ranges must not overlap, which registration checks.
//   - A consumer runs no load. It consumes until the run is over: --expect-producers
//     producers have registered, all registered producers have finished, and the stream
//     holds no entry (every entry acknowledged or dead-lettered, by any consumer).
//   - A consumer with --verify then checks the database against the union of the producers'
//     outcomes, as the run of a single process would be checked, plus the run-wide stream
//     counters. Producers and plain consumers check only their own part.

// runLoad runs the load in this process's role: a consumer runs none, a producer registers
// first and records its outcomes after.
func (e *engine) runLoad(r *Run, lcfg load.Config, wl *Workload) (*load.Result, error) {
	sr := wl.Queue.streamRunOf()
	switch {
	case sr != nil && sr.role == redisq.RoleConsumer:
		return emptyResult(), nil
	case sr != nil && sr.role == redisq.RoleProducer:
		ctx := e.hardCtx
		if err := registerProducer(ctx, r, sr); err != nil {
			return nil, err
		}
		res, err := load.Run(e.stopCtx, lcfg, wl.Op)
		if err != nil {
			return nil, err
		}
		// Every Enqueue returned only with Redis's answer: what the outcomes say is final.
		if err := finishProducer(ctx, r, sr, res); err != nil {
			return nil, err
		}
		return res, nil
	}
	return load.Run(e.stopCtx, lcfg, wl.Op)
}

func (h *QueueHandle) streamRunOf() *streamRun {
	if h == nil {
		return nil
	}
	return h.stream
}

func emptyResult() *load.Result {
	now := time.Now()
	return &load.Result{Start: now, MeasureStart: now, End: now, ErrorCounts: map[string]int64{},
		Latency: hist.New(), AcquireWait: hist.New(), Outcomes: load.NewOutcomes(0)}
}

func registerProducer(ctx context.Context, r *Run, sr *streamRun) error {
	id := r.Config.ProducerID
	return pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
		// One registration at a time, so that two overlapping ranges cannot both pass the check.
		if _, err := tx.Exec(ctx, `LOCK TABLE queue_producers IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		var other int
		err := tx.QueryRow(ctx, `SELECT producer_id FROM queue_producers
			WHERE stream = $1 AND (producer_id = $2 OR (first_index < $3::int8 + $4::int8 AND $3::int8 < first_index + requests))`,
			sr.key, id, sr.offset, r.Requests).Scan(&other)
		switch {
		case err == nil:
			return fmt.Errorf("--producer-id %d: producer %d of this run already covers some of the request indexes [%d, %d) (give every producer its own id and the same --requests)",
				id, other, sr.offset, sr.offset+r.Requests)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("registering the producer: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO queue_producers (stream, producer_id, first_index, requests) VALUES ($1, $2, $3, $4)`,
			sr.key, id, sr.offset, r.Requests)
		return err
	})
}

func finishProducer(ctx context.Context, r *Run, sr *streamRun, res *load.Result) error {
	outcomes := make([]byte, r.Requests)
	var accepted int64
	res.Outcomes.Each(func(i int64, o load.Outcome) {
		if i < r.Requests {
			outcomes[i] = byte(o)
			if o == load.Succeeded {
				accepted++
			}
		}
	})
	tag, err := r.Pool.Exec(context.WithoutCancel(ctx), `UPDATE queue_producers SET finished_at = now(), accepted = $3, outcomes = $4
		WHERE stream = $1 AND producer_id = $2`, sr.key, r.Config.ProducerID, accepted, outcomes)
	if err == nil && tag.RowsAffected() != 1 {
		err = errors.New("its registration is gone (was the schema reset by another process?)")
	}
	if err != nil {
		return fmt.Errorf("recording the producer's outcomes: %w", err)
	}
	return nil
}

// producerState counts the run's producers.
func producerState(ctx context.Context, r *Run, sr *streamRun) (registered, finished int, err error) {
	err = r.Pool.QueryRow(ctx, `SELECT count(*), count(finished_at) FROM queue_producers WHERE stream = $1`, sr.key).
		Scan(&registered, &finished)
	return registered, finished, err
}

// waitForProducers returns once expect producers have registered and all registered ones
// have finished: from then on nothing new enters the stream.
func waitForProducers(ctx context.Context, r *Run, sr *streamRun, expect int) error {
	for {
		registered, finished, err := producerState(ctx, r, sr)
		if err == nil && registered >= expect && finished == registered {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("%d of %d expected producers registered, %d finished", registered, expect, finished)
			}
			return fmt.Errorf("waiting for the producers: %w: %w", err, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// producersResult rebuilds the outcome of every run-wide request from the producers'
// records, for the verifying consumer.
func producersResult(ctx context.Context, r *Run, sr *streamRun) (*load.Result, error) {
	rows, err := r.Pool.Query(ctx, `SELECT first_index, requests, outcomes FROM queue_producers
		WHERE stream = $1 AND outcomes IS NOT NULL ORDER BY first_index`, sr.key)
	if err != nil {
		return nil, fmt.Errorf("reading the producers' outcomes: %w", err)
	}
	type producer struct {
		first, n int64
		outcomes []byte
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (producer, error) {
		var p producer
		return p, row.Scan(&p.first, &p.n, &p.outcomes)
	})
	if err != nil {
		return nil, fmt.Errorf("reading the producers' outcomes: %w", err)
	}
	res := emptyResult()
	for _, p := range list {
		res.Outcomes.Set(p.first+p.n-1, load.NotAttempted) // sets Len; the outcomes follow
		for i, o := range p.outcomes {
			if o != byte(load.NotAttempted) {
				res.Outcomes.Set(p.first+int64(i), load.Outcome(o))
			}
		}
	}
	return res, nil
}

// ownPartOnly is the suite as seen by a producer or a plain consumer: the database is not
// theirs to verify (the run is not over, or someone else verifies it), so the suite's
// checks and reconciliation are left out and only the role's checks remain.
type ownPartOnly struct{ Suite }

func (ownPartOnly) Verify(context.Context, *Run, *load.Result) ([]results.Check, error) {
	return nil, nil
}

// verification returns what this process verifies the run with: the suite (or not, see
// ownPartOnly), the request outcomes to check against, and the checks of its role and of the
// stream.
func (e *engine) verification(ctx context.Context, r *Run, wl *Workload, res *load.Result) (Suite, *load.Result, []results.Check, error) {
	sr := wl.Queue.streamRunOf()
	if sr == nil {
		return e.suite, res, nil, nil
	}
	c := r.NewChecks()
	switch {
	case sr.role == redisq.RoleProducer:
		var accepted int64
		err := r.Pool.QueryRow(ctx, `SELECT coalesce(accepted, -1) FROM queue_producers WHERE stream = $1 AND producer_id = $2`,
			sr.key, r.Config.ProducerID).Scan(&accepted)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading the producer's record: %w", err)
		}
		c.Int("producer: accepted requests recorded for the consumers", res.Outcomes.Count(load.Succeeded), accepted)
		return ownPartOnly{e.suite}, res, c.List(), nil
	case sr.role == redisq.RoleConsumer:
		registered, finished, err := producerState(ctx, r, sr)
		if err != nil {
			return nil, nil, nil, err
		}
		c.Int("producers finished (of those registered)", int64(registered), int64(finished))
		if !r.Config.Verify {
			rs, err := sr.runStats(ctx)
			if err != nil {
				return nil, nil, nil, err
			}
			c.Int("stream: entries left unacknowledged", 0, rs.Length)
			return ownPartOnly{e.suite}, res, c.List(), nil
		}
		if res, err = producersResult(ctx, r, sr); err != nil {
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
func streamChecks(ctx context.Context, r *Run, sr *streamRun, c *Checks) error {
	rs, err := sr.runStats(ctx)
	if err != nil {
		return err
	}
	ids, err := QueryInt(ctx, r.Admin, `SELECT count(*) FROM queue_applied_entries WHERE stream = $1`, sr.key)
	if err != nil {
		return err
	}
	c.Int("stream: entries left unacknowledged", 0, rs.Length)
	c.Int("stream: acknowledged = accepted (run-wide)", rs.Accepted, rs.Acked)
	c.Int("stream: entries dead-lettered", 0, rs.DeadLettered)
	c.Int("stream: applied entry ids = applied + duplicate + fallback acknowledgements", rs.Applied+rs.Duplicate+rs.Fallback, ids)
	return nil
}
