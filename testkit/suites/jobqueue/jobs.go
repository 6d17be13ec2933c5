package jobqueue

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// What a job is and the SQL of the lease path in the modes of our own (sync, async,
// async-compact): insert, claim, renew, reap, complete.

// jobs generates every request's job. Each property of job i is a pure function of the seed and
// i, so that the river mode inserts the same jobs and verification recomputes them.
type jobs struct {
	seed       uint64
	jobMs      int
	spread     float64
	priorities int
}

// job is one job as a worker holds it: Waited is its time in the queue when its claim was sent
// (claimed), on the server's clock.
type job struct {
	ID       int64
	Attempt  int32
	Priority int16
	Ms       int32
	Waited   time.Duration
	claimed  time.Time
}

// priority is job i's priority, 1 (first) to priorities.
func (g jobs) priority(i int64) int16 {
	return int16(1 + g.draw(i, 1)%uint64(g.priorities))
}

// ms is how long job i runs: --job-ms spread uniformly over ×(1 ± --job-spread).
func (g jobs) ms(i int64) int32 {
	if g.jobMs == 0 {
		return 0
	}
	u := float64(g.draw(i, 2)>>11) / (1 << 53)
	return int32(float64(g.jobMs)*(1+g.spread*(2*u-1)) + 0.5)
}

// longest is the longest any job runs.
func (g jobs) longest() time.Duration {
	return time.Duration(float64(g.jobMs)*(1+g.spread)+0.5) * time.Millisecond
}

// args is job i's payload, the same JSON in every mode: River's river_job.args holds it too.
func (g jobs) args(i int64) string {
	return `{"i": ` + strconv.FormatInt(i, 10) + `, "ms": ` + strconv.Itoa(int(g.ms(i))) + `}`
}

// draw is request i's value in stream salt: 64 bits from splitmix64's finaliser.
func (g jobs) draw(i int64, salt uint64) uint64 {
	x := (g.seed ^ salt*0xd1b54a32d192ed03) + uint64(i)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// insertSQL inserts job $1; a retry after a COMMIT whose outcome was lost finds it there.
const insertSQL = `INSERT INTO jobs (id, priority, args) VALUES ($1, $2, $3::jsonb) ON CONFLICT (id) DO NOTHING`

// insertOp inserts request i's job in its own transaction (Run.SyncTx: the same for every
// mode of our own; the river mode inserts through River's client in the same transaction).
func insertOp(r *testkit.Run, g jobs) testkit.Op {
	return r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		_, err := tx.Exec(ctx, insertSQL, i, g.priority(i), g.args(i))
		return err
	})
}

// claimSQL claims up to $1 available jobs for $2 ms, the first by priority and run time,
// skipping those another worker is claiming, and returns them with the time each waited.
const claimSQL = `
WITH picked AS (
    SELECT id FROM jobs
    WHERE state = 'available' AND run_at <= now()
    ORDER BY priority, run_at, id
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs AS j
SET state = 'running', attempt = j.attempt + 1, claimed_at = now(),
    lease_until = now() + $2 * interval '1 millisecond'
FROM picked
WHERE j.id = picked.id
RETURNING j.id, j.attempt, j.priority, (j.args->>'ms')::int4, (extract(epoch FROM now() - j.created_at) * 1000)::float8`

// renewSQL extends the lease of the jobs a worker still holds ($1 ids, $2 their attempts) by $3
// ms, and returns those whose lease it still held.
const renewSQL = `
UPDATE jobs AS j SET lease_until = now() + $3 * interval '1 millisecond'
FROM unnest($1::int8[], $2::int4[]) AS h(id, attempt)
WHERE j.id = h.id AND j.attempt = h.attempt AND j.state = 'running'
RETURNING j.id`

// reapSQL hands back the jobs whose lease ran out: their worker died or stalled.
const reapSQL = `UPDATE jobs SET state = 'available', lease_until = NULL WHERE state = 'running' AND lease_until < now()`

// Completion policies (--on-complete).
const (
	// Keep marks the job completed and keeps its row (River keeps its rows too).
	Keep = "keep"
	// Delete deletes the job's row.
	Delete = "delete"
	// Archive moves the job's row to jobs_archive (as pgmq archives).
	Archive = "archive"
)

// OnComplete are the --on-complete values, the default first.
var OnComplete = []string{Keep, Delete, Archive}

// completion is what a worker hands the completer for a job it ran: the job and the attempt
// (the claim) that ran it. Only the attempt that holds the lease completes the job: one whose
// lease ran out and was claimed again completes nothing.
type completion struct {
	ID      int64
	Attempt int32
}

func completionKey(c completion) int64 { return c.ID }

// mergeCompletions keeps the later claim's completion of a job that two claims ran (the
// earlier one's lease ran out; only the later one can complete it).
func mergeCompletions(pending *completion, newer completion) {
	if newer.Attempt > pending.Attempt {
		*pending = newer
	}
}

// completeSQL completes, under policy, the jobs whose claim still holds them (its command tag
// counts them): with many, those of unnest($1 ids, $2 attempts), any number in one statement
// (the compacted writer's); else job $1 of attempt $2 (the sync worker's and the uncompacted
// writer's statement per job).
func completeSQL(policy string, many bool) string {
	from, where := "", "j.id = $1 AND j.attempt = $2"
	if many {
		from, where = "unnest($1::int8[], $2::int4[]) AS c(id, attempt)", "j.id = c.id AND j.attempt = c.attempt"
	}
	where += " AND j.state = 'running'"
	switch policy {
	case Delete:
		if many {
			from = " USING " + from
		}
		return "DELETE FROM jobs AS j" + from + "\nWHERE " + where
	case Archive:
		if many {
			from = " USING " + from
		}
		return `WITH done AS (
    DELETE FROM jobs AS j` + from + `
    WHERE ` + where + `
    RETURNING j.*
)
INSERT INTO jobs_archive (id, state, priority, run_at, attempt, lease_until, completions, args, created_at, claimed_at, completed_at)
SELECT id, 'completed', priority, run_at, attempt, NULL, completions + 1, args, created_at, claimed_at, now() FROM done`
	}
	if many {
		from = "\nFROM " + from
	}
	return `UPDATE jobs AS j
SET state = 'completed', completed_at = now(), lease_until = NULL, completions = j.completions + 1` + from + `
WHERE ` + where
}

// completionArgs are the arrays completeSQL takes.
func completionArgs(cs []completion) (ids []int64, attempts []int32) {
	ids, attempts = make([]int64, len(cs)), make([]int32, len(cs))
	for k, c := range cs {
		ids[k], attempts[k] = c.ID, c.Attempt
	}
	return ids, attempts
}

// completionWriter is the completion queue's TxWriter: compacted, the batch's completions in one
// array statement (its jobs in id order, so that two batches lock rows in one order; sql is
// completeSQL(policy, true)); not, one statement per completion (completeSQL(policy, false)),
// pipelined in one round trip. Completions that find their claim
// gone (a later claim holds the job, or it is completed) complete nothing.
type completionWriter struct {
	sql     string
	compact bool
	done    func(completed int) // counts the jobs the batch completed (in its transaction)
}

func (w completionWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, cs []completion) (int, error) {
	if w.compact {
		ids, attempts := completionArgs(cs)
		n, err := tx.Exec(ctx, w.sql, ids, attempts)
		if err != nil {
			return 0, fmt.Errorf("completing %d jobs: %w", len(cs), err)
		}
		w.done(int(n))
		return 1, nil
	}
	ptx, err := sqldb.RequirePgx(tx) // one completion a statement, pipelined in one round trip
	if err != nil {
		return 0, err
	}
	b := &pgx.Batch{}
	for _, c := range cs {
		b.Queue(w.sql, c.ID, c.Attempt)
	}
	res := ptx.SendBatch(ctx, b)
	completed := 0
	for range cs {
		tag, err := res.Exec()
		if err != nil {
			res.Close()
			return 0, fmt.Errorf("completing a job: %w", err)
		}
		completed += int(tag.RowsAffected())
	}
	if err := res.Close(); err != nil {
		return 0, err
	}
	w.done(completed)
	return len(cs), nil
}

// compareIDs orders a compacted batch's jobs.
func compareIDs(a, b int64) int { return cmp.Compare(a, b) }
