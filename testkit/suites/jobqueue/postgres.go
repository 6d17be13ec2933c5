package jobqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// pgSQL is the lease path on PostgreSQL: a claim and a renewal are one UPDATE … RETURNING
// each, a compacted batch of completions one statement over arrays (unnest), an uncompacted
// one a statement per completion, pipelined in one round trip.
type pgSQL struct {
	one, many string // completeSQL(policy, false), completeSQL(policy, true)
}

// insertSQL inserts job $1; a retry after a COMMIT whose outcome was lost finds it there.
const insertSQL = `INSERT INTO jobs (id, priority, args) VALUES ($1, $2, $3::jsonb) ON CONFLICT (id) DO NOTHING`

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

func (pgSQL) insertSQL() string { return insertSQL }
func (pgSQL) reapSQL() string   { return reapSQL }

func (pgSQL) claim(ctx context.Context, db sqldb.DB, n int, lease time.Duration) ([]job, error) {
	rows, err := db.Query(ctx, claimSQL, n, lease.Milliseconds())
	if err != nil {
		return nil, err
	}
	return scanClaimed(rows)
}

func (pgSQL) renew(ctx context.Context, db sqldb.DB, held []completion, lease time.Duration) (map[int64]bool, error) {
	ids, attempts := completionArgs(held)
	rows, err := db.Query(ctx, renewSQL, ids, attempts, lease.Milliseconds())
	if err != nil {
		return nil, err
	}
	kept := map[int64]bool{}
	var id int64
	err = sqldb.ForEachRow(rows, []any{&id}, func() error { kept[id] = true; return nil })
	return kept, err
}

func (p pgSQL) completeOne(ctx context.Context, db sqldb.DB, c completion) (int64, error) {
	return db.Exec(ctx, p.one, c.ID, c.Attempt)
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

func (p pgSQL) completeBatch(ctx context.Context, tx sqldb.Tx, cs []completion, compact bool) (int64, int, error) {
	if compact {
		ids, attempts := completionArgs(cs)
		n, err := tx.Exec(ctx, p.many, ids, attempts)
		if err != nil {
			return 0, 0, fmt.Errorf("completing %d jobs: %w", len(cs), err)
		}
		return n, 1, nil
	}
	ptx, err := sqldb.RequirePgx(tx) // one completion a statement, pipelined in one round trip
	if err != nil {
		return 0, 0, err
	}
	b := &pgx.Batch{}
	for _, c := range cs {
		b.Queue(p.one, c.ID, c.Attempt)
	}
	res := ptx.SendBatch(ctx, b)
	var completed int64
	for range cs {
		tag, err := res.Exec()
		if err != nil {
			res.Close()
			return 0, 0, fmt.Errorf("completing a job: %w", err)
		}
		completed += tag.RowsAffected()
	}
	if err := res.Close(); err != nil {
		return 0, 0, err
	}
	return completed, len(cs), nil
}

func (pgSQL) keptSQL() string {
	return `SELECT count(*), count(*) FILTER (WHERE state = 'completed'),
		count(*) FILTER (WHERE completions <> 1), coalesce(sum(attempt - 1), 0) FROM jobs`
}

func (pgSQL) archivedSQL() string {
	return `SELECT (SELECT count(*) FROM jobs), count(*), count(DISTINCT id),
		count(*) FILTER (WHERE completions <> 1 OR state <> 'completed'), coalesce(sum(attempt - 1), 0) FROM jobs_archive`
}

// readTables reads the queue's tables' sizes (heap with its TOAST and maps; indexes), dead
// tuples and autovacuum and autoanalyze counts. The admin connection emptied the tables before
// the run: its statistics (the emptying's among them) are flushed first, or a reading before
// the run would still see the last run's dead tuples (PostgreSQL 15+; before, the statistics
// collector has them within half a second).
func (pgSQL) readTables(ctx context.Context, q sqldb.Querier, tables []string) (tableFigures, error) {
	f := tableFigures{tables: tables}
	_, _ = q.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	err := q.QueryRow(ctx, `
		SELECT coalesce(sum(pg_table_size(c.oid)), 0)::int8, coalesce(sum(pg_indexes_size(c.oid)), 0)::int8,
		       coalesce(sum(s.n_dead_tup), 0)::int8, coalesce(sum(s.autovacuum_count), 0)::int8, coalesce(sum(s.autoanalyze_count), 0)::int8
		FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)`, tables).
		Scan(&f.heap, &f.index, &f.dead, &f.av, &f.aan)
	if err != nil {
		return f, fmt.Errorf("reading the queue's tables: %w", err)
	}
	return f, nil
}
