// Command hotcounter is a suite written outside hotspotkit's internals, against its public
// API only (testkit, and testkit/cli for main): the shape a team copies to measure its own hot
// write path without forking. It owns one hot table (hotcounter.sql, embedded and named in its
// Info), what a request writes in each mode, how two pending records for a row merge, and the
// checks against the requests that succeeded; the engine does everything else (server, flags,
// load, monitor, drain, report).
//
//	go run ./examples/hotcounter --requests 2000 --concurrency 200 --modes sync,async-compact
package main

import (
	"cmp"
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
)

//go:embed hotcounter.sql
var sqlFiles embed.FS

func main() { cli.Main(suite{}) }

// suite implements testkit.Suite.
type suite struct{}

func (suite) Info() testkit.Info {
	return testkit.Info{
		Name:    "hotcounter",
		Summary: "example suite: every request adds to one of --hot-keys counter rows",
		Description: `Request i adds one hit and an amount of 1 + i mod 7 to row i mod --hot-keys.
  sync           one UPDATE per request in its own transaction (lock waits on the hot row)
  async          the request enqueues its increment; workers apply each one as its own UPDATE
  async-compact  as async, but the increments of a row are summed first: one UPDATE per row
                 per batch
Every row's hits and amount are then checked exactly against the requests that succeeded.`,
		Example:      "hotcounter --requests 2000 --concurrency 200 --modes sync,async-compact",
		Modes:        []testkit.Mode{testkit.Sync, testkit.Async, testkit.AsyncCompact},
		DefaultModes: []testkit.Mode{testkit.Sync, testkit.AsyncCompact},
		HotTables:    []string{"hot_counters"},
		SQL:          sqlFiles,
		// The JSON codec below lets the async modes run on a Redis stream too.
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		// No restart-postgres or terminate-backends: the writes below are not idempotent, so
		// a batch retried after a COMMIT whose outcome was unknown would count twice.
		Faults: []string{testkit.FaultPauseFlush, testkit.FaultStatementTimeout, testkit.FaultLockTimeout},
	}
}

// increment is one queued write: what a request (or, merged, several) adds to a row.
type increment struct {
	Row          int
	Hits, Amount int64
}

func incrementOf(r *testkit.Run, i int64) increment {
	return increment{Row: int(i % int64(r.Config().HotKeys)), Hits: 1, Amount: 1 + i%7}
}

func (suite) Seed(ctx context.Context, r *testkit.Run) error {
	_, err := r.Admin().Exec(ctx, `INSERT INTO hot_counters (id) SELECT generate_series(0, $1 - 1)`, r.Config().HotKeys)
	return err
}

// writer applies a batch in order, one UPDATE per increment (compacted batches hold one
// increment per row).
type writer struct{}

func (writer) WriteBatch(ctx context.Context, tx pgx.Tx, batch []increment) (int, error) {
	for _, inc := range batch {
		if _, err := tx.Exec(ctx, `UPDATE hot_counters SET hits = hits + $2, amount = amount + $3 WHERE id = $1`,
			inc.Row, inc.Hits, inc.Amount); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

func (suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	if r.Mode() == testkit.Sync {
		return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			_, err := writer{}.WriteBatch(ctx, tx, []increment{incrementOf(r, i)})
			return err
		})}, nil
	}
	return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[int, increment]{
		Records: func(i int64) []increment { return []increment{incrementOf(r, i)} },
		Key:     func(inc increment) int { return inc.Row },
		Merge: func(pending *increment, newer increment) {
			pending.Hits += newer.Hits
			pending.Amount += newer.Amount
		},
		Compare: cmp.Compare[int],
		Writer:  func(bool) testkit.TxWriter[increment] { return writer{} },
		Codec:   testkit.JSONCodec[increment](),
	})
}

func (suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	want := make([]increment, r.Config().HotKeys)
	for i := range res.Len() {
		if res.Applied(i) {
			inc := incrementOf(r, i)
			want[inc.Row].Hits += inc.Hits
			want[inc.Row].Amount += inc.Amount
		}
	}
	rows, err := r.Admin().Query(ctx, `SELECT id, hits, amount FROM hot_counters ORDER BY id`)
	if err != nil {
		return nil, err
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[increment])
	if err != nil {
		return nil, err
	}
	c := r.NewChecks()
	c.Int("hot_counters rows", int64(len(want)), int64(len(got)))
	for _, g := range got {
		if g.Row < 0 || g.Row >= len(want) {
			return nil, fmt.Errorf("hot_counters: unexpected row %d", g.Row)
		}
		c.Int(fmt.Sprintf("hot_counters[%d].hits", g.Row), want[g.Row].Hits, g.Hits)
		c.Int(fmt.Sprintf("hot_counters[%d].amount", g.Row), want[g.Row].Amount, g.Amount)
	}
	return c.List(), nil
}
