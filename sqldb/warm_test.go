package sqldb_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// counting is a real pool that counts its Acquires in flight, the most at once.
type counting struct {
	sqldb.Pool
	now, most atomic.Int64
}

func (c *counting) Acquire(ctx context.Context) (sqldb.PoolConn, error) {
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	defer c.now.Add(-1)
	return c.Pool.Acquire(ctx)
}

// Warm opens its connections WarmAtOnce at a time, and the pool then holds them all, idle, on
// the server.
func TestWarm(t *testing.T) {
	const n = 150
	d := mariadbtest.New(t)
	p := &counting{Pool: d.Pool(t, n)}
	if err := sqldb.Warm(context.Background(), p, n); err != nil {
		t.Fatal(err)
	}
	if most := p.most.Load(); most > sqldb.WarmAtOnce || most < 2 {
		t.Errorf("%d connections opened at once, want 2 to %d", most, sqldb.WarmAtOnce)
	}
	var open int
	if err := d.DB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ?", d.Name).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open < n {
		t.Errorf("%d sessions on the server after warming %d", open, n)
	}
}
