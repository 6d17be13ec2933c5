// Command hotcounter is a suite written outside hotspotkit's internals, against its public
// API only (testkit, testkit/counters, and testkit/cli for main): the shape a team copies to
// measure its own hot write path without forking. It declares one hot table (hotcounter.sql,
// and MySQL's in mysql/, embedded and named in its Info), how each of its columns takes a
// write, and what a request adds to which row; package counters makes the suite of that —
// every mode (sync, outbox, async, async-compact), --slots, each request claimed once so that
// retries never count twice, and an exact verification, on PostgreSQL or MySQL — and the
// engine does everything else (server, flags, load, monitor, drain, faults, report).
//
//	go run ./examples/hotcounter --requests 2000 --concurrency 200 --modes sync,async-compact
package main

import (
	"embed"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

//go:embed hotcounter.sql mysql/*.sql
var sqlFiles embed.FS

func main() { cli.Main(suite()) }

// hotCounters is the hot table: rows keyed by an integer, each summing hits and amounts.
var hotCounters = counters.MustTable(counters.TableSpec{
	Name:    "hot_counters",
	Key:     []counters.Column{{Name: "id", Type: "integer"}},
	Slotted: true,
	Columns: []counters.Column{
		{Name: "hits", Type: "bigint", Op: counters.Add},
		{Name: "amount", Type: "bigint", Op: counters.Add},
	},
})

// hit is what a request writes to its row: both columns.
var hit = hotCounters.MustChange("hits", "amount")

// request is what request i, of hot set h (--hot-key-dist over --hot-keys; uniform: i mod
// --hot-keys), adds: one hit and an amount of 1 + i mod 7 to row h, in one part (one queue
// record).
func request(i int64, h int) [][]counters.Delta {
	return [][]counters.Delta{{hit.Delta(hotCounters.Row(counters.Int(int64(h))), counters.Int(1), counters.Int(1+i%7))}}
}

func suite() *counters.Suite {
	d := counters.Declaration{
		Info: testkit.Info{
			Name:    "hotcounter",
			Summary: "example suite: every request adds to one of --hot-keys counter rows",
			Description: `Request i adds one hit and an amount of 1 + i mod 7 to one of --hot-keys rows, picked by
--hot-key-dist (uniform: row i mod --hot-keys).
  sync           one UPDATE per request in its own transaction (lock waits on the hot row)
  outbox         the request writes its increment to an outbox; a flush loop sums and applies them
  async          the request enqueues its increment; workers apply each one as its own UPDATE
  async-compact  as async, but the increments of a row are summed first: one UPDATE per row
                 per batch
Each request is claimed once (a row in counter_claims), so a retried write never counts twice;
every row's hits and amount are then checked exactly against the requests that succeeded.`,
			Example:      "hotcounter --requests 2000 --concurrency 200 --modes sync,async-compact",
			DefaultModes: []testkit.Mode{testkit.Sync, testkit.AsyncCompact},
			HotTables:    []string{"hot_counters"},
			SQL:          sqlFiles,
		},
		SeedSQL: []string{`INSERT INTO hot_counters (id) SELECT generate_series(0, $1 - 1)`},
		Request: request,
		// On MySQL and MariaDB (--database mariadb, --mysql-url) its table is mysql/hotcounter.sql
		// and its seed this; everything else is the same.
		MySQL: &counters.DialectSQL{SeedSQL: []string{`INSERT INTO hot_counters (id) SELECT h FROM ` + counters.HotSetsMySQL}},
	}
	counters.KitClaim().Declare(&d)
	return counters.New(d)
}
