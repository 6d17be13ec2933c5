package jobqueue

import (
	"context"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// dialect is the lease path's SQL in one database's dialect (postgres.go, mysql.go), for one
// --on-complete policy, chosen once per run from Run.Dialect() (dialectOf). The statements
// every dialect writes alike are where they are used (pendingSQL, unfinishedSQL, Persisted's).
type dialect interface {
	// insertSQL inserts job $1 (priority $2, args $3, a JSON text); a retry after a COMMIT whose
	// outcome was lost finds it there.
	insertSQL() string
	// claim claims up to n available jobs for lease, the first by priority and run time,
	// skipping those another worker is claiming, and returns them with the time each waited
	// (the server's clock).
	claim(ctx context.Context, db sqldb.DB, n int, lease time.Duration) ([]job, error)
	// renew extends by lease the lease of the jobs held (ids and attempts) and returns those
	// whose lease it still held.
	renew(ctx context.Context, db sqldb.DB, held []completion, lease time.Duration) (map[int64]bool, error)
	// reapSQL hands back the jobs whose lease ran out: their worker died or stalled.
	reapSQL() string
	// completeOne completes job c, under the policy, if its claim still holds it (a sync
	// worker's completion, committed on its own), and says whether it did (1) or not (0).
	completeOne(ctx context.Context, db sqldb.DB, c completion) (int64, error)
	// completeBatch completes, in tx, the jobs of cs whose claim still holds them: all in one
	// go (compact; cs in id order, each job once) or one completion after the other. It
	// returns how many it completed and how many statements it sent.
	completeBatch(ctx context.Context, tx sqldb.Tx, cs []completion, compact bool) (completed int64, statements int, err error)
	// keptSQL reads jobs under keep: its rows, those completed, those completed other than
	// once, and the claims beyond each job's first.
	keptSQL() string
	// archivedSQL reads the queue under archive: the jobs left, jobs_archive's rows, its
	// distinct ids, its rows not completed once, and the claims beyond each job's first.
	archivedSQL() string
	// readTables reads the queue's tables' figures.
	readTables(ctx context.Context, q sqldb.Querier, tables []string) (tableFigures, error)
}

// dialectOf is d's statements under policy (--on-complete).
func dialectOf(d sqldb.Dialect, policy string) dialect {
	if d == sqldb.MySQL {
		return mysqlSQL{policy: policy}
	}
	return pgSQL{one: completeSQL(policy, false), many: completeSQL(policy, true)}
}

// scanClaimed reads a claim's rows: each job's id, attempt, priority, time to run (ms) and
// time in the queue (ms).
func scanClaimed(rows sqldb.Rows) ([]job, error) {
	var held []job
	var j job
	var waitedMs float64
	err := sqldb.ForEachRow(rows, []any{&j.ID, &j.Attempt, &j.Priority, &j.Ms, &waitedMs}, func() error {
		j.Waited = time.Duration(waitedMs * float64(time.Millisecond))
		held = append(held, j)
		return nil
	})
	return held, err
}
