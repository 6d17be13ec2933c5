package counters_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// Changes of the test tables a declared request makes.
var (
	tellerChange = counters.Tellers.MustChange("balance", "highest", "lowest", "note", "changed")
	deviceChange = counters.Devices.MustChange("uses", "spent", "seen_at", "seen_from", "touched")
)

// declared is a counter suite of two parts per request over the package's test tables — a
// teller keyed by two integers (an Add from a seeded balance, Greatest, Least, Assign, the
// server's time) and a slotted device (a count, an amount, the newest time and its address,
// the server's time) — claimed in the package's own claim table, row by row or, pipelined, in
// one INSERT (ClaimAll). One teller row is seeded beyond the hot sets' and no request touches it.
func declared(pipelined bool) *counters.Suite {
	at := func(i int64) time.Time {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Microsecond)
	}
	d := counters.Declaration{
		Info: testkit.Info{Name: "declared", Summary: "a declared counter suite", Example: "declared", SQL: counters.TestSQL},
		SeedSQL: []string{
			`INSERT INTO tellers (bid, tid, balance) SELECT h / 2, h, 100 + h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO tellers (bid, tid, balance, note) SELECT -1, -1, 5, 'untouched' WHERE $1 > 0`,
			`INSERT INTO devices (name, owner) SELECT 'd' || h, 'o' FROM generate_series(0, $1 - 1) h`,
		},
		MySQL: &counters.DialectSQL{SeedSQL: []string{
			`INSERT INTO tellers (bid, tid, balance) SELECT h DIV 2, h, 100 + h FROM ` + counters.HotSetsMySQL,
			`INSERT INTO tellers (bid, tid, balance, note) SELECT -1, -1, 5, 'untouched' FROM DUAL WHERE $1 > 0`,
			`INSERT INTO devices (name, owner) SELECT CONCAT('d', h), 'o' FROM ` + counters.HotSetsMySQL,
		}},
		Request: func(i int64, h int) [][]counters.Delta {
			return [][]counters.Delta{
				{tellerChange.Delta(counters.Tellers.Row(counters.Int(int64(h/2)), counters.Int(int64(h))),
					counters.Int(i%5-2), counters.Int(i*7%101), counters.Int(i*3%37), counters.Text(fmt.Sprint("note ", i)))},
				{deviceChange.Delta(counters.Devices.Row(counters.Text(fmt.Sprint("d", h))),
					counters.Int(1), counters.Amount(decimal.Decimal(i+1)), counters.Time(at(i)), counters.Text(fmt.Sprint("ip", i)))},
			}
		},
	}
	counters.KitClaim().Declare(&d)
	if !pipelined {
		d.ClaimAll = nil
	}
	return counters.New(d)
}

// requests are the indexes from..to-1.
func requests(from, to int64) []int64 {
	var ids []int64
	for i := from; i < to; i++ {
		ids = append(ids, i)
	}
	return ids
}

// writeCompacted writes the records of requests ids through s's compacting writer, in one
// transaction, and returns the statements it sent.
func writeCompacted(t *testing.T, s *counters.Suite, r *testkit.Run, ids ...int64) int {
	t.Helper()
	var ops int
	if err := sqldb.BeginFunc(t.Context(), r.Admin(), func(tx sqldb.Tx) error {
		var batch []counters.Record
		for _, i := range ids {
			batch = append(batch, s.Records(r, nil, i)...)
		}
		var err error
		ops, err = s.Writer(r, true).WriteBatch(t.Context(), tx, batch)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ops
}

// failedChecks are the checks of s's Verify of res that failed, each with its figures.
func failedChecks(t *testing.T, s *counters.Suite, r *testkit.Run, res testkit.Result) []string {
	t.Helper()
	checks, err := s.Verify(t.Context(), r, res)
	return failedOf(t, checks, err)
}

// failedOf are those of checks, a verification's (err: it failed), that failed, each with its
// figures.
func failedOf(t *testing.T, checks []testkit.Check, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range checks {
		if c.State != results.CheckPassed {
			names = append(names, fmt.Sprintf("%s (%s): expected %v, got %v", c.Name, c.State, c.Expected, c.Actual))
		}
	}
	return names
}

// applied is a testkit.Result: requests 0..n-1, of which those in skip did not apply.
type applied struct {
	n    int64
	skip map[int64]bool
}

func (a applied) Len() int64           { return a.n }
func (a applied) Applied(i int64) bool { return !a.skip[i] }

// TestVerifyIsExactAndCatchesEveryColumn writes requests through the suite's writer, twice
// (the second time nothing changes), and checks that Verify passes, then that it fails once
// any one column, slot or claim is off, and when a request it expects was never written.
func TestVerifyIsExactAndCatchesEveryColumn(t *testing.T) {
	ctx := context.Background()
	s := declared(false)
	if s.Info().Defaults["queue-capacity"] != strconv.Itoa(2*testkit.DefaultQueueCapacity) {
		t.Errorf("two records per request: --queue-capacity default %v", s.Info().Defaults)
	}
	const n, hot = 40, 3
	r := suitetest.Seeded(t, s, hot, n)
	for range 2 {
		writeCompacted(t, s, r, requests(0, n)...)
	}
	failed := func(res testkit.Result) []string { return failedChecks(t, s, r, res) }
	all := applied{n: n}
	if f := failed(all); len(f) != 0 {
		t.Fatalf("checks failed on exact rows: %v", f)
	}
	if counts, err := s.Persisted(ctx, r, n); err != nil || counts[0] != 1 || counts[n-1] != 1 {
		t.Errorf("persisted %v (%v)", counts, err)
	}
	if f := failed(applied{n: n + 1}); len(f) == 0 {
		t.Error("a request that was never written passed as applied")
	}
	// Verify reads on the admin connection, inside the transaction that tampered.
	tamperingFails(t, r.Admin(), func(sqldb.Tx) []string { return failed(all) })
}

// tamperingFails makes each of tamperings in a transaction on db, and fails the test unless
// failed, the checks of a verification that reads in that transaction that failed, names one.
func tamperingFails(t *testing.T, db sqldb.Beginner, failed func(sqldb.Tx) []string) {
	t.Helper()
	for _, tamper := range tamperings {
		t.Run(tamper, func(t *testing.T) {
			tx, err := db.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(t.Context())
			if _, err := tx.Exec(t.Context(), tamper); err != nil {
				t.Fatal(err)
			}
			if f := failed(tx); len(f) == 0 {
				t.Errorf("Verify passed with %s", tamper)
			}
		})
	}
}

// tamperings each put one column, slot, claim or row of the declared suite's tables off, in
// SQL both dialects take: Verify must fail after any one of them.
var tamperings = []string{
	`UPDATE tellers SET balance = balance + 1 WHERE bid = 0 AND tid = 1`,
	`UPDATE tellers SET highest = highest + 1 WHERE tid = 2`,
	`UPDATE tellers SET lowest = lowest - 1 WHERE tid = 2`,
	`UPDATE tellers SET note = 'note 99' WHERE tid = 0`, // a note, but no request of this row's
	`UPDATE tellers SET changed = NULL WHERE tid = 1`,
	`UPDATE tellers SET balance = 6 WHERE tid = -1`,        // the row no request touched
	`UPDATE tellers SET note = 'UNTOUCHED' WHERE tid = -1`, // the same, a text in another case
	`INSERT INTO tellers (bid, tid) VALUES (7, 7)`,         // a row no one seeded
	`DELETE FROM tellers WHERE tid = -1`,                   // a seeded row no request touched, gone
	`UPDATE devices SET uses = uses + 1 WHERE name = 'd2'`,
	`UPDATE devices SET spent = spent + 0.00000001 WHERE name = 'd1'`,
	`UPDATE devices SET seen_at = seen_at - INTERVAL '1' HOUR WHERE name = 'd0'`,
	`UPDATE devices SET seen_from = 'elsewhere' WHERE name = 'd0'`,
	`UPDATE devices SET seen_from = UPPER(seen_from) WHERE name = 'd0'`,
	`UPDATE devices SET touched = NULL WHERE name = 'd0'`,
	`INSERT INTO devices (name, owner, slot) VALUES ('d1', 'o', 7)`,
	`DELETE FROM counter_claims WHERE request_index = 5`,
}

// TestPipelinedClaimFallsBackOnARepeat writes a compacted batch with a pipelined claim
// (Declaration.ClaimAll): a fresh batch in one round trip, its claim and UPDATEs together; a
// replayed one, and one that repeats a request, fail that claim, roll back to its savepoint and
// go through Claim, and every request is applied exactly once.
func TestPipelinedClaimFallsBackOnARepeat(t *testing.T) {
	s := declared(true)
	const n, hot = 40, 3
	r := suitetest.Seeded(t, s, hot, n)
	write := func(ids ...int64) int { return writeCompacted(t, s, r, ids...) }
	first := requests(0, n/2)
	// One claim and one UPDATE per table.
	if ops := write(first...); ops != 3 {
		t.Errorf("a fresh batch sent %d statements, want 3 (claim, two UPDATEs)", ops)
	}
	if ops := write(first...); ops != 1 {
		t.Errorf("a replayed batch sent %d statements, want 1: the claim (through Claim) that found every part claimed", ops)
	}
	var rest []int64
	for i := int64(n / 2); i < n; i++ {
		rest = append(rest, i, i) // every request twice in the batch
	}
	write(rest...)
	if f := failedChecks(t, s, r, applied{n: n}); len(f) != 0 {
		t.Errorf("checks failed: %v", f)
	}
}

// TestEveryModeOnDeclaredTables runs every mode of the declared suite, verified: the generic
// outbox, the queues, and Assign columns under sync's commit order.
func TestEveryModeOnDeclaredTables(t *testing.T) {
	modes := "sync,outbox,async,async-compact"
	rep, stderr := suitetest.Runs(t, declared(false), 4, "--modes", modes, "--requests", "400", "--concurrency", "40", "--hot-keys", "3")
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		suitetest.Completed(t, r, 400)
		for _, name := range []string{
			"tellers.note rows holding a value a succeeded request wrote there (last write wins: which one depends on the commit order)",
			"tellers.changed set where a request wrote it (the server's time: presence only)",
			"rows of no hot set whose every counter is exact (untouched: as seeded)",
		} {
			if !hasCheck(r.Verification.Checks, name) {
				t.Errorf("%s: no check %q\n%s", r.Mode, name, stderr)
			}
		}
	}
}

func hasCheck(checks []results.Check, name string) bool {
	for _, c := range checks {
		if c.Name == name {
			return c.State == results.CheckPassed
		}
	}
	return false
}

// TestRunTimeDeclaration declares the suite from the database's catalog after its tables
// exist, as a script suite does after its init file ran, with a hot set function of its own
// (every request but each 5th on set 0), and checks that the requests written through its
// writer verify exactly and a tampered row does not.
func TestRunTimeDeclaration(t *testing.T) {
	ctx := t.Context()
	target := testdb.New(t, counters.TestSQL)
	spec, err := counters.Describe(ctx, sqldb.PgxConn(target.Admin()), "tellers")
	if err != nil {
		t.Fatal(err)
	}
	spec, err = spec.Writing(counters.Column{Name: "balance", Op: counters.Add}, counters.Column{Name: "note", Op: counters.Assign})
	if err != nil {
		t.Fatal(err)
	}
	tellers, err := counters.NewTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	change, err := tellers.Change("balance", "note")
	if err != nil {
		t.Fatal(err)
	}
	d := counters.Declaration{
		Info:    testkit.Info{Name: "runtime", Summary: "declared at run time", Example: "runtime", SQL: counters.TestSQL},
		SeedSQL: []string{`INSERT INTO tellers (bid, tid) SELECT 1, h FROM generate_series(0, $1 - 1) h`},
		Request: func(i int64, h int) [][]counters.Delta {
			return [][]counters.Delta{{change.Delta(tellers.Row(counters.Int(1), counters.Int(int64(h))), counters.Int(i), counters.Text(fmt.Sprint(i)))}}
		},
		HotSet: func(r *testkit.Run) func(int64) int {
			hot := int64(r.Config().HotKeys)
			return func(i int64) int {
				if i%5 == 0 {
					return int(i/5%(hot-1)) + 1
				}
				return 0
			}
		},
	}
	counters.KitClaim().Declare(&d)
	s := counters.New(d)
	const n, hot = 50, 3
	r := suitetest.Seeded(t, s, hot, n)
	writeCompacted(t, s, r, requests(0, n)...)
	var set0 int64
	if err := r.Admin().QueryRow(ctx, `SELECT balance FROM tellers WHERE tid = 0`).Scan(&set0); err != nil {
		t.Fatal(err)
	}
	if want := int64(n*(n-1)/2 - (0 + 5 + 10 + 15 + 20 + 25 + 30 + 35 + 40 + 45)); set0 != want {
		t.Errorf("hot set 0 holds %d, want %d (every request not a multiple of 5)", set0, want)
	}
	if f := failedChecks(t, s, r, applied{n: n}); len(f) != 0 {
		t.Errorf("checks failed: %v", f)
	}
	if _, err := r.Admin().Exec(ctx, `UPDATE tellers SET note = '1' WHERE tid = 2`); err != nil {
		t.Fatal(err)
	}
	if f := failedChecks(t, s, r, applied{n: n}); len(f) != 2 || !strings.HasPrefix(f[0], "tellers.note rows holding a value a succeeded request wrote") ||
		!strings.HasPrefix(f[1], "hot row sets whose every counter is exact") {
		t.Errorf("a note no request of the row wrote: failed %v, want the note's check and the hot sets'", f)
	}
}

// TestVerifyOnMariaDB is TestVerifyIsExactAndCatchesEveryColumn and Replayed on MySQL, at the
// statements' level (a database of the test's own on the shared MariaDB, the suite's steps
// without a run): the declared suite seeded, unslotted and in 3 slots, its requests written
// through its writer compacted, again (every source claimed before), record by record, and
// overlapping, verify exactly; then Verify fails once any one column, slot, claim or row is
// off — a text changed in its case included, which a case-blind collation would miss — and
// when a request it expects was never written.
func TestVerifyOnMariaDB(t *testing.T) {
	t.Parallel()
	for _, slots := range []int{0, 3} {
		t.Run(fmt.Sprintf("%d slots", slots), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			d := mariadbtest.New(t)
			d.Apply(t, os.DirFS("../../schema"), "mysql/*.sql")
			d.Apply(t, counters.TestSQL, "mysql/*.sql")
			conn := d.Dedicated(t)
			const n, hot = 40, 3
			on, err := declared(false).OnDialect(sqldb.MySQL, hot, slots)
			if err != nil {
				t.Fatal(err)
			}
			if err := on.Seed(ctx, conn); err != nil {
				t.Fatal(err)
			}
			write := func(compact bool, ids ...int64) {
				t.Helper()
				var batch []counters.Record
				for _, i := range ids {
					batch = append(batch, on.Records(i)...)
				}
				if compact {
					batch = queue.Compact(batch, func(rec counters.Record) counters.Key { return rec.Key }, (*counters.Record).Merge, counters.CompareKeys)
				}
				if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
					_, err := on.Writer(compact).WriteBatch(ctx, tx, batch)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			write(true, requests(0, n/2)...)
			write(true, requests(0, n/2)...) // the retried batch
			for i := int64(0); i < n/2; i += 7 {
				write(false, i) // the fallback, record by record
			}
			write(true, requests(n/4, n)...) // overlapping: only n/2.. are new
			failed := func(q sqldb.Querier, res testkit.Result) []string {
				t.Helper()
				checks, err := on.Verify(ctx, q, testkit.AsyncCompact, res)
				return failedOf(t, checks, err)
			}
			all := applied{n: n}
			if f := failed(conn, all); len(f) != 0 {
				t.Fatalf("checks failed on exact rows: %v", f)
			}
			if f := failed(conn, applied{n: n + 1}); len(f) == 0 {
				t.Error("a request that was never written passed as applied")
			}
			tamperingFails(t, conn, func(tx sqldb.Tx) []string { return failed(tx, all) })
		})
	}
}
