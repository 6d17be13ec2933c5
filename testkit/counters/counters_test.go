package counters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// TestAmounts: a numeric column's value reads the database's text exactly and writes it as
// PostgreSQL writes a numeric(20,8) (package decimal's tests hold the arithmetic).
func TestAmounts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{{"0.001", "0.00100000"}, {"12", "12.00000000"}, {"-0.5", "-0.50000000"}, {"0.00000001", "0.00000001"}} {
		v, err := parseValue(TypeNumeric, c.in)
		if err != nil || v.String() != c.want || v != Amount(v.Decimal()) {
			t.Errorf("parseValue(numeric, %q) = %v, %v; want %s", c.in, v, err, c.want)
		}
	}
	if _, err := parseValue(TypeNumeric, "0.000000001"); err == nil || !strings.Contains(err.Error(), `"0.000000001" has more than 8 decimal places`) {
		t.Errorf("9 decimals: %v", err)
	}
}

// at is a time some seconds after a fixed start.
func at(seconds int) time.Time { return time.Date(2026, 1, 1, 0, 0, seconds, 0, time.UTC) }

var (
	tellerAll    = Tellers.MustChange("balance", "highest", "lowest", "note", "changed")
	tellerNote   = Tellers.MustChange("note")
	tellerAdd    = Tellers.MustChange("balance", "changed")
	deviceUse    = Devices.MustChange("uses", "spent", "seen_at", "seen_from", "touched")
	deviceCount  = Devices.MustChange("uses")
	teller12     = Tellers.Row(Int(1), Int(2))
	deviceLaptop = Devices.Row(Text("laptop"))
)

// merged folds ds into the first, in the order given.
func merged(ds ...Delta) Delta {
	d := ds[0]
	for _, n := range ds[1:] {
		d.Merge(n)
	}
	return d
}

// value is the merged delta's value of column name.
func value(t *testing.T, d Delta, name string) Value {
	t.Helper()
	p := d.Change.pos[d.Change.table.index[name]]
	if p < 0 {
		t.Fatalf("merged delta leaves out %s", name)
	}
	return d.Values[p]
}

// TestMergeRules: Add sums, Greatest and Least keep the extreme, Assign keeps the later
// request's value (within a request the later position's) whatever order the deltas merge in,
// FollowsNewest follows its column (on a tie, the later delta), deltas of different columns
// of a row merge into one that writes both, and the deltas merged from are left as they were.
func TestMergeRules(t *testing.T) {
	a := tellerAll.Delta(teller12, Int(5), Int(10), Int(10), Text("request 7, second"))
	a.Order = Stamp(7, 1)
	b := tellerAll.Delta(teller12, Int(-2), Int(30), Int(3), Text("request 9"))
	b.Order = Stamp(9, 0)
	c := tellerAll.Delta(teller12, Int(1), Int(20), Int(-4), Text("request 7, first"))
	c.Order = Stamp(7, 0)
	note := tellerNote.Delta(teller12, Text("request 8"))
	note.Order = Stamp(8, 0)
	for _, order := range [][]Delta{{a, b, c, note}, {c, note, a, b}, {b, a, note, c}, {note, c, b, a}} {
		d := merged(order...)
		if got := value(t, d, "balance").Int64(); got != 4 {
			t.Errorf("balance %d, want 4", got)
		}
		if hi, lo := value(t, d, "highest").Int64(), value(t, d, "lowest").Int64(); hi != 30 || lo != -4 {
			t.Errorf("highest %d lowest %d, want 30 and -4", hi, lo)
		}
		if got := value(t, d, "note").String(); got != "request 9" {
			t.Errorf("merged in the order %v: note %q, want request 9's", []string{order[0].Values[len(order[0].Values)-1].String()}, got)
		}
		if d.Change != tellerAll {
			t.Errorf("merged change writes %v", d.Change.Columns())
		}
	}
	if got := value(t, merged(c, a), "note").String(); got != "request 7, second" {
		t.Errorf("within request 7: note %q, want the later statement's", got)
	}
	if got := value(t, merged(a, c), "note").String(); got != "request 7, second" {
		t.Errorf("within request 7, merged backwards: note %q, want the later statement's", got)
	}
	if a.Values[0].Int64() != 5 || c.Values[0].Int64() != 1 {
		t.Errorf("merging changed the deltas merged from: %v %v", a.Values, c.Values)
	}

	// FollowsNewest: the address of the newest use; on a tie the later delta's.
	use := func(n, seconds int, from string) Delta {
		d := deviceUse.Delta(deviceLaptop, Int(1), Amount(decimal.Decimal(n)), Time(at(seconds)), Text(from))
		d.Order = Stamp(int64(n), 0)
		return d
	}
	d := merged(use(1, 2, "10.0.0.2"), use(2, 1, "10.0.0.1"), deviceCount.Delta(deviceLaptop, Int(1)))
	if value(t, d, "uses").Int64() != 3 || value(t, d, "spent").Decimal() != 3 || !value(t, d, "seen_at").Time().Equal(at(2)) ||
		value(t, d, "seen_from").String() != "10.0.0.2" {
		t.Errorf("newest wins broken: %v", d.Values)
	}
	d.Merge(use(3, 2, "10.0.0.9"))
	if got := value(t, d, "seen_from").String(); got != "10.0.0.9" {
		t.Errorf("tie: address %s, want the later 10.0.0.9", got)
	}
	if got := value(t, merged(use(4, 2, "later"), use(3, 2, "earlier")), "seen_from").String(); got != "later" {
		t.Errorf("tie merged backwards: address %s, want the later request's", got)
	}
}

func TestCompactSortsAndMerges(t *testing.T) {
	in := []Delta{
		deviceCount.Delta(deviceLaptop, Int(1)),
		tellerAdd.Delta(Tellers.Row(Int(2), Int(1)), Int(1)),
		tellerAdd.Delta(Tellers.Row(Int(1), Int(2)), Int(1)),
		tellerAdd.Delta(Tellers.Row(Int(2), Int(1)), Int(2)),
	}
	out := Compact(in)
	if len(out) != 3 || out[0].Table != "devices" || out[1].Key != Tellers.Row(Int(1), Int(2)) || out[2].Key != Tellers.Row(Int(2), Int(1)) ||
		out[2].Values[0].Int64() != 3 {
		t.Errorf("Compact = %+v", out)
	}
}

func seed(t *testing.T, conn sqldb.Querier) {
	t.Helper()
	_, err := conn.Exec(context.Background(), `
		INSERT INTO tellers (bid, tid) VALUES (1, 1), (1, 2), (2, 1);
		INSERT INTO devices (name, owner) VALUES ('laptop', 'o'), ('phone', 'o');`)
	if err != nil {
		t.Fatal(err)
	}
}

// deltasFor are n requests' deltas: each adds to a teller, assigns it a note, and records a
// device's use; every 4th request also notes the other teller alone (a second shape of the
// table in one batch).
func deltasFor(n int) []Delta {
	var ds []Delta
	for i := 0; i < n; i++ {
		teller := Tellers.Row(Int(1), Int(int64(1+i%2)))
		device := "laptop"
		if i%3 == 0 {
			device = "phone"
		}
		part := []Delta{
			tellerAll.Delta(teller, Int(int64(i%7-3)), Int(int64(i*5%11)), Int(int64(i*3%13)), Text(fmt.Sprint("note ", i))),
			deviceUse.Delta(Devices.Row(Text(device)), Int(1), Amount(100000), Time(at(i)), Text(fmt.Sprint("10.0.0.", i%10))),
		}
		if i%4 == 0 {
			part = append(part, tellerNote.Delta(Tellers.Row(Int(2), Int(1)), Text(fmt.Sprint("alone ", i))))
		}
		for k := range part {
			part[k].Order = Stamp(int64(i), k)
		}
		ds = append(ds, part...)
	}
	return ds
}

// tableText is every row of the test tables as text, in key order (changed and touched:
// whether set).
func tableText(t *testing.T, conn sqldb.Querier) string {
	t.Helper()
	var s string
	err := conn.QueryRow(context.Background(), `SELECT
		(SELECT string_agg(concat_ws(' ', bid, tid, balance, highest, lowest, note, changed IS NOT NULL), '; ' ORDER BY bid, tid) FROM tellers)
		|| ' | ' ||
		(SELECT string_agg(concat_ws(' ', name, slot, uses, spent, extract(epoch FROM seen_at)::int8, seen_from, touched IS NOT NULL), '; ' ORDER BY name, slot) FROM devices)`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Apply (compacted) and ApplyEach (one UPDATE per delta) must leave identical rows, and the
// outbox path must too, with every column's Op as declared.
func TestApplyApplyEachAndOutboxAgree(t *testing.T) {
	ctx := context.Background()
	const n = 30
	ds := deltasFor(n)
	var got []string
	for _, path := range []string{"apply", "each", "outbox"} {
		target := testdb.New(t, TestSQL)
		conn := sqldb.PgxConn(target.Admin())
		seed(t, conn)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ops int
		switch path {
		case "apply":
			ops, err = Apply(ctx, tx, ds)
			if err == nil && ops != 2 {
				t.Errorf("Apply sent %d statements, want 2 (one per table)", ops)
			}
		case "each":
			ops, err = ApplyEach(ctx, tx, ds)
			if err == nil && ops != len(ds) {
				t.Errorf("ApplyEach sent %d statements, want %d", ops, len(ds))
			}
		case "outbox":
			for i := 0; i < len(ds) && err == nil; i += 5 {
				err = InsertOutbox(ctx, tx, ds[i:min(i+5, len(ds))])
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if path == "outbox" {
			connect := func(ctx context.Context) (sqldb.Conn, error) {
				conn, err := target.Connect(ctx, "hotspotkit-flush")
				return sqldb.PgxConn(conn), err
			}
			o := NewOutbox(connect, []*Table{Tellers, Devices}, 7, 5*time.Millisecond)
			o.Pause() // a paused outbox claims nothing until Resume
			paused, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			if n, err := o.FlushOnce(paused); n != 0 || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("paused FlushOnce: claimed %d, %v; want 0 and the deadline", n, err)
			}
			cancel()
			if st := o.Stats(); st.RowsClaimed != 0 {
				t.Errorf("paused outbox claimed %d", st.RowsClaimed)
			}
			o.Resume()
			o.Start(ctx)
			if err := o.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			o.Stop()
			st := o.Stats()
			if st.RowsClaimed != int64(len(ds)) {
				t.Errorf("outbox claimed %d, want %d", st.RowsClaimed, len(ds))
			}
			var pending int64
			if err := conn.QueryRow(ctx, OutboxPendingSQL).Scan(&pending); err != nil || pending != 0 {
				t.Errorf("pending after drain = %d (%v)", pending, err)
			}
			o.Close(ctx)
		}
		got = append(got, tableText(t, conn))
	}
	for i, g := range got {
		if g != deltasFor30 {
			t.Errorf("path %d:\n got %s\nwant %s", i, g, deltasFor30)
		}
	}
}

// deltasFor30 is what deltasFor(30) leaves in the test tables as tableText shows them, by
// hand: teller (1,1) takes the even requests, (1,2) the odd ones; (2,1) only notes.
const deltasFor30 = "1 1 -3 10 0 note 28 t; 1 2 -2 10 0 note 29 t; 2 1 0 alone 28 f | " +
	"laptop 0 20 0.02000000 1767225629 10.0.0.9 t; phone 0 10 0.01000000 1767225627 10.0.0.7 t"

func TestApplyRejectsMissingRow(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t, TestSQL)
	for name, apply := range map[string]func(context.Context, sqldb.Tx, []Delta) (int, error){"Apply": Apply, "ApplyEach": ApplyEach} {
		tx, err := sqldb.PgxConn(target.Admin()).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := apply(ctx, tx, []Delta{tellerAdd.Delta(Tellers.Row(Int(9), Int(9)), Int(1))}); err == nil {
			t.Errorf("%s: a delta for a row that does not exist was applied silently", name)
		}
		_ = tx.Rollback(ctx)
	}
}

// TestNewTableRefuses: declarations that cannot be applied or verified are refused.
func TestNewTableRefuses(t *testing.T) {
	key := []Column{{Name: "id", Type: "text"}}
	for name, spec := range map[string]TableSpec{
		"no key":               {Name: "t", Columns: []Column{{Name: "n", Type: "bigint", Op: Add}}},
		"a float":              {Name: "t", Key: key, Columns: []Column{{Name: "n", Type: "double precision", Op: Add}}},
		"no op":                {Name: "t", Key: key, Columns: []Column{{Name: "n", Type: "bigint"}}},
		"adding text":          {Name: "t", Key: key, Columns: []Column{{Name: "n", Type: "text", Op: Add}}},
		"assign in slots":      {Name: "t", Key: key, Slotted: true, Columns: []Column{{Name: "n", Type: "text", Op: Assign}}},
		"following an add":     {Name: "t", Key: key, Columns: []Column{{Name: "n", Type: "bigint", Op: Add}, {Name: "ip", Type: "text", Op: FollowsNewest, Follows: "n"}}},
		"a column named slot":  {Name: "t", Key: key, Columns: []Column{{Name: "slot", Type: "bigint", Op: Add}}},
		"a timestamp key":      {Name: "t", Key: []Column{{Name: "at", Type: "timestamptz"}}, Columns: []Column{{Name: "n", Type: "bigint", Op: Add}}},
		"server time not time": {Name: "t", Key: key, Columns: []Column{{Name: "n", Type: "bigint", Op: ServerTime}}},
	} {
		if _, err := NewTable(spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Devices.Change("seen_from"); err == nil {
		t.Error("a change writing a FollowsNewest column without the one it follows was accepted")
	}
}

// TestDescribe declares a table from the catalog, at run time, as a script suite would: its
// key in primary-key order and types, its slot, its other columns, and its slot copies.
func TestDescribe(t *testing.T) {
	checkDescribe(t, sqldb.PgxConn(testdb.New(t, TestSQL).Admin()), "integer", "timestamp with time zone")
}

// checkDescribe describes the test tables on conn, whose catalog spells their key's type
// intType and a time's timeType: the key in primary-key order, the slot, the other columns,
// the slot copies; the described table's hot columns; a key column refused as one; a table
// without a primary key, or none at all, refused.
func checkDescribe(t *testing.T, conn sqldb.Querier, intType, timeType string) {
	t.Helper()
	ctx := context.Background()
	spec, err := Describe(ctx, conn, "tellers")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Key) != 2 || spec.Key[0] != (Column{Name: "bid", Type: intType}) || spec.Key[1] != (Column{Name: "tid", Type: intType}) ||
		spec.Slotted || len(spec.Columns) != 6 || spec.Columns[4] != (Column{Name: "changed", Type: timeType}) {
		t.Errorf("tellers: %+v", spec)
	}
	devices, err := Describe(ctx, conn, "devices")
	if err != nil {
		t.Fatal(err)
	}
	if !devices.Slotted || fmt.Sprint(devices.SlotCopies) != "[owner]" || devices.Key[0].Name != "name" {
		t.Errorf("devices: %+v", devices)
	}
	hot, err := spec.Writing(Column{Name: "balance", Op: Add}, Column{Name: "note", Op: Assign}, Column{Name: "changed", Op: ServerTime})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewTable(hot); err != nil {
		t.Errorf("the described table: %v", err)
	}
	if _, err := spec.Writing(Column{Name: "bid", Op: Add}); err == nil {
		t.Error("a key column taken as a hot column")
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE history (tid int, delta int)`); err != nil {
		t.Fatal(err)
	}
	if _, err := Describe(ctx, conn, "history"); err == nil {
		t.Error("a table without a primary key was described")
	}
	if _, err := Describe(ctx, conn, "nowhere"); err == nil {
		t.Error("a table that does not exist was described")
	}
}

func TestSlotsPickAndWorker(t *testing.T) {
	hash := Slots{N: 4}
	seen := map[int]int{}
	for i := range 400 {
		id := "req-" + strconv.Itoa(i)
		s := hash.Of(int64(i), id)
		if s < 1 || s > 4 || hash.Of(int64(i), id) != s {
			t.Fatalf("Pick(%s) = %d, again %d: want one slot of 1..4, the same every time", id, s, hash.Of(int64(i), id))
		}
		seen[s]++
	}
	for s := 1; s <= 4; s++ {
		if seen[s] < 50 {
			t.Errorf("slot %d got %d of 400 requests: the hash does not spread (%v)", s, seen[s], seen)
		}
	}
	if (Slots{N: 1}).Of(1, "req-1") != 0 || (Slots{N: 1}).Worker() != nil {
		t.Error("one slot must stay unslotted (slot 0, the queue's own routing)")
	}
	rr := Slots{N: 4, Pick: testkit.SlotPickRoundRobin}
	for i := range int64(8) {
		if got := rr.Of(i, "req-"+strconv.FormatInt(i, 10)); got != 1+int(i%4) {
			t.Errorf("round-robin: request %d got slot %d, want %d", i, got, 1+i%4)
		}
	}
	session := Slots{N: 4, Pick: testkit.SlotPickSession}
	for i := range int64(8) {
		if got := session.Of(i, "req-"+strconv.FormatInt(i, 10)); got != 1+int(i%4) {
			t.Errorf("session, outside a transaction (the queue modes): request %d got slot %d, want %d (round-robin)", i, got, 1+i%4)
		}
	}
	worker := hash.Worker()
	workers := map[int]bool{}
	for s := 1; s <= 4; s++ {
		workers[worker(Key{Table: "devices", Row: "laptop", Slot: s}, 4)] = true
	}
	if len(workers) != 4 {
		t.Errorf("4 slots of one row on 4 workers went to %d workers, want 4", len(workers))
	}
}

// TestSessionPickFollowsTheSeat: with --slot-pick session a write in a transaction takes the
// slot of its connection's seat in the load pool (seat mod N, plus 1), whatever slot the
// request would have had; the other picks keep the request's slot.
func TestSessionPickFollowsTheSeat(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	raw, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 3, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	pool := sqldb.PgxPool(raw)
	var got2, got3, gotHash []int
	for range 3 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		got2 = append(got2, Slots{N: 2, Pick: testkit.SlotPickSession}.InTx(tx, 7))
		got3 = append(got3, Slots{N: 3, Pick: testkit.SlotPickSession}.InTx(tx, 7))
		gotHash = append(gotHash, Slots{N: 3}.InTx(tx, 2))
	}
	if s := slices.Sorted(slices.Values(got3)); !slices.Equal(s, []int{1, 2, 3}) {
		t.Errorf("3 sessions over 3 slots wrote slots %v, want 1, 2, 3 once each", got3)
	}
	if s := slices.Sorted(slices.Values(got2)); !slices.Equal(s, []int{1, 1, 2}) {
		t.Errorf("3 sessions over 2 slots wrote slots %v, want 1, 1, 2", got2)
	}
	if !slices.Equal(gotHash, []int{2, 2, 2}) {
		t.Errorf("hash pick in a transaction: %v, want the request's slot 2 each time", gotHash)
	}
	if got := (Slots{N: 1, Pick: testkit.SlotPickSession}).InTx(nil, 0); got != 0 {
		t.Errorf("unslotted: slot %d, want 0", got)
	}
}
