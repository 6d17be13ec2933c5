package jobqueue

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Check names the summary and the tests read back.
const (
	checkReruns      = "re-runs = jobs the killed workers held"
	checkRerunsCover = "re-runs cover the jobs the killed workers held (a fault lost claims too)"
	checkTwice       = "jobs run to their end more than once"
)

// Persisted counts, per request, the jobs it inserted that the database holds (a job is its
// request's write): River's by their args, ours by id in the jobs table or its archive. A
// deleted job leaves no row: its request's job is found when a worker claimed it (a claim
// returns only what was inserted and committed).
func (s *Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	counts := make([]int32, n)
	add := func(sql string) error {
		rows, err := r.Admin().Query(ctx, sql)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var i, c int64
			if err := rows.Scan(&i, &c); err != nil {
				return err
			}
			if i < 0 || i >= n {
				return fmt.Errorf("a job of request %d, beyond the %d requests", i, n)
			}
			counts[i] += int32(c)
		}
		return rows.Err()
	}
	var err error
	switch {
	case r.Mode() == River:
		err = add(`SELECT (args->>'i')::int8, count(*) FROM river_job GROUP BY 1`)
	default:
		if err = add(`SELECT id, 1 FROM jobs`); err == nil {
			err = add(`SELECT id, count(*) FROM jobs_archive GROUP BY id`)
		}
		if rn := s.runOf(r); err == nil && rn != nil && rn.st.policy == Delete {
			for i := range n {
				if counts[i] == 0 && rn.st.tally.at(i).claims.Load() > 0 {
					counts[i] = 1
				}
			}
		}
	}
	return counts, err
}

// Verify checks that every job that must exist (res.Applied) was completed exactly once — in
// the table as --on-complete leaves it, and by the workers' tally: run to its end once — and
// that the jobs run again are the jobs the killed workers held.
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	rn := s.runOf(r)
	if rn == nil {
		return nil, fmt.Errorf("no workload for this run")
	}
	st, c := rn.st, r.NewChecks()
	n := res.Len()
	var want int64
	for i := range n {
		if res.Applied(i) {
			want++
		}
	}
	admin := r.Admin()
	var reruns int64
	var err error
	switch {
	case r.Mode() == River:
		reruns, err = verifyRiver(ctx, admin, c, want, st)
	case st.policy == Keep:
		reruns, err = verifyKept(ctx, admin, rn.sql, c, want)
	case st.policy == Archive:
		reruns, err = verifyArchived(ctx, admin, rn.sql, c, want)
	default:
		err = verifyDeleted(ctx, admin, c)
	}
	if err != nil {
		return nil, err
	}
	t := st.tally.count(n, res.Applied)
	if r.Mode() != River && st.policy == Delete {
		reruns = t.extraClaims // the rows are gone: the workers' own count
	}
	st.reruns.Store(reruns)
	c.Int(checkTwice, 0, t.finishedTwice)
	c.Int("jobs never run to their end", 0, t.neverFinished)
	c.Int("jobs claimed that no acknowledged or found insert made", 0, t.strays)
	errs := st.errorsAtDone.Load()
	if st.done.Load() == 0 {
		errs = st.errors.Load()
	}
	if held := st.held.Load(); errs == 0 {
		c.Int(checkReruns, held, reruns)
		c.Int("re-runs the workers saw = re-runs the table holds", reruns, t.extraClaims)
	} else {
		// A claim whose reply a fault lost leaves its jobs to run again after their lease,
		// unseen by any worker.
		c.Text(checkRerunsCover, "true", strconv.FormatBool(reruns >= held))
	}
	return c.List(), nil
}

// verifyKept: every job that must exist is a row, completed once.
func verifyKept(ctx context.Context, admin sqldb.Querier, d dialect, c *testkit.Checks, want int64) (reruns int64, err error) {
	var rows, completed, multi int64
	err = admin.QueryRow(ctx, d.keptSQL()).Scan(&rows, &completed, &multi, &reruns)
	if err != nil {
		return 0, fmt.Errorf("counting jobs: %w", err)
	}
	c.Int("jobs rows = jobs inserted", want, rows)
	c.Int("jobs completed", want, completed)
	c.Int("jobs completed other than once (completions ≠ 1)", 0, multi)
	return reruns, nil
}

// verifyArchived: no job left; every job that must exist archived once, completed once.
func verifyArchived(ctx context.Context, admin sqldb.Querier, d dialect, c *testkit.Checks, want int64) (reruns int64, err error) {
	var left, rows, ids, multi int64
	err = admin.QueryRow(ctx, d.archivedSQL()).Scan(&left, &rows, &ids, &multi, &reruns)
	if err != nil {
		return 0, fmt.Errorf("counting archived jobs: %w", err)
	}
	c.Int("jobs left in the queue", 0, left)
	c.Int("jobs_archive rows = jobs inserted", want, rows)
	c.Int("jobs archived (distinct ids)", want, ids)
	c.Int("jobs archived other than completed once", 0, multi)
	return reruns, nil
}

// verifyDeleted: no job left (a deleted row cannot be deleted twice; the tally says each ran
// to its end once).
func verifyDeleted(ctx context.Context, admin sqldb.Querier, c *testkit.Checks) error {
	left, err := testkit.QueryInt(ctx, admin, `SELECT count(*) FROM jobs`)
	if err != nil {
		return err
	}
	c.Int("jobs left in the queue", 0, left)
	return nil
}

// verifyRiver: every job that must exist is one river_job row, completed (River keeps them).
func verifyRiver(ctx context.Context, admin sqldb.Querier, c *testkit.Checks, want int64, st *runState) (reruns int64, err error) {
	var rows, completed, rescued int64
	err = admin.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'completed'), coalesce(sum(attempt - 1), 0),
		coalesce(sum((metadata->>'river:rescue_count')::int8), 0) FROM river_job`).Scan(&rows, &completed, &reruns, &rescued)
	if err != nil {
		return 0, fmt.Errorf("counting river_job: %w", err)
	}
	st.rescued.Store(rescued)
	c.Int("river_job rows = jobs inserted", want, rows)
	c.Int("river_job rows completed", want, completed)
	return reruns, nil
}
