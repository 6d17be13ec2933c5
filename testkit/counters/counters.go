// Package counters owns hot counter rows as deltas, for any table a suite declares
// (table.go: a TableSpec names a table, its key columns and the columns deltas write, each
// with how it takes a delta — Add, Greatest, Least, Assign, FollowsNewest, ServerTime): how a
// delta folds into another for the same row (slot compaction), how deltas are written (one
// array-based UPDATE per table per batch, or one UPDATE per delta in order: statements.go,
// composed once per table and shape), the outbox that defers them (counter_outbox, claimed
// with SKIP LOCKED, aggregated per row and applied by a flush loop; Outbox is its mode, the
// loop a testkit.FlushLoop the engine pauses and reports on), and slotted rows (slots.go:
// --slots splits each hot logical row of a slotted table into N physical rows, a write adds
// to one, reads sum them).
//
// On these it builds counter-style suites from a Declaration (suite.go): a suite says which
// hot rows it seeds, which deltas each request makes and how a write is claimed once, and gets
// its seed, every mode, reconciliation and an exact verification (verify.go) from here. It
// knows no table of its own but its outbox, claims and openings (package schema's
// 004_counters.sql); it is a library on package testkit's API and knows nothing of the engine.
// It writes through package sqldb's handles, in each database's own statements, one set per
// dialect chosen once per run (dialect.go): PostgreSQL's (arrays, pipelined batches and COPY
// through the pgx transaction under a sqldb.Tx: sqldb.RequirePgx) and MySQL's and MariaDB's
// (mysql.go: JSON_TABLE, multi-row INSERTs). A declared suite says its own SQL in MySQL's
// dialect too (Declaration.MySQL), or refuses a run there before it seeds (statementsFor).
package counters

import (
	"cmp"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Key is one physical hot row: the slot that deltas are compacted into. Row is its key
// columns' values (Table.Row); slot 0 is the one row of an unslotted logical row; with
// --slots N a logical row of a slotted table is the N rows of slots 1..N (see slots.go), and a
// delta with Slot > 0 adds to exactly that one.
type Key struct {
	Table string
	Row   string
	Slot  int
}

// CompareKeys orders keys by table, row, then slot. Every writer applies deltas in this
// order, so two transactions touching the same rows lock them in the same order and cannot
// deadlock.
func CompareKeys(a, b Key) int {
	if c := cmp.Compare(a.Table, b.Table); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	return cmp.Compare(a.Slot, b.Slot)
}

// slotted reports whether the delta names one slot of a slotted row.
func (k Key) slotted() bool { return k.Slot > 0 }

// Delta is a change to one hot row: values for the columns of its Change (Change.Delta); a
// column it leaves out is unchanged.
type Delta struct {
	Key
	Change *Change
	Values []Value // one per Change column that takes a value, in column order
	// Order is where the delta stands among the requests' writes (Stamp: the package sets it
	// on the deltas of a declared suite): of two deltas for a row, the later one's Assign
	// value wins, and so does its value on a Greatest or Least tie.
	Order int64
	// ords are, once a merge made the delta's Values its own, the Order each value came
	// with (nil before: every value came with Order); later merges fold into them.
	ords []int64
}

// Stamp is the Order of the delta at position (its place among the deltas of request, in the
// order the request's statements write them).
func Stamp(request int64, position int) int64 { return request<<16 | int64(position) }

// maxPositions is how many deltas one request may make (Stamp's low bits).
const maxPositions = 1 << 16

// ord is the Order value k of d came with.
func (d *Delta) ord(k int) int64 {
	if d.ords != nil {
		return d.ords[k]
	}
	return d.Order
}

// Merge folds a delta for the same row into d, as applying d and then n would leave the row
// (Assign: the later Order wins). The Values of n, and those d was made with, are not changed.
func (d *Delta) Merge(n Delta) {
	t := d.Change.table
	c := d.Change
	if n.Change != c {
		c = t.changeOf(c.mask | n.Change.mask)
	}
	if d.ords == nil || c != d.Change { // d's values become its own, in the merged change's layout
		vals, ords := make([]Value, len(c.valued)), make([]int64, len(c.valued))
		for k, col := range c.valued {
			if p := d.Change.pos[col]; p >= 0 { // else left zero (no type): n's, below
				vals[k], ords[k] = d.Values[p], d.ord(p)
			}
		}
		d.Values, d.ords, d.Change = vals, ords, c
	}
	// Which of n's Greatest values win: decided before any is folded, as FollowsNewest
	// columns follow them.
	var nWins uint64
	for k, col := range c.valued {
		np := n.Change.pos[col]
		if np < 0 {
			continue
		}
		if op := t.spec.Columns[col].Op; op == Greatest || op == Least || op == Assign {
			if d.Values[k].typ == 0 || later(d.Values[k], d.ords[k], n.Values[np], n.ord(np), op) {
				nWins |= 1 << col
			}
		}
	}
	for k, col := range c.valued {
		np := n.Change.pos[col]
		if np < 0 {
			continue
		}
		take := d.Values[k].typ == 0 // only n writes the column
		switch op := t.spec.Columns[col].Op; {
		case take:
		case op == Add:
			d.Values[k].n += n.Values[np].n
			d.ords[k] = max(d.ords[k], n.ord(np))
		case op == FollowsNewest:
			take = nWins&(1<<t.follows[col]) != 0
		default:
			take = nWins&(1<<col) != 0
		}
		if take {
			d.Values[k], d.ords[k] = n.Values[np], n.ord(np)
		}
	}
	d.Order = max(d.Order, n.Order)
}

// later reports whether w (of order word) replaces v (of order vord) under op: the greater
// (Greatest), the lesser (Least) or, on a tie and for Assign, the later one.
func later(v Value, vord int64, w Value, word int64, op Op) bool {
	c := w.compare(v)
	switch {
	case op == Greatest && c != 0:
		return c > 0
	case op == Least && c != 0:
		return c < 0
	}
	return word >= vord
}

// Compact merges deltas per row and returns one delta per row, sorted by CompareKeys: the
// queue's compaction (queue.Compact) applied to deltas.
func Compact(deltas []Delta) []Delta {
	return queue.Compact(deltas, func(d Delta) Key { return d.Key }, (*Delta).Merge, CompareKeys)
}

// Apply writes deltas compacted: it merges them per row and sends one UPDATE per table, in
// key order (on PostgreSQL pipelined in one round trip). It returns the number of statements
// sent.
func Apply(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	return dialectFor(tx).apply(ctx, tx, deltas)
}

// applyPostgres is Apply on PostgreSQL: the UPDATEs pipelined.
func applyPostgres(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	ptx, err := sqldb.RequirePgx(tx)
	if err != nil {
		return 0, err
	}
	var b pgx.Batch
	groups := queueApply(&b, deltas)
	if len(groups) == 0 {
		return 0, nil
	}
	br := ptx.SendBatch(ctx, &b)
	if err := readApply(br, groups); err != nil {
		br.Close()
		return len(groups), err
	}
	return len(groups), br.Close()
}

// queueApply queues Apply's UPDATEs of deltas on b, merged per row, one per table in key
// order, and returns the deltas of each, in the order their results come back (readApply).
func queueApply(b *pgx.Batch, deltas []Delta) [][]Delta {
	groups := groupsOf(Compact(deltas))
	for _, g := range groups {
		sql, args := arrayUpdate(g)
		b.Queue(sql, args...)
	}
	return groups
}

// groupsOf splits merged deltas, sorted by CompareKeys, into the groups one UPDATE writes:
// the deltas of one table, all slotted or none.
func groupsOf(merged []Delta) [][]Delta {
	var groups [][]Delta
	for start := 0; start < len(merged); {
		end := start
		for end < len(merged) && merged[end].Table == merged[start].Table && merged[end].slotted() == merged[start].slotted() {
			end++
		}
		groups = append(groups, merged[start:end])
		start = end
	}
	return groups
}

// readApply reads the results of queueApply's UPDATEs: every delta's row must exist.
func readApply(br pgx.BatchResults, groups [][]Delta) error {
	for _, g := range groups {
		tag, err := br.Exec()
		if err == nil {
			err = checkAffected(g, tag.RowsAffected())
		}
		if err != nil {
			return fmt.Errorf("applying %d %s deltas: %w", len(g), g[0].Table, err)
		}
	}
	return nil
}

// ApplyEach writes every delta as its own single-row UPDATE, one round trip each, in the
// order given (no compaction). It returns the number of statements sent.
func ApplyEach(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	return dialectFor(tx).applyEach(ctx, tx, deltas)
}

// applyEachPostgres is ApplyEach on PostgreSQL.
func applyEachPostgres(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	for i, d := range deltas {
		sql, args := scalarUpdate(d)
		n, err := tx.Exec(ctx, sql, args...)
		if err == nil {
			err = checkAffected(deltas[i:i+1], n)
		}
		if err != nil {
			return i + 1, fmt.Errorf("applying a delta to %s: %w", d.Change.table.FormatKey(d.Key), err)
		}
	}
	return len(deltas), nil
}

// checkAffected fails when a delta's target row does not exist: a counter must never be
// dropped silently.
func checkAffected(ds []Delta, affected int64) error {
	if affected != int64(len(ds)) {
		return fmt.Errorf("%d of %d target rows exist", affected, len(ds))
	}
	return nil
}
