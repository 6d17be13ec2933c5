package jobqueue

import (
	"cmp"
	"context"
	"strconv"
	"time"

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

// insertOp inserts request i's job in its own transaction (Run.SyncTx: the same for every
// mode of our own; the river mode inserts through River's client in the same transaction).
func insertOp(r *testkit.Run, g jobs, d dialect) testkit.Op {
	insert := d.insertSQL()
	return r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		_, err := tx.Exec(ctx, insert, i, g.priority(i), g.args(i))
		return err
	})
}

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

// completionWriter is the completion queue's TxWriter: it completes a batch's completions
// under the run's policy (dialect.completeBatch), compacted (the batch's jobs in id order, so
// that two batches lock rows in one order) or one statement per completion. Completions that
// find their claim gone (a later claim holds the job, or it is completed) complete nothing.
type completionWriter struct {
	sql     dialect
	compact bool
	done    func(completed int) // counts the jobs the batch completed (in its transaction)
}

func (w completionWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, cs []completion) (int, error) {
	completed, statements, err := w.sql.completeBatch(ctx, tx, cs, w.compact)
	if err != nil {
		return 0, err
	}
	w.done(int(completed))
	return statements, nil
}

// compareIDs orders a compacted batch's jobs.
func compareIDs(a, b int64) int { return cmp.Compare(a, b) }
