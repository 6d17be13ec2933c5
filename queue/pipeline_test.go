package queue

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// orderWriter logs each batch with a COPY in a savepoint (as the suites claim their sources),
// then adds each slot's delta and appends the sequence range it covers to the slot's row,
// addressing rows by key only, as a writer under Options.Pipeline must: the ranges then show
// the order in which the slot's batches were applied.
type orderWriter struct{ table string }

func (w orderWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	sp, err := pgxOf(tx).Begin(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := sp.CopyFrom(ctx, pgx.Identifier{w.table + "_log"}, []string{"slot", "first"},
		pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) { return []any{recs[i].Slot, recs[i].First}, nil })); err != nil {
		return 1, err
	}
	if err := sp.Commit(ctx); err != nil {
		return 1, err
	}
	ids, firsts, lasts, sums := make([]int64, len(recs)), make([]int64, len(recs)), make([]int64, len(recs)), make([]int64, len(recs))
	for i, r := range recs {
		ids[i], firsts[i], lasts[i], sums[i] = int64(r.Slot), int64(r.First), int64(r.Last), r.Sum
	}
	_, err = tx.Exec(ctx, fmt.Sprintf(`UPDATE %s AS t SET n = t.n + u.sum, firsts = t.firsts || u.first, lasts = t.lasts || u.last
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(id, first, last, sum)
		WHERE t.id = u.id`, w.table), ids, firsts, lasts, sums)
	return 2, err
}

// failingCommits makes every nth COMMIT of a StagedFlusher fail (rolled back), so that the
// pipeline's recovery runs: the staged successor rolled back, both written again in order.
type failingCommits[T any] struct {
	StagedFlusher[T]
	every   int64
	commits atomic.Int64
	failed  atomic.Int64
}

func (f *failingCommits[T]) Stage(ctx context.Context, records []T) (Staged, error) {
	st, err := f.StagedFlusher.Stage(ctx, records)
	if err != nil {
		return nil, err
	}
	return failingCommit{Staged: st, f: f.commitFails}, nil
}

func (f *failingCommits[T]) commitFails() bool {
	if f.commits.Add(1)%f.every == 0 {
		f.failed.Add(1)
		return true
	}
	return false
}

type failingCommit struct {
	Staged
	f func() bool
}

func (c failingCommit) Commit(ctx context.Context) (FlushResult, error) {
	if c.f() {
		c.Rollback(ctx)
		return FlushResult{}, errInjected
	}
	return c.Staged.Commit(ctx)
}

// TestPipeline runs pipelined workers against a real PostgreSQL on hot slots, with and without
// failing commits: every record lands once, each slot's batches commit in order, and the
// flush times add up.
func TestPipeline(t *testing.T) {
	for _, every := range []int64{0, 5} {
		t.Run(fmt.Sprintf("fail-every=%d", every), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			pool := testPool(ctx, t, testdb.New(t), database.PoolOptions{MaxConns: 8})
			const table, slots, n = "queue_pipeline", 6, 20000
			if _, err := pool.Exec(ctx, fmt.Sprintf(`CREATE TABLE %[1]s (id bigint PRIMARY KEY, n bigint NOT NULL, firsts bigint[] NOT NULL, lasts bigint[] NOT NULL);
				INSERT INTO %[1]s SELECT g, 0, '{}', '{}' FROM generate_series(0, %[2]d) g;
				CREATE TABLE %[1]s_log (slot bigint, first bigint)`, table, slots-1)); err != nil {
				t.Fatal(err)
			}
			f := PgFlusher(pool, TxWriter[rec](orderWriter{table})).(StagedFlusher[rec])
			var flusher Flusher[rec] = f
			injected := &failingCommits[rec]{StagedFlusher: f, every: every}
			if every > 0 {
				flusher = injected
			}
			var merges violationLog
			q, err := New(flusher, Options[int, rec]{
				Key: recKey, Merge: mergeRec(&merges, true), Compare: cmp.Compare[int], Compaction: true,
				Workers: 2, BatchSize: 300, FlushInterval: 2 * time.Millisecond, FullPolicy: PolicyBlock,
				Capacity: 4096, Pipeline: true, RetryBackoff: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			m, seq := enqueueInOrder(t, ctx, q, n, slots, 1)
			checkInvariant(t, m)
			merges.check(t)
			if m.FlushedTotal+m.SyncFallbackTotal != n {
				t.Errorf("metrics %+v", m)
			}
			if every > 0 && (injected.failed.Load() == 0 || m.FlushFailedTotal == 0 || m.RetriesTotal == 0) {
				t.Errorf("%d injected failures, metrics %+v", injected.failed.Load(), m)
			}
			rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT id, n, firsts, lasts FROM %s ORDER BY id`, table))
			if err != nil {
				t.Fatal(err)
			}
			var id, sum int64
			var firsts, lasts []int64
			_, err = pgx.ForEachRow(rows, []any{&id, &sum, &firsts, &lasts}, func() error {
				if want := int64(seq[int(id)]); sum != want {
					t.Errorf("slot %d: n %d, want %d", id, sum, want)
				}
				next := int64(1)
				for i := range firsts {
					if firsts[i] != next {
						t.Errorf("slot %d: batch %d of the slot covers %d..%d, want it to start at %d (out of order or repeated)", id, i, firsts[i], lasts[i], next)
						break
					}
					next = lasts[i] + 1
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			ft := q.FlushTimes()
			if ft.Batches != m.FlushBatchesTotal || ft.CopyNs <= 0 || ft.StatementsNs <= 0 || ft.CommitNs <= 0 || ft.BeginNs <= 0 {
				t.Errorf("flush times %+v, metrics %+v", ft, m)
			}
			if every > 0 && ft.RetryNs <= 0 {
				t.Errorf("failed commits took no retry time: %+v", ft)
			}
			if d := q.FlushDurations(); d.Count() != m.FlushBatchesTotal {
				t.Errorf("%d batch durations for %d batches", d.Count(), m.FlushBatchesTotal)
			}
		})
	}
}

func TestPipelineNeedsStagedFlusher(t *testing.T) {
	f := FlusherFunc[rec](func(context.Context, []rec) (FlushResult, error) { return FlushResult{}, nil })
	if _, err := New(f, Options[int, rec]{Key: recKey, Pipeline: true}); err == nil {
		t.Error("New accepted Pipeline with a Flusher that cannot stage")
	}
}
