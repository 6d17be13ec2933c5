package redisq

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// appliedRows counts the rows of table, of stream when it is not empty.
func (e *env) appliedRows(table, stream string) int64 {
	e.t.Helper()
	q := `SELECT count(*) FROM ` + table
	args := []any{}
	if stream != "" {
		q += ` WHERE stream = $1`
		args = append(args, stream)
	}
	var n int64
	if err := e.admin.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) tableExists(table string) bool {
	e.t.Helper()
	var ok bool
	if err := e.admin.QueryRow(context.Background(), e.db.tableExists, table).Scan(&ok); err != nil {
		e.t.Fatal(err)
	}
	return ok
}

// prune runs two pruning passes on q and returns what the second deleted: the first only
// reads the bound (an id goes one interval after its entry left the stream), so it deletes
// nothing.
func prune(t *testing.T, q *Queue[int, rec]) (deleted int64) {
	t.Helper()
	var p pruner
	for pass := range 2 {
		n, err := q.prunePass(context.Background(), &p)
		if err != nil {
			t.Fatal(err)
		}
		if pass == 0 && n != 0 {
			t.Errorf("the first pass deleted %d ids, want none", n)
		}
		deleted = n
	}
	return deleted
}

// TestPruneKeepsWhatCanStillBeDelivered: applied ids of entries acknowledged and deleted are
// pruned; those of entries still in the stream — here a batch committed and not acknowledged
// by a consumer frozen after its commit — stay, so the consumer that takes the batch over
// still skips it. Another stream's ids are left alone, and an emptied stream keeps none.
func TestPruneKeepsWhatCanStillBeDelivered(t *testing.T) {
	everyDB(t, func(t *testing.T, rdb *redis.Client, db *testDB) {
		e := newEnvOn(t, rdb, db)
		ctx := context.Background()
		withoutPruning := func(role Role) Options[int, rec] {
			o := e.options(role)
			o.PruneInterval = -1
			return o
		}
		po := withoutPruning(RoleProducer)
		po.Fresh = true
		producer := e.start(po)
		const old, young = 200, 300
		want := enqueue(t, producer, old)
		drained := e.start(withoutPruning(RoleConsumer))
		e.close(drained)
		if got := e.appliedIDs(); got != old {
			t.Fatalf("%d applied ids after the first drain, want %d", got, old)
		}
		e.mustExec(db.anotherStreamsID)

		for i := range young { // one at a time, so that A's first batch is only part of them
			if _, err := producer.Enqueue(ctx, rec{Slot: i % 7, N: int64(old + i + 1), Count: 1}); err != nil {
				t.Fatal(err)
			}
			want += int64(old + i + 1)
		}
		// Consumer A commits its first batch of the young records and freezes there.
		ao := withoutPruning(RoleConsumer)
		ao.Consumer, ao.BatchSize = "A", 50
		a, committed, release := e.startFrozenAfterCommit(ao)

		if n := prune(t, producer); n != old {
			t.Errorf("pruned %d ids, want the %d of the entries acknowledged and deleted", n, old)
		}
		if got := e.appliedIDs(); got != int64(len(committed)) {
			t.Errorf("%d applied ids left on the stream, want the %d of A's unacknowledged batch", got, len(committed))
		}
		if got := e.appliedRows("queue_applied_entries", "another stream"); got != 1 {
			t.Errorf("another stream's ids pruned: %d left, want 1", got)
		}

		bo := withoutPruning(RoleConsumer)
		bo.Consumer, bo.ReclaimIdle = "B", 400*time.Millisecond
		b := e.start(bo)
		e.close(b) // the stream is empty: B took A's batch over
		release()
		e.close(a)
		total, records := e.totals()
		if total != want || records != old+young {
			t.Fatalf("totals %d/%d records, want %d/%d (a pruned id written twice?)", total, records, want, old+young)
		}
		if s := b.StreamMetrics(); s.DuplicateSkippedTotal < int64(len(committed)) {
			t.Errorf("B skipped %d duplicates, want at least A's %d", s.DuplicateSkippedTotal, len(committed))
		}

		if n := prune(t, producer); n != young {
			t.Errorf("pruned %d ids of the emptied stream, want %d", n, young)
		}
		if got := e.appliedIDs(); got != 0 {
			t.Errorf("%d applied ids left on an empty stream", got)
		}
		e.close(producer)
	})
}

// TestPruneRunsEveryInterval: a running queue prunes by itself, and what it wrote is exact.
func TestPruneRunsEveryInterval(t *testing.T) {
	everyDB(t, func(t *testing.T, rdb *redis.Client, db *testDB) {
		e := newEnvOn(t, rdb, db)
		o := e.options(RoleBoth)
		o.Fresh, o.PruneInterval = true, 20*time.Millisecond
		q := e.start(o)
		const n = 600
		want := enqueue(t, q, n)
		deadline := time.Now().Add(30 * time.Second)
		for e.appliedIDs() > 0 || e.streamLength() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after 30s: %d applied ids, %d entries in the stream", e.appliedIDs(), e.streamLength())
			}
			time.Sleep(20 * time.Millisecond)
		}
		e.close(q)
		if total, records := e.totals(); total != want || records != n {
			t.Fatalf("totals %d/%d, want %d/%d", total, records, want, n)
		}
		checkInvariant(t, q.Metrics())
	})
}

func (e *env) streamLength() int64 {
	e.t.Helper()
	n, err := e.rdb.XLen(context.Background(), e.stream).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestAppliedTableIsConfigurable: the ids go to the table named, plain or schema-qualified,
// which a consuming New creates (two at once: one creates it, the other finds it); the default
// table is not created.
func TestAppliedTableIsConfigurable(t *testing.T) {
	everyDB(t, func(t *testing.T, rdb *redis.Client, db *testDB) {
		e := newEnvOn(t, rdb, db)
		for _, table := range []string{"orders_applied", e.schema + ".Orders Applied"} {
			t.Run(table, func(t *testing.T) {
				e.stream += "x"
				po := e.options(RoleProducer)
				po.AppliedTable, po.Fresh = table, true
				p := e.start(po)
				// Two consumers start at once: one creates the table, the other finds it.
				var wg sync.WaitGroup
				consumers := make([]*Queue[int, rec], 2)
				errs := make([]error, 2)
				for i := range consumers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						o := e.options(RoleConsumer)
						o.AppliedTable, o.PruneInterval = table, -1
						consumers[i], errs[i] = New(context.Background(), o)
					}()
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("consumer %d: %v", i, err)
					}
					t.Cleanup(func() { _ = consumers[i].Close(context.Background()) })
				}
				want := enqueue(t, p, 300)
				e.close(p)
				for _, c := range consumers {
					e.close(c)
				}
				parts, err := tableParts(table)
				if err != nil {
					t.Fatal(err)
				}
				quoted := e.pool.Dialect().QuoteIdent(parts...)
				if got := e.appliedRows(quoted, e.stream); got != 300 {
					t.Errorf("%s holds %d ids, want 300", quoted, got)
				}
				if total, records := e.totals(); total != want || records != 300 {
					t.Errorf("totals %d/%d, want %d/300", total, records, want)
				}
				e.resetCounts()
			})
		}
		if e.tableExists("queue_applied_entries") {
			t.Error("the default table was created although another was named")
		}
	})
}

func (e *env) resetCounts() {
	e.t.Helper()
	e.mustExec(`TRUNCATE q_counts`)
}

// TestAppliedTableNeedsNoCreatePrivilege: a consumer whose database role may not create
// tables starts and writes once the table exists (made with AppliedTableSQL), and fails to
// start, saying why, while it does not.
func TestAppliedTableNeedsNoCreatePrivilege(t *testing.T) {
	everyDB(t, func(t *testing.T, rdb *redis.Client, db *testDB) {
		e := newEnvOn(t, rdb, db)
		ctx := context.Background()
		o := e.options(RoleBoth)
		o.Fresh, o.DB = true, db.limited(e)
		if _, err := New(ctx, o); err == nil || !strings.Contains(err.Error(), "applied-ids table") {
			t.Fatalf("New without the table and without CREATE: %v, want an error about the applied-ids table", err)
		}
		ddl, err := AppliedTableSQL(e.pool.Dialect(), DefaultAppliedTable)
		if err != nil {
			t.Fatal(err)
		}
		e.mustExec(ddl)
		db.grantApplied(e)
		q := e.start(o)
		want := enqueue(t, q, 100)
		e.close(q)
		if total, records := e.totals(); total != want || records != 100 {
			t.Fatalf("totals %d/%d, want %d/100", total, records, want)
		}
		if n := prune(t, q); n != 100 {
			t.Errorf("pruned %d ids of the emptied stream, want 100", n)
		}
	})
}

func TestAppliedTableNames(t *testing.T) {
	for table, want := range map[string][2]string{
		"queue_applied_entries": {`"queue_applied_entries"`, "`queue_applied_entries`"},
		"app.Applied Ids":       {`"app"."Applied Ids"`, "`app`.`Applied Ids`"},
		"":                      {},
		"a.b.c":                 {},
		"a.":                    {},
		strings.Repeat("x", 64): {},
	} {
		for i, d := range []sqldb.Dialect{sqldb.Postgres, sqldb.MySQL} {
			ddl, err := AppliedTableSQL(d, table)
			switch {
			case want[i] == "" && err == nil:
				t.Errorf("AppliedTableSQL(%s, %q) accepted: %s", d, table, ddl)
			case want[i] != "" && (err != nil || !strings.Contains(ddl, "CREATE TABLE IF NOT EXISTS "+want[i]+" (")):
				t.Errorf("AppliedTableSQL(%s, %q) = %q, %v; want it to create %s", d, table, ddl, err, want[i])
			}
		}
	}
}

// withAppliedTable runs f on each database, in a test database of its own holding the
// applied-ids table, with the table's statements.
func withAppliedTable(t *testing.T, f func(t *testing.T, e *env, a applied)) {
	for _, db := range []*testDB{postgres, mariadb} {
		t.Run(db.name, func(t *testing.T) {
			e := newEnvOn(t, nil, db)
			a, err := newApplied(e.pool.Dialect(), DefaultAppliedTable)
			if err != nil {
				t.Fatal(err)
			}
			e.mustExec(a.createSQL())
			f(t, e, a)
		})
	}
}

// recordIDs records ids of stream in tx through the applied-ids table's statements a.
func recordIDs(t *testing.T, a applied, tx sqldb.Tx, stream string, ids ...string) (fresh []string, statements int) {
	t.Helper()
	isNew, statements, err := a.record(context.Background(), tx, stream, ids)
	if err != nil {
		t.Fatalf("recording %v: %v", ids, err)
	}
	for _, id := range ids {
		if isNew[id] {
			fresh = append(fresh, id)
		}
	}
	return fresh, statements
}

// TestRecordingWaitsForAnUncommittedID: a batch whose ids another transaction is recording
// waits for that one to end, and finds new exactly the ids that transaction did not commit:
// its id once it is rolled back, not once it is committed. The batch also holds an id
// committed before, so on MySQL the INSERT inserts fewer rows than the batch has, and the
// read of its own rows says which.
func TestRecordingWaitsForAnUncommittedID(t *testing.T) {
	withAppliedTable(t, func(t *testing.T, e *env, a applied) {
		ctx := context.Background()
		for _, commit := range []bool{true, false} {
			stream := fmt.Sprintf("s-%v", commit)
			if err := sqldb.BeginFunc(ctx, e.pool, func(tx sqldb.Tx) error {
				recordIDs(t, a, tx, stream, "1-0") // committed before
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			other, err := e.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fresh, _ := recordIDs(t, a, other, stream, "2-0"); len(fresh) != 1 {
				t.Fatalf("the other transaction's id was not new: %v", fresh)
			}
			type result struct {
				fresh      []string
				statements int
			}
			done := make(chan result, 1)
			go func() {
				tx, err := e.pool.Begin(ctx)
				if err != nil {
					t.Error(err)
					done <- result{}
					return
				}
				fresh, statements := recordIDs(t, a, tx, stream, "3-0", "2-0", "1-0")
				if err := tx.Commit(ctx); err != nil {
					t.Error(err)
				}
				slices.Sort(fresh)
				done <- result{fresh, statements}
			}()
			select {
			case r := <-done:
				t.Fatalf("the batch did not wait for the uncommitted id: %+v", r)
			case <-time.After(300 * time.Millisecond):
			}
			end := other.Rollback
			want := []string{"2-0", "3-0"}
			if commit {
				end, want = other.Commit, []string{"3-0"}
			}
			if err := end(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if !slices.Equal(r.fresh, want) {
				t.Errorf("other transaction committed %v: new %v, want %v", commit, r.fresh, want)
			}
			if e.pool.Dialect() == sqldb.MySQL && r.statements != 2 {
				t.Errorf("other transaction committed %v: %d statements, want 2 (the INSERT, the read of its rows)", commit, r.statements)
			}
			if got := e.appliedRows(a.name(), stream); got != 3 {
				t.Errorf("%d ids in the table, want 3", got)
			}
		}
	})
}

// TestRecordingIsExactUnderConcurrentBatches: recorders record overlapping batches of one
// stream's ids at once, each batch in a transaction of its own, a third of them rolled back:
// every id in the table was new to exactly one committed transaction, and no committed
// transaction found new an id that is not there. Batches that share ids may deadlock (on
// MariaDB, a duplicate's shared gap lock meets another's insert); one is rolled back then, as
// a flush would be, and retried.
func TestRecordingIsExactUnderConcurrentBatches(t *testing.T) {
	withAppliedTable(t, func(t *testing.T, e *env, a applied) {
		ctx := context.Background()
		const recorders, rounds, ids, span = 8, 25, 300, 40
		var mu sync.Mutex
		newTo := map[string]int{} // committed transactions that found the id new
		paths := map[int]int{}    // batches by statements
		failed := map[string]int{}
		var wg sync.WaitGroup
		for r := range recorders {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(r), 7))
				for range rounds {
					first := rnd.IntN(ids - span)
					batch := make([]string, 0, span)
					for k := first; k < first+span; k++ {
						if rnd.IntN(3) > 0 {
							batch = append(batch, fmt.Sprintf("%d-%d", 1000+k/4, k%4))
						}
					}
					tx, err := e.pool.Begin(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					isNew, statements, err := a.record(ctx, tx, e.stream, batch)
					if err != nil {
						sqldb.Rollback(ctx, tx)
						mu.Lock()
						failed[sqldb.Classify(err)]++ // a deadlock, say: the batch is retried by its flush
						mu.Unlock()
						continue
					}
					if rnd.IntN(3) == 0 {
						sqldb.Rollback(ctx, tx)
						continue
					}
					if err := tx.Commit(ctx); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for id, ok := range isNew {
						if ok {
							newTo[id]++
						}
					}
					paths[statements]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		t.Logf("committed batches by statements: %v; failed: %v", paths, failed)
		rows, err := e.pool.Query(ctx, `SELECT count(*) FROM `+a.name()+` WHERE stream = $1`, e.stream)
		if err != nil {
			t.Fatal(err)
		}
		counts, err := sqldb.CollectRows[int64](rows)
		if err != nil {
			t.Fatal(err)
		}
		there, err := a.present(ctx, e.pool, e.stream, slices.Collect(maps.Keys(newTo)))
		if err != nil {
			t.Fatal(err)
		}
		if counts[0] != int64(len(newTo)) || len(there) != len(newTo) {
			t.Errorf("%d ids in the table, %d of the %d found new by a committed transaction", counts[0], len(there), len(newTo))
		}
		for id, n := range newTo {
			if n != 1 {
				t.Errorf("id %s new to %d committed transactions", id, n)
			}
		}
		for class := range failed {
			if class != sqldb.ClassMySQLDeadlock && class != "40P01" {
				t.Errorf("batches failed with %s: only a deadlock may fail one (%v)", class, failed)
			}
		}
		if e.pool.Dialect() == sqldb.MySQL && len(paths) < 2 {
			t.Errorf("every committed batch took %v statements: no batch met an id already there", paths)
		}
	})
}
