package settlement

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// TestMySQLStatements runs the settlement's own SQL on MariaDB, at the statements' level: the
// pending usages seeded from a JSON array of hot sets with their exact costs; settling a
// batch that repeats a request settles it once, in three statements; a batch with a request
// settled before settles the others, its snapshots inserted row by row; the usages' check
// counts every case; and a usage settled without its snapshot fails the settlement.
func TestMySQLStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mariadbtest.New(t)
	d.Apply(t, os.DirFS("../../../schema"), "mysql/*.sql")
	d.Apply(t, sqlFiles, "mysql/*.sql")
	conn := d.Dedicated(t)
	sql, err := statementsOf(sqldb.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	sets := []int32{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}
	if err := sql.seedUsages(ctx, conn, sets); err != nil {
		t.Fatal(err)
	}
	var costs []string
	rows, err := conn.Query(ctx, "SELECT CAST(cost AS CHAR) FROM `usage` WHERE user_id = CONCAT('user-hot-', SUBSTRING_INDEX(request_id, '-', -1) % 3) ORDER BY CAST(SUBSTRING_INDEX(request_id, '-', -1) AS SIGNED)")
	if err == nil {
		costs, err = sqldb.CollectRows[string](rows)
	}
	if err != nil || len(costs) != len(sets) {
		t.Fatalf("seeded usages: %v %v", costs, err)
	}
	for i, c := range costs {
		if !costOf(int64(i)).Equals(c) {
			t.Errorf("usage %d costs %s, want %s", i, c, costOf(int64(i)))
		}
	}
	src := func(ids ...int64) []counters.Source {
		var out []counters.Source
		for _, i := range ids {
			out = append(out, counters.Source{Request: i, Hot: int(sets[i])})
		}
		return out
	}
	for _, c := range []struct {
		batch, fresh []counters.Source
		ops          int
	}{
		{src(1, 2, 2, 3), src(1, 2, 3), 3},
		{src(3, 4), src(4), 5}, // the lock, the INSERT and one per row, the mark
		{src(4), nil, 2},       // the lock and the INSERT that finds it: nothing to mark
	} {
		var fresh []counters.Source
		var ops int
		if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) (err error) {
			fresh, ops, err = mysqlSQL.settle(ctx, tx, c.batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fresh, c.fresh) || ops != c.ops {
			t.Errorf("settling %v: %v in %d statements, want %v in %d", c.batch, fresh, ops, c.fresh, c.ops)
		}
	}
	applied := make([]bool, len(sets))
	for _, i := range []int{1, 2, 3, 4} {
		applied[i] = true
	}
	got, err := sql.checkUsages(ctx, conn, applied, sets)
	if want := (usageCounts{settledOnce: 4, stillPending: 6, inSet: 10, usages: 10, settled: 4}); err != nil || got != want {
		t.Errorf("checkUsages: %+v (%v), want %+v", got, err, want)
	}
	d.MustExec(t, "UPDATE `usage` SET cost = cost + 0.00000001 WHERE request_id = 'req-2'")
	if got, err := sql.checkUsages(ctx, conn, applied, sets); err != nil || got.settledOnce != 3 {
		t.Errorf("a settled usage whose cost is not its snapshot's: %+v (%v), want 3 settled once", got, err)
	}
	d.MustExec(t, "DELETE FROM usage_settlement_snapshots WHERE request_id = 'req-1'")
	err = sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
		_, _, err := mysqlSQL.settle(ctx, tx, src(1))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Errorf("a settled usage without its snapshot: %v, want the disagreement", err)
	}
}
