package redisq

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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
	if err := e.target.Admin().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) tableExists(table string) bool {
	e.t.Helper()
	var ok bool
	if err := e.target.Admin().QueryRow(context.Background(), `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok); err != nil {
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
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
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
		if _, err := e.target.Admin().Exec(ctx, `INSERT INTO queue_applied_entries VALUES ('another stream', '1-1')`); err != nil {
			t.Fatal(err)
		}

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
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
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
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		for _, table := range []string{"orders_applied", e.target.Schema() + ".Orders Applied"} {
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
				quoted := sqldb.Postgres.QuoteIdent(parts...)
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
	if _, err := e.target.Admin().Exec(context.Background(), `TRUNCATE q_counts`); err != nil {
		e.t.Fatal(err)
	}
}

// TestAppliedTableNeedsNoCreatePrivilege: a consumer whose database role may not create
// tables starts and writes once the table exists (made with AppliedTableSQL), and fails to
// start, saying why, while it does not.
func TestAppliedTableNeedsNoCreatePrivilege(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		ctx := context.Background()
		admin := e.target.Admin()
		schema := sqldb.Postgres.QuoteIdent(e.target.Schema())
		role := "redisq_test_" + strings.TrimPrefix(e.stream, "test:")
		for _, stmt := range []string{
			`CREATE ROLE ` + role + ` LOGIN PASSWORD 'limited'`,
			`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role,
			`GRANT SELECT, INSERT, UPDATE ON q_counts TO ` + role,
		} {
			if _, err := admin.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_, _ = admin.Exec(context.Background(), `DROP OWNED BY `+role)
			_, _ = admin.Exec(context.Background(), `DROP ROLE `+role)
		})
		cfg, err := pgxpool.ParseConfig(e.pool.Config().ConnString())
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.User, cfg.ConnConfig.Password = role, "limited"
		cfg.ConnConfig.RuntimeParams["search_path"] = e.target.Schema()
		limited, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(limited.Close)

		o := e.options(RoleBoth)
		o.Fresh, o.DB = true, sqldb.PgxPool(limited)
		if _, err := New(ctx, o); err == nil || !strings.Contains(err.Error(), "applied-ids table") {
			t.Fatalf("New without the table and without CREATE: %v, want an error about the applied-ids table", err)
		}
		ddl, err := AppliedTableSQL(sqldb.Postgres, DefaultAppliedTable)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{ddl, `GRANT SELECT, INSERT, DELETE ON queue_applied_entries TO ` + role} {
			if _, err := admin.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
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
	for table, want := range map[string]string{
		"queue_applied_entries": `"queue_applied_entries"`,
		"app.Applied Ids":       `"app"."Applied Ids"`,
		"":                      "",
		"a.b.c":                 "",
		"a.":                    "",
		strings.Repeat("x", 64): "",
	} {
		ddl, err := AppliedTableSQL(sqldb.Postgres, table)
		switch {
		case want == "" && err == nil:
			t.Errorf("AppliedTableSQL(%q) accepted: %s", table, ddl)
		case want != "" && (err != nil || !strings.Contains(ddl, "CREATE TABLE IF NOT EXISTS "+want+" (")):
			t.Errorf("AppliedTableSQL(%q) = %q, %v; want it to create %s", table, ddl, err, want)
		}
	}
}

// TestAppliedTableOnMySQLIsRefused: the applied-ids statements are PostgreSQL's only, and a
// consumer on another dialect is refused in one line rather than sent them.
func TestAppliedTableOnMySQLIsRefused(t *testing.T) {
	if ddl, err := AppliedTableSQL(sqldb.MySQL, DefaultAppliedTable); err == nil || !strings.Contains(err.Error(), "PostgreSQL only") {
		t.Errorf("AppliedTableSQL on MySQL = %q, %v; want a refusal", ddl, err)
	}
}
