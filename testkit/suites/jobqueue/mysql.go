package jobqueue

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlSQL is the lease path on MySQL 8 and MariaDB 10.6 or later (FOR UPDATE SKIP LOCKED;
// mysql/jobs.sql). What differs from PostgreSQL's, and why:
//   - No UPDATE … RETURNING: a claim is a transaction, a locking read of the jobs it takes
//     (SKIP LOCKED) and an UPDATE of those by id; a renewal is one UPDATE, and only when it
//     renewed fewer jobs than it was given, a read of which it still holds.
//   - No arrays: a batch's jobs are a list of ids and one of (id, attempt) pairs.
//   - No DELETE … RETURNING in MySQL 8, and no statement that both deletes and inserts:
//     archiving is three statements in one transaction — complete the jobs in place (which
//     locks them and counts them), copy them to jobs_archive, delete them.
//   - No pipelining: an uncompacted batch sends its completions one statement after the other.
//   - The workers' sessions run in READ COMMITTED (PostgreSQL's default, and its behaviour
//     here): under REPEATABLE READ a claim's locking read would also lock the gaps next to the
//     jobs it read, and a request's INSERT of a new job would wait for the claim to commit.
//   - The time is UTC_TIMESTAMP(6), whatever the session's time zone.
type mysqlSQL struct{ policy string }

// mysqlSession are the workers' session settings (testkit.PoolOptions.Settings).
var mysqlSession = map[string]string{"transaction_isolation": "'READ-COMMITTED'"}

const mysqlInsert = `INSERT INTO jobs (id, priority, args, run_at, created_at)
VALUES ($1, $2, $3, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE id = id`

func (mysqlSQL) insertSQL() string { return mysqlInsert }

const mysqlReap = `UPDATE jobs SET state = 'available', lease_until = NULL
WHERE state = 'running' AND lease_until < UTC_TIMESTAMP(6)`

func (mysqlSQL) reapSQL() string { return mysqlReap }

// mysqlPick reads, and locks, up to $1 available jobs, the first by priority and run time,
// with what the claim will make of them: their next attempt, and the time they waited.
const mysqlPick = `SELECT id, attempt + 1, priority, CAST(JSON_UNQUOTE(JSON_EXTRACT(args, '$.ms')) AS SIGNED),
	TIMESTAMPDIFF(MICROSECOND, created_at, UTC_TIMESTAMP(6)) / 1000
FROM jobs WHERE state = 'available' AND run_at <= UTC_TIMESTAMP(6)
ORDER BY priority, run_at, id
LIMIT $1
FOR UPDATE SKIP LOCKED`

func (mysqlSQL) claim(ctx context.Context, db sqldb.DB, n int, lease time.Duration) ([]job, error) {
	var held []job
	err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		rows, err := tx.Query(ctx, mysqlPick, n)
		if err != nil {
			return err
		}
		if held, err = scanClaimed(rows); err != nil || len(held) == 0 {
			return err
		}
		args := make([]any, 0, 1+len(held))
		args = append(args, lease.Microseconds())
		for _, j := range held {
			args = append(args, j.ID)
		}
		_, err = tx.Exec(ctx, mysqlStatement("claim", len(held), func(b *strings.Builder) {
			b.WriteString(`UPDATE jobs SET state = 'running', attempt = attempt + 1, claimed_at = UTC_TIMESTAMP(6),
	lease_until = DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? MICROSECOND)
WHERE id IN (`)
			list(b, len(held), "?")
			b.WriteString(")")
		}), args...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return held, nil
}

func (mysqlSQL) renew(ctx context.Context, db sqldb.DB, held []completion, lease time.Duration) (map[int64]bool, error) {
	args := append([]any{lease.Microseconds()}, claimsArgs(held)...)
	n, err := db.Exec(ctx, mysqlStatement("renew", len(held), func(b *strings.Builder) {
		b.WriteString(`UPDATE jobs SET lease_until = DATE_ADD(UTC_TIMESTAMP(6), INTERVAL ? MICROSECOND)`)
		whereClaims(b, "running", len(held))
	}), args...)
	if err != nil {
		return nil, err
	}
	kept := make(map[int64]bool, len(held))
	if n == int64(len(held)) {
		for _, c := range held {
			kept[c.ID] = true
		}
		return kept, nil
	}
	// Some were no longer ours (a later claim holds them): the ones still running under
	// their claim are those it renewed (no claim of ours comes back once lost).
	rows, err := db.Query(ctx, mysqlHeld(len(held)), claimsArgs(held)...)
	if err != nil {
		return nil, err
	}
	var id int64
	err = sqldb.ForEachRow(rows, []any{&id}, func() error { kept[id] = true; return nil })
	return kept, err
}

// mysqlHeld reads which of n (id, attempt) pairs are running under that claim.
func mysqlHeld(n int) string {
	return mysqlStatement("held", n, func(b *strings.Builder) {
		b.WriteString(`SELECT id FROM jobs`)
		whereClaims(b, "running", n)
	})
}

// whereClaims writes the condition on n claims (whereClaims' arguments: claimsArgs): the jobs
// in state that these claims hold. Only the ids are a condition an index can serve, so that
// the primary key finds the rows, and locks no other: the state in a condition of its own
// would let the optimizer read the state's range of an index instead (every running job, each
// of them locked under REPEATABLE READ). Each job's attempt is looked up by a CASE on its id:
// a row constructor's (id, attempt, state) IN (…) took MariaDB 10.11 3.1 s for a batch of
// 1,000 (0.25 s for 300: it grows with the square of the batch), the CASE 0.14 s.
func whereClaims(b *strings.Builder, state string, n int) {
	b.WriteString("\nWHERE id IN (")
	list(b, n, "?")
	b.WriteString(") AND CASE id")
	for range n {
		b.WriteString(" WHEN ? THEN ?")
	}
	b.WriteString(" END = IF(state = '" + state + "', attempt, NULL)")
}

// claimsArgs are whereClaims' arguments for cs: the ids, then each id and attempt.
func claimsArgs(cs []completion) []any {
	out := make([]any, 0, 3*len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	for _, c := range cs {
		out = append(out, c.ID, c.Attempt)
	}
	return out
}

func (m mysqlSQL) completeOne(ctx context.Context, db sqldb.DB, c completion) (int64, error) {
	if m.policy != Archive {
		return db.Exec(ctx, m.completion(1), claimsArgs([]completion{c})...)
	}
	var n int64
	err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		var err error
		n, _, err = m.archive(ctx, tx, []completion{c})
		return err
	})
	return n, err
}

func (m mysqlSQL) completeBatch(ctx context.Context, tx sqldb.Tx, cs []completion, compact bool) (int64, int, error) {
	groups := [][]completion{cs}
	if !compact {
		groups = make([][]completion, len(cs))
		for k := range cs {
			groups[k] = cs[k : k+1]
		}
	}
	var completed int64
	statements := 0
	for _, g := range groups {
		var n int64
		var s int
		var err error
		if m.policy == Archive {
			n, s, err = m.archive(ctx, tx, g)
		} else {
			s = 1
			n, err = tx.Exec(ctx, m.completion(len(g)), claimsArgs(g)...)
		}
		statements += s
		if err != nil {
			return 0, 0, fmt.Errorf("completing %d jobs: %w", len(g), err)
		}
		completed += n
	}
	return completed, statements, nil
}

// completion completes n jobs, (id, attempt) pairs, under keep or delete.
func (m mysqlSQL) completion(n int) string {
	return mysqlStatement("complete-"+m.policy, n, func(b *strings.Builder) {
		if m.policy == Delete {
			b.WriteString(`DELETE FROM jobs`)
		} else {
			b.WriteString(`UPDATE jobs SET state = 'completed', completed_at = UTC_TIMESTAMP(6), lease_until = NULL,
	completions = completions + 1`)
		}
		whereClaims(b, "running", n)
	})
}

// archive moves the jobs of cs whose claim still holds them to jobs_archive, in tx: completed
// in place (keep's statement), copied, deleted. It returns how many and the statements sent.
func (m mysqlSQL) archive(ctx context.Context, tx sqldb.Tx, cs []completion) (int64, int, error) {
	keep := mysqlSQL{policy: Keep}
	args := claimsArgs(cs)
	n, err := tx.Exec(ctx, keep.completion(len(cs)), args...)
	if err != nil || n == 0 {
		return n, 1, err
	}
	copied, err := tx.Exec(ctx, mysqlStatement("archive-copy", len(cs), func(b *strings.Builder) {
		b.WriteString(`INSERT INTO jobs_archive (id, state, priority, run_at, attempt, lease_until, completions, args,
	created_at, claimed_at, completed_at, archived_at)
SELECT id, state, priority, run_at, attempt, lease_until, completions, args,
	created_at, claimed_at, completed_at, UTC_TIMESTAMP(6) FROM jobs`)
		whereClaims(b, "completed", len(cs))
	}), args...)
	if err != nil {
		return 0, 2, err
	}
	deleted, err := tx.Exec(ctx, mysqlStatement("archive-delete", len(cs), func(b *strings.Builder) {
		b.WriteString(`DELETE FROM jobs`)
		whereClaims(b, "completed", len(cs))
	}), args...)
	if err == nil && (copied != n || deleted != n) {
		err = fmt.Errorf("archiving: %d jobs completed, %d copied, %d deleted", n, copied, deleted)
	}
	return n, 3, err
}

// list writes n items, comma-separated.
func list(b *strings.Builder, n int, item string) {
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item)
	}
}

// mysqlStatements are the statements of a list of n items composed so far, by name and n.
var mysqlStatements sync.Map // mysqlStatementKey → string

type mysqlStatementKey struct {
	name string
	n    int
}

// mysqlStatement is the statement name of n items, composed by compose on first use.
func mysqlStatement(name string, n int, compose func(b *strings.Builder)) string {
	key := mysqlStatementKey{name, n}
	if s, ok := mysqlStatements.Load(key); ok {
		return s.(string)
	}
	var b strings.Builder
	compose(&b)
	s, _ := mysqlStatements.LoadOrStore(key, b.String())
	return s.(string)
}

func (mysqlSQL) keptSQL() string {
	return `SELECT COUNT(*), COUNT(CASE WHEN state = 'completed' THEN 1 END),
		COUNT(CASE WHEN completions <> 1 THEN 1 END), CAST(COALESCE(SUM(attempt - 1), 0) AS SIGNED) FROM jobs`
}

func (mysqlSQL) archivedSQL() string {
	return `SELECT (SELECT COUNT(*) FROM jobs), COUNT(*), COUNT(DISTINCT id),
		COUNT(CASE WHEN completions <> 1 OR state <> 'completed' THEN 1 END), CAST(COALESCE(SUM(attempt - 1), 0) AS SIGNED)
		FROM jobs_archive`
}

// readTables reads the tables' data and index sizes from information_schema once ANALYZE TABLE
// has brought InnoDB's statistics up to date (the sizes are its page counts). InnoDB counts no
// dead rows (a deleted row's space is purged in the background, its history server-wide) and
// has no autovacuum: those figures are left out.
func (mysqlSQL) readTables(ctx context.Context, q sqldb.Querier, tables []string) (tableFigures, error) {
	f := tableFigures{tables: tables, noVacuum: true}
	quoted := make([]string, len(tables))
	args := make([]any, len(tables))
	for i, t := range tables {
		quoted[i], args[i] = sqldb.MySQL.QuoteIdent(t), t
	}
	rows, err := q.Query(ctx, "ANALYZE TABLE "+strings.Join(quoted, ", "))
	if err == nil {
		rows.Close() // one row a table, its outcome: the sizes below say what they say
		err = rows.Err()
	}
	if err != nil {
		return f, fmt.Errorf("analysing the queue's tables: %w", err)
	}
	marks := sqldb.Marks(len(tables))
	err = q.QueryRow(ctx, `SELECT CAST(COALESCE(SUM(data_length), 0) AS SIGNED), CAST(COALESCE(SUM(index_length), 0) AS SIGNED)
		FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (`+marks+`)`, args...).
		Scan(&f.heap, &f.index)
	if err != nil {
		return f, fmt.Errorf("reading the queue's tables: %w", err)
	}
	return f, nil
}
