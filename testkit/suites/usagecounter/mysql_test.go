package usagecounter

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/gateway"
)

// TestMySQLUsageClaim runs the usage claim on MariaDB, at the statements' level: a batch of
// new requests is one multi-row INSERT; a batch repeating a request, or one an earlier batch
// wrote, goes row by row and claims each new request once; a usage row holds its cost and time
// exactly; and the claim index reads each row's request back.
func TestMySQLUsageClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mariadbtest.New(t)
	d.Apply(t, os.DirFS("../../../schema"), "mysql/*.sql")
	conn := d.Dedicated(t)
	src := func(ids ...int64) []counters.Source {
		out := []counters.Source{}
		for _, i := range ids {
			out = append(out, counters.Source{Request: i, Hot: int(i % 2)})
		}
		return out
	}
	var many []int64
	for i := int64(10); i < 110; i++ {
		many = append(many, i)
	}
	for _, c := range []struct {
		batch, fresh []counters.Source
		ops          int
	}{
		{src(many...), src(many...), 1},
		{src(1, 2, 1), src(1, 2), 4},
		{src(2, 3, 50), src(3), 4},
		{src(3), src(), 1},
	} {
		var fresh []counters.Source
		var ops int
		if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) (err error) {
			fresh, ops, err = insertUsageMySQL(ctx, tx, c.batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fresh, c.fresh) || ops != c.ops {
			t.Errorf("claiming %d requests: %d new in %d statements, want %d in %d", len(c.batch), len(fresh), ops, len(c.fresh), c.ops)
		}
	}
	var n, indexes int64
	var total, at string
	if err := conn.QueryRow(ctx, "SELECT COUNT(*), SUM("+gateway.RequestIndexMySQL+"), CAST(SUM(cost) AS CHAR), "+
		"CAST(MAX(created_at) AS CHAR) FROM `usage`").Scan(&n, &indexes, &total, &at); err != nil {
		t.Fatal(err)
	}
	if n != 103 || indexes != 1+2+3+(10+109)*100/2 || total != "0.10300000" || at != usedAt(109).Format("2006-01-02 15:04:05.000000") {
		t.Errorf("usage: %d rows, indexes summing to %d, cost %s, newest at %s", n, indexes, total, at)
	}
}
