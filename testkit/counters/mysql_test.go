package counters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// The package's statements on MySQL, each against a database of the test's own on the
// shared MariaDB (internal/testhelp/mariadbtest): the tests wait on the server, so they run in
// parallel.

// onMariaDB is a database of the test's own on the shared MariaDB with the kit's shared
// tables (package schema's mysql/) and the package's test tables (TestSQL's mysql/).
func onMariaDB(t testing.TB) *mariadbtest.DB {
	t.Helper()
	d := mariadbtest.New(t)
	d.Apply(t, os.DirFS("../../schema"), "mysql/*.sql")
	d.Apply(t, TestSQL, "mysql/*.sql")
	return d
}

// connectTo is a flush loop's connect on d.
func connectTo(d *mariadbtest.DB) func(context.Context) (sqldb.Conn, error) {
	return func(ctx context.Context) (sqldb.Conn, error) { return sqldb.ConnectMySQL(ctx, d.Options(1)) }
}

// seededMariaDB is onMariaDB, in parallel with the other tests that wait on the server, its
// test tables seeded (seedMySQL), and a connection of its own on it.
func seededMariaDB(t *testing.T) (*mariadbtest.DB, sqldb.Conn) {
	t.Helper()
	t.Parallel()
	d := onMariaDB(t)
	conn := d.Dedicated(t)
	seedMySQL(t, conn)
	return d, conn
}

func seedMySQL(t *testing.T, conn sqldb.Querier) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO tellers (bid, tid) VALUES (1, 1), (1, 2), (2, 1)`,
		`INSERT INTO devices (name, owner) VALUES ('laptop', 'o'), ('phone', 'o')`,
	} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// tableTextMySQL is tableText on MySQL: every row of the test tables as text, in key order.
func tableTextMySQL(t *testing.T, conn sqldb.Querier) string {
	t.Helper()
	var s string
	err := conn.QueryRow(context.Background(), `SELECT CONCAT(
		(SELECT GROUP_CONCAT(CONCAT_WS(' ', bid, tid, balance, highest, lowest, note, IF(changed IS NOT NULL, 't', 'f'))
		        ORDER BY bid, tid SEPARATOR '; ') FROM tellers),
		' | ',
		(SELECT GROUP_CONCAT(CONCAT_WS(' ', name, slot, uses, spent, TIMESTAMPDIFF(SECOND, '1970-01-01', seen_at), seen_from,
		        IF(touched IS NOT NULL, 't', 'f')) ORDER BY name, slot SEPARATOR '; ') FROM devices))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMySQLApplyApplyEachAndOutboxAgree is TestApplyApplyEachAndOutboxAgree on MySQL: Apply
// (one UPDATE of a derived table per table), ApplyEach (one single-row UPDATE per delta) and
// the outbox leave the rows PostgreSQL's do, every Op as declared — an Add from a NULL-free
// start, Greatest and Least from NULL, Assign (partial: a teller whose note alone is written),
// FollowsNewest, the server's time (partial too).
func TestMySQLApplyApplyEachAndOutboxAgree(t *testing.T) {
	t.Parallel()
	ds := deltasFor(30)
	for _, path := range []string{"apply", "each", "outbox"} {
		t.Run(path, func(t *testing.T) {
			ctx := context.Background()
			d, conn := seededMariaDB(t)
			if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
				switch path {
				case "apply":
					ops, err := Apply(ctx, tx, ds)
					if err == nil && ops != 2 {
						t.Errorf("Apply sent %d statements, want 2 (one per table)", ops)
					}
					return err
				case "each":
					ops, err := ApplyEach(ctx, tx, ds)
					if err == nil && ops != len(ds) {
						t.Errorf("ApplyEach sent %d statements, want %d", ops, len(ds))
					}
					return err
				}
				for i := 0; i < len(ds); i += 5 {
					if err := InsertOutbox(ctx, tx, ds[i:min(i+5, len(ds))]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if path == "outbox" {
				o := NewOutbox(connectTo(d), []*Table{Tellers, Devices}, 7, 5*time.Millisecond)
				o.Start(ctx)
				if err := o.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				o.Stop()
				if st := o.Stats(); st.RowsClaimed != int64(len(ds)) {
					t.Errorf("outbox claimed %d, want %d", st.RowsClaimed, len(ds))
				}
				o.Close(ctx)
			}
			if got := tableTextMySQL(t, conn); got != deltasFor30 {
				t.Errorf("\n got %s\nwant %s", got, deltasFor30)
			}
		})
	}
}

// TestMySQLApplyRejectsMissingRow: a delta for a row that is not there fails, compacted or
// not (the driver counts the rows an UPDATE matched, clientFoundRows).
func TestMySQLApplyRejectsMissingRow(t *testing.T) {
	ctx := context.Background()
	_, conn := seededMariaDB(t)
	for name, apply := range map[string]func(context.Context, sqldb.Tx, []Delta) (int, error){"Apply": Apply, "ApplyEach": ApplyEach} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ds := []Delta{tellerAdd.Delta(Tellers.Row(Int(1), Int(1)), Int(0)), tellerAdd.Delta(Tellers.Row(Int(9), Int(9)), Int(1))}
		if _, err := apply(ctx, tx, ds); err == nil {
			t.Errorf("%s: a delta for a row that does not exist was applied silently", name)
		}
		_ = tx.Rollback(ctx)
	}
}

// TestMySQLUpdatesLockOnlyTheirRows: the compacted UPDATE finds each row by its primary key,
// read in the order the rows are sent, even on a table of three rows that the optimiser
// would rather scan (and so lock every row of): a transaction that wrote teller (1,1) holds
// no lock on (1,2), whose UPDATE elsewhere goes through at once.
func TestMySQLUpdatesLockOnlyTheirRows(t *testing.T) {
	ctx := context.Background()
	d, conn := seededMariaDB(t)
	other := d.Dedicated(t)
	if _, err := other.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	one := []Delta{tellerAll.Delta(Tellers.Row(Int(1), Int(1)), Int(1), Int(1), Int(1), Text("x")),
		tellerAdd.Delta(Tellers.Row(Int(2), Int(1)), Int(1))}
	for name, apply := range map[string]func(context.Context, sqldb.Tx, []Delta) (int, error){"Apply": Apply, "ApplyEach": ApplyEach} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := apply(ctx, tx, one); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Exec(ctx, "UPDATE tellers SET balance = balance + 1 WHERE bid = 1 AND tid = 2"); err != nil {
			t.Errorf("%s: a row the UPDATE did not write is locked: %v", name, err)
		}
		_ = tx.Rollback(ctx)
	}
	var plan string
	key := groupKey(Compact(one))
	key.arrays = true
	if err := conn.QueryRow(ctx, "EXPLAIN FORMAT=JSON "+Tellers.mysqlStatement(key), Tellers.mysqlRows(key, Compact(one))).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, `"access_type": "eq_ref"`) || !strings.Contains(plan, `"key": "PRIMARY"`) {
		t.Errorf("the compacted UPDATE does not find its rows by the primary key:\n%s", plan)
	}
}

// TestMySQLSlots: SeedSlots splits each seeded row of a slotted table into slots 1..N,
// copying its SlotCopies; deltas in slots write those rows (compacted and not), and the
// logical row is their sum.
func TestMySQLSlots(t *testing.T) {
	ctx := context.Background()
	_, conn := seededMariaDB(t)
	if err := SeedSlots(ctx, conn, 3, Tellers, Devices); err != nil {
		t.Fatal(err)
	}
	var tellers, devices, owned, slots int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM tellers), (SELECT COUNT(*) FROM devices),
		(SELECT COUNT(*) FROM devices WHERE owner = 'o'), (SELECT COUNT(DISTINCT slot) FROM devices WHERE slot BETWEEN 1 AND 3)`).
		Scan(&tellers, &devices, &owned, &slots); err != nil {
		t.Fatal(err)
	}
	if tellers != 3 || devices != 6 || owned != 6 || slots != 3 {
		t.Fatalf("after SeedSlots: %d tellers (want 3: unslotted), %d devices in %d slots, %d owned (want 6 in 3, all owned)", tellers, devices, slots, owned)
	}
	use := func(slot int, n int64) []Delta {
		return InSlot([]Delta{deviceCount.Delta(deviceLaptop, Int(n)), deviceCount.Delta(Devices.Row(Text("phone")), Int(10*n))}, slot)
	}
	if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
		if _, err := Apply(ctx, tx, slices.Concat(use(2, 1), use(3, 2), use(2, 4))); err != nil {
			return err
		}
		_, err := ApplyEach(ctx, tx, use(1, 8))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := conn.QueryRow(ctx, `SELECT GROUP_CONCAT(CONCAT_WS(' ', name, slot, uses) ORDER BY name, slot SEPARATOR '; ') FROM devices`).
		Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "laptop 1 8; laptop 2 5; laptop 3 2; phone 1 80; phone 2 50; phone 3 20"; got != want {
		t.Errorf("slots hold %s, want %s", got, want)
	}
}

// TestMySQLClaims: a claim is one INSERT for a batch no transaction claimed before; a source
// repeated in the batch, or claimed by an earlier one, sends it row by row and is new once;
// labelled parts likewise; and a claim of a source another transaction holds uncommitted waits
// for it, then finds it claimed.
func TestMySQLClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := onMariaDB(t)
	d.MustExec(t, `CREATE TABLE labelled (request_index BIGINT NOT NULL, kind VARCHAR(32) NOT NULL, PRIMARY KEY (request_index, kind))`)
	conn := d.Dedicated(t)
	src := func(request int64, part int) Source { return Source{Request: request, Part: part} }
	for _, claim := range []PartClaim{KitClaim(), {Table: "labelled", RequestColumn: "request_index", PartColumn: "kind",
		PartLabels: []string{"proxy", "token"}}} {
		for _, c := range []struct {
			batch, fresh []Source
			ops          int
		}{
			{[]Source{src(1, 0), src(2, 0), src(1, 1)}, []Source{src(1, 0), src(2, 0), src(1, 1)}, 1},
			{[]Source{src(3, 0), src(1, 0), src(3, 0), src(4, 1)}, []Source{src(3, 0), src(4, 1)}, 5},
			{[]Source{src(2, 0)}, []Source{}, 1},
			{[]Source{src(5, 1), src(5, 1)}, []Source{src(5, 1)}, 3},
		} {
			var fresh []Source
			var ops int
			if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) (err error) {
				fresh, ops, err = claim.Claim(ctx, tx, c.batch)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fresh, c.fresh) || ops != c.ops {
				t.Errorf("%s: claiming %v: fresh %v in %d statements, want %v in %d", claim.Table, c.batch, fresh, ops, c.fresh, c.ops)
			}
		}
		var rows int64
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM "+myIdent(claim.Table)).Scan(&rows); err != nil || rows != 6 {
			t.Errorf("%s holds %d rows (%v), want 6", claim.Table, rows, err)
		}
	}

	// A claim in flight elsewhere: the second claim waits for its COMMIT, then finds it.
	first, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fresh, _, err := KitClaim().Claim(ctx, first, []Source{src(9, 0)}); err != nil || len(fresh) != 1 {
		t.Fatalf("first claim: %v %v", fresh, err)
	}
	second := d.Dedicated(t)
	type result struct {
		fresh []Source
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = sqldb.BeginFunc(ctx, second, func(tx sqldb.Tx) (err error) {
			r.fresh, _, err = KitClaim().Claim(ctx, tx, []Source{src(9, 0), src(10, 0)})
			return err
		})
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("a claim of a source claimed by a transaction in flight returned before it committed: %v %v", r.fresh, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || !slices.Equal(r.fresh, []Source{src(10, 0)}) {
		t.Errorf("after the first committed: fresh %v (%v), want request 10's alone", r.fresh, r.err)
	}
}

// TestMySQLOutboxFlushers: a flush skips the outbox rows another transaction holds (it does
// not wait for them), and two flush loops draining one outbox at once apply every delta
// exactly once.
func TestMySQLOutboxFlushers(t *testing.T) {
	ctx := context.Background()
	d, conn := seededMariaDB(t)
	ds := deltasFor(30)
	if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error { return InsertOutbox(ctx, tx, ds) }); err != nil {
		t.Fatal(err)
	}
	holder, err := d.Dedicated(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var held []int64
	rows, err := holder.Query(ctx, `SELECT id FROM counter_outbox WHERE processed_at IS NULL ORDER BY id LIMIT 5 FOR UPDATE`)
	if err == nil {
		held, err = sqldb.CollectRows[int64](rows)
	}
	if err != nil || len(held) != 5 {
		t.Fatalf("holding 5 rows: %v %v", held, err)
	}
	skipping := NewOutbox(connectTo(d), []*Table{Tellers, Devices}, 7, time.Hour)
	defer skipping.Close(ctx)
	quick, cancel := context.WithTimeout(ctx, 20*time.Second)
	n, err := skipping.FlushOnce(quick)
	cancel()
	if err != nil || n != 7 {
		t.Fatalf("a flush beside 5 held rows claimed %d (%v), want 7 others", n, err)
	}
	var pending int64
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM counter_outbox WHERE processed_at IS NULL AND id <= $1`, held[4]).Scan(&pending); err != nil || pending != 5 {
		t.Errorf("the 5 held rows: %d still pending (%v), want 5", pending, err)
	}
	_ = holder.Rollback(ctx)

	flushers := []*OutboxFlusher{skipping, NewOutbox(connectTo(d), []*Table{Tellers, Devices}, 7, time.Millisecond)}
	var wg sync.WaitGroup
	errs := make([]error, len(flushers))
	for i, o := range flushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = o.Drain(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	flushers[1].Close(ctx)
	var claimed int64
	for i, o := range flushers {
		st := o.Stats()
		claimed += st.RowsClaimed
		if st.Calls == 0 || st.Errors != 0 {
			t.Errorf("flusher %d: %+v", i, st)
		}
	}
	if claimed != int64(len(ds)) {
		t.Errorf("the flushers claimed %d deltas, want %d", claimed, len(ds))
	}
	// Every column but an Assign's is the same whatever order the two loops commit in; an
	// Assign takes the value of the flush that commits last, which two loops at once need not
	// keep in the requests' order (one flush loop a run does: the engine's).
	if got, want := assignsMasked(tableTextMySQL(t, conn)), assignsMasked(deltasFor30); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// assignsMasked is a table's text with its Assign column's values (the tellers' notes) left
// out.
func assignsMasked(s string) string {
	return regexp.MustCompile(`(note|alone) \d+`).ReplaceAllString(s, "$1 …")
}

// TestMySQLDescribe is TestDescribe on MySQL: its catalog's types.
func TestMySQLDescribe(t *testing.T) {
	t.Parallel()
	checkDescribe(t, onMariaDB(t).Dedicated(t), "int(11)", "datetime(6)")
}

// tricky are texts whose bytes a statement must carry as they are: quotes, a backslash,
// control characters, characters beyond the basic plane, a byte that starts no character.
var tricky = []string{"", `it's "quoted" \ back`, "tab\tnew\nline\x00nul\x1f", "😀 ü \u2028", "bad \xff byte"}

// TestJSONRows: a batch's JSON array of rows decodes to each row's parameters, a text exactly
// as encoding/json reads it (a byte that starts no character: the replacement character).
func TestJSONRows(t *testing.T) {
	for _, s := range tricky {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil || got != strings.ToValidUTF8(s, "\uFFFD") {
			t.Errorf("%q: decoded %q (%v)", s, got, err)
		}
	}
	ds := Compact([]Delta{tellerAll.Delta(teller12, Int(-5), Int(7), Int(-7), Text(`a "b"`)),
		tellerNote.Delta(Tellers.Row(Int(2), Int(1)), Text("c"))})
	key := groupKey(ds)
	var rows [][]any
	if err := json.Unmarshal([]byte(Tellers.mysqlRows(key, ds)), &rows); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows); got != `[[1 2 -5 7 -7 a "b" 1] [2 1 0 <nil> <nil> c 0]]` {
		t.Errorf("rows %s", got)
	}
}

// TestMySQLTextRoundTrip: a text written compacted or one by one reads back as it was sent
// (a byte that starts no character: the replacement character, which MySQL's strict mode
// would refuse raw).
func TestMySQLTextRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, conn := seededMariaDB(t)
	for _, s := range tricky {
		for name, apply := range map[string]func(context.Context, sqldb.Tx, []Delta) (int, error){"Apply": Apply, "ApplyEach": ApplyEach} {
			s := strings.ToValidUTF8(s, "\uFFFD")
			if err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
				_, err := apply(ctx, tx, []Delta{tellerNote.Delta(teller12, Text(s))})
				return err
			}); err != nil {
				t.Fatalf("%s %q: %v", name, s, err)
			}
			var got string
			if err := conn.QueryRow(ctx, `SELECT note FROM tellers WHERE bid = 1 AND tid = 2`).Scan(&got); err != nil || got != s {
				t.Errorf("%s: wrote %q, read %q (%v)", name, s, got, err)
			}
		}
	}
}

// TestMySQLVersions: the statements need MariaDB 10.6 or MySQL 8.0.4.
func TestMySQLVersions(t *testing.T) {
	for version, ok := range map[string]bool{"10.11.19-MariaDB-0+deb12u1": true, "10.6.0-MariaDB": true, "10.5.27-MariaDB-log": false,
		"11.4.2-MariaDB": true, "8.0.36": true, "8.0.4-rc": true, "8.0.3": false, "5.7.44-log": false, "9.1.0": true, "x": false} {
		if err := mysqlVersionReady(version); (err == nil) != ok {
			t.Errorf("%s: %v", version, err)
		}
	}
}
