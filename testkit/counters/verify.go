package counters

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// Verify checks every hot row exactly against the requests whose writes must be there: its
// opening (what the seed left, read back then: snapshot) with the declared deltas of those
// requests applied, column by column as each column's Op says — Add, Greatest, Least and
// FollowsNewest exactly; Assign as a value one of those requests wrote to the row (which one
// last depends on the order the writes committed), ServerTime as set where one wrote it —
// summed over all hot rows and row by row (summed over each row's slots), each logical row's
// slot count, the claim rows (none in a run that wrote no claim: Declaration.Unclaimed), and
// the outbox left empty (and, in the outbox mode, every delta of those requests processed).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	sql, err := s.statementsFor(r)
	if err != nil {
		return nil, err
	}
	return s.verify(ctx, verification{sql: sql, conn: r.Admin(), checks: r.NewChecks(), hotKeys: r.Config().HotKeys,
		slots: r.Slots(), mode: r.Mode(), hotSet: s.hotSet(r), unclaimed: s.unclaimed(r)}, res)
}

// verification is what Verify checks a run by: its statements, the connection it reads on
// (one session: the rows to read are listed in a temporary table of it), where its checks go,
// the run's hot sets, slots and mode, and whether its requests wrote no claim.
type verification struct {
	sql       runSQL
	conn      sqldb.Querier
	checks    *testkit.Checks
	hotKeys   int
	slots     int
	mode      testkit.Mode
	hotSet    func(int64) int
	unclaimed bool
}

// verify is Verify on v.
func (s *Suite) verify(ctx context.Context, v verification, res testkit.Result) ([]testkit.Check, error) {
	hot := v.hotKeys
	want := s.expected(v.hotKeys, v.hotSet, res)
	if s.d.HottestRows {
		s.noteHottest(want)
	}
	c := v.checks
	exactSets := make([]bool, hot)
	for h := range exactSets {
		exactSets[h] = true
	}
	var others, otherExact int64 // rows of no hot set's (a script's random rows, untouched rows)
	for _, t := range want.tables {
		slots := int64(1)
		if t.table.Slotted() {
			slots = int64(max(v.slots, 1))
		}
		open, got, rest, err := t.read(ctx, v.sql.reads(), v.conn, slots)
		if err != nil {
			return nil, err
		}
		rows := t.rows(open, got)
		exact := make(map[string]bool, len(rows))
		wants := make(map[string]logicalRow, len(rows))
		for _, row := range rows {
			exact[row], wants[row] = true, t.wantRow(row, open[row])
		}
		for _, col := range t.columns() {
			checkColumn(c, t, col, rows, wants, got, exact, rest)
		}
		for _, row := range rows {
			h, inSet := t.sets[row]
			switch {
			case inSet && !exact[row]:
				exactSets[h] = false
			case !inSet:
				others++
				if exact[row] {
					otherExact++
				}
			}
		}
		// The rows read is not, every one of them as seeded: in no hot set, exact, in the layout.
		others, otherExact = others+rest.n, otherExact+rest.n
		inLayout := rest.n
		for _, g := range got {
			if g.slots == slots {
				inLayout++
			}
		}
		c.Int(fmt.Sprintf("%s rows with %d slots each", t.table.Name(), slots), int64(len(got))+rest.n, inLayout)
	}
	exact := int64(0)
	for _, ok := range exactSets {
		if ok {
			exact++
		}
	}
	c.Int("hot row sets whose every counter is exact", int64(hot), exact)
	if others > 0 {
		c.Int("rows of no hot set whose every counter is exact (untouched: as seeded)", others, otherExact)
	}

	var claims, pending, processed int64
	if err := v.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+v.sql.quote(s.d.ClaimTable)+`),
		       (SELECT count(*) FROM counter_outbox WHERE processed_at IS NULL),
		       (SELECT count(*) FROM counter_outbox WHERE processed_at IS NOT NULL)`).Scan(&claims, &pending, &processed); err != nil {
		return nil, fmt.Errorf("counting the claims and the outbox: %w", err)
	}
	if v.unclaimed {
		c.Int(s.d.ClaimTable+" rows: none (the requests ran without a claim)", 0, claims)
	} else {
		c.Int(fmt.Sprintf("%s rows = %d × applied requests", s.d.ClaimTable, s.parts), int64(s.parts)*want.applied, claims)
	}
	c.Int("outbox pending deltas", 0, pending)
	var wantProcessed int64
	if v.mode == Outbox {
		wantProcessed = want.deltas
	}
	c.Int("outbox processed deltas = deltas of the applied requests (outbox mode only)", wantProcessed, processed)
	return c.List(), nil
}

// checkColumn compares column col of every row read: each row's value with what it must hold
// (a mismatch clears the row in exact), and the column over all rows, those not read (rest)
// included.
func checkColumn(c *testkit.Checks, t *expectedTable, col int, rows []string, wants, got map[string]logicalRow, exact map[string]bool, rest untouchedRows) {
	spec := t.table.spec.Columns[col]
	name := t.table.Name() + "." + spec.Name
	var sumWant, sumGot Value            // Add: the sums
	var extWant, extGot cell             // Greatest, Least: the extremes
	var newestWant, newestGot logicalRow // FollowsNewest: the rows of the newest followed value
	switch spec.Op {
	case Add:
		sumWant.n, sumGot.n = rest.fold[col].value.n, rest.fold[col].value.n
	case Greatest, Least:
		extWant, extGot = rest.fold[col], rest.fold[col]
	case FollowsNewest:
		newestWant, newestGot = rest.newest[col], rest.newest[col]
	}
	var written, holding int64 // Assign, ServerTime: rows a request wrote, and of them those right
	for _, row := range rows {
		w, g := wants[row].vals[col], got[row].cell(col)
		ok := w.matches(g)
		switch spec.Op {
		case Add:
			sumWant.n, sumGot.n = sumWant.n+w.value.n, sumGot.n+g.value.n
		case Greatest, Least:
			extWant, extGot = extreme(spec.Op, extWant, w), extreme(spec.Op, extGot, g)
		case FollowsNewest:
			f := t.table.follows[col]
			newestWant = newer(newestWant, wants[row], f)
			newestGot = newer(newestGot, got[row], f)
		case Assign:
			if ws := t.assigned[row][col]; len(ws) > 0 {
				ok = false
				for _, v := range ws {
					ok = ok || (g.present && v.same(g.value))
				}
				written++
				if ok {
					holding++
				}
			}
		case ServerTime:
			ok = true
			if w.present {
				written++
				if g.present {
					holding++
				} else {
					ok = false
				}
			}
		}
		if !ok {
			exact[row] = false
		}
	}
	switch spec.Op {
	case Add:
		if t.table.types[col] == TypeNumeric {
			c.Money(name+" (all hot rows)", decimal.Decimal(sumWant.n), decimal.Decimal(sumGot.n).String())
		} else {
			c.Int(name+" (all hot rows)", sumWant.n, sumGot.n)
		}
	case Greatest, Least:
		what := map[Op]string{Greatest: "the greatest written", Least: "the least written"}[spec.Op]
		if spec.Op == Greatest && t.table.types[col] == TypeTimestamptz {
			what = "the newest applied request's"
		}
		c.Text(name+" = "+what, extWant.text(), extGot.text())
	case FollowsNewest:
		c.Text(name+" = the newest applied request's", newestWant.cell(col).text(), newestGot.cell(col).text())
	case Assign:
		c.Int(name+" rows holding a value a succeeded request wrote there (last write wins: which one depends on the commit order)", written, holding)
	case ServerTime:
		c.Int(name+" set where a request wrote it (the server's time: presence only)", written, holding)
	}
}

// extreme folds v into acc, a column's greatest or least value over rows (absent: NULL).
func extreme(op Op, acc, v cell) cell {
	if !v.present {
		return acc
	}
	if !acc.present || (op == Greatest && v.value.compare(acc.value) > 0) || (op == Least && v.value.compare(acc.value) < 0) {
		return v
	}
	return acc
}

// newer is whichever of acc and row holds the newer value of column f (row on a tie).
func newer(acc, row logicalRow, f int) logicalRow {
	v := row.cell(f)
	if !v.present {
		return acc
	}
	if !acc.cell(f).present || v.value.compare(acc.vals[f].value) >= 0 {
		return row
	}
	return acc
}

// cell is a column's value in a row, or NULL.
type cell struct {
	value   Value
	present bool
}

func (v cell) matches(g cell) bool {
	return v.present == g.present && (!v.present || v.value.same(g.value))
}

func (v cell) text() string {
	if !v.present {
		return "NULL"
	}
	return v.value.String()
}

// logicalRow is a hot row summed over its slots, or its opening: its declared columns' values
// (by column index) and its number of slots.
type logicalRow struct {
	vals  []cell
	slots int64
}

// cell is column col of the row (NULL for a row that is not there).
func (r logicalRow) cell(col int) cell {
	if r.vals == nil {
		return cell{}
	}
	return r.vals[col]
}

// expectation is what the applied requests leave in the hot tables.
type expectation struct {
	tables          []*expectedTable
	applied, deltas int64 // applied requests, and their deltas
}

// expectedTable is what the applied requests wrote to one hot table.
type expectedTable struct {
	table    *Table
	written  uint64            // the columns some delta writes
	sets     map[string]int    // a hot set's rows (by Key.Row) → the set
	setRows  []string          // the hot sets' rows, in the order met
	merged   map[string]*Delta // by row: the applied requests' deltas, merged
	assigned map[string]map[int][]Value
	writes   map[string]int64 // by row: the applied requests' writes (with HottestRows)
	total    int64            // the applied requests' writes to the table (with HottestRows)
}

// columns are the columns the table's deltas write, in the table's order.
func (t *expectedTable) columns() []int {
	var cols []int
	for i := range t.table.spec.Columns {
		if t.written&(1<<i) != 0 {
			cols = append(cols, i)
		}
	}
	return cols
}

// rows are the rows to check: the hot sets' (in the order met), then those only the requests,
// the seed or the table itself have, sorted.
func (t *expectedTable) rows(open, got map[string]logicalRow) []string {
	rows := append([]string(nil), t.setRows...)
	var rest []string
	for row := range t.merged {
		if _, ok := t.sets[row]; !ok {
			rest = append(rest, row)
		}
	}
	for row := range open {
		if _, ok := t.sets[row]; !ok && t.merged[row] == nil {
			rest = append(rest, row)
		}
	}
	for row := range got {
		if _, ok := t.sets[row]; !ok && t.merged[row] == nil {
			if _, seeded := open[row]; !seeded {
				rest = append(rest, row)
			}
		}
	}
	slices.Sort(rest)
	return append(rows, rest...)
}

// wantRow is what row must hold: its opening with the merged deltas applied.
func (t *expectedTable) wantRow(row string, open logicalRow) logicalRow {
	var mask uint64
	vals := make([]Value, 0, len(t.table.spec.Columns))
	for i, v := range open.vals {
		if v.present && t.table.spec.Columns[i].Op != ServerTime {
			mask |= 1 << i
			vals = append(vals, v.value)
		}
	}
	start := Delta{Change: t.table.changeOf(mask), Values: vals, Order: -1}
	if m := t.merged[row]; m != nil {
		start.Merge(*m)
	}
	out := logicalRow{vals: make([]cell, len(t.table.spec.Columns))}
	for i := range out.vals {
		if start.Change.mask&(1<<i) == 0 {
			continue
		}
		out.vals[i].present = true
		if p := start.Change.pos[i]; p >= 0 {
			out.vals[i].value = start.Values[p]
		}
	}
	return out
}

// noteHottest keeps each table's hottest row's share of the applied requests' writes for
// Figures, in the order the tables were met.
func (s *Suite) noteHottest(want expectation) {
	var figures []testkit.Figure
	for _, t := range want.tables {
		var most int64
		for _, n := range t.writes {
			most = max(most, n)
		}
		if t.total > 0 {
			figures = append(figures, testkit.Figure{Name: "hottest row's share of writes: " + t.table.Name(),
				Value: units.Round(float64(most)/float64(t.total), 4), Unit: "share"})
		}
	}
	s.mu.Lock()
	s.hottest = figures
	s.mu.Unlock()
}

// expected merges, per logical hot row, the deltas of the requests that must be there.
func (s *Suite) expected(hotKeys int, hotSet func(int64) int, res testkit.Result) expectation {
	var e expectation
	tables := map[string]*expectedTable{}
	table := func(d Delta) *expectedTable {
		t := tables[d.Table]
		if t == nil {
			t = &expectedTable{table: d.Change.table, sets: map[string]int{}, merged: map[string]*Delta{},
				assigned: map[string]map[int][]Value{}}
			if s.d.HottestRows {
				t.writes = map[string]int64{}
			}
			tables[d.Table] = t
			e.tables = append(e.tables, t)
		}
		t.written |= d.Change.mask
		return t
	}
	for h := range hotKeys {
		for _, part := range s.d.Request(int64(h), h) {
			for _, d := range part {
				t := table(d)
				if _, ok := t.sets[d.Row]; !ok {
					t.sets[d.Row] = h
					t.setRows = append(t.setRows, d.Row)
				}
			}
		}
	}
	for i := range res.Len() {
		if !res.Applied(i) {
			continue
		}
		e.applied++
		for _, d := range s.stamped(i, hotSet(i)) {
			e.deltas++
			t := table(d)
			if t.writes != nil {
				t.writes[d.Row]++
				t.total++
			}
			if m := t.merged[d.Row]; m != nil {
				m.Merge(d)
			} else {
				d.Key.Slot = 0
				t.merged[d.Row] = &d
			}
			for k, col := range d.Change.valued {
				if t.table.spec.Columns[col].Op == Assign {
					if t.assigned[d.Row] == nil {
						t.assigned[d.Row] = map[int][]Value{}
					}
					t.assigned[d.Row][col] = append(t.assigned[d.Row][col], d.Values[k])
				}
			}
		}
	}
	return e
}

// logicalRowsSQL reads every logical row of t (its slots summed, as each column's Op folds
// them) as readRows scans it: the key columns' texts, the declared columns' texts (encode's
// form), and the number of slots.
func (t *Table) logicalRowsSQL() string {
	keys := make([]string, len(t.spec.Key))
	for i, k := range t.spec.Key {
		keys[i] = ident(k.Name)
	}
	col := func(i int) string { return ident(t.spec.Columns[i].Name) }
	vals := t.slotFolds(func(fn string, i int) string { return asText(fn+"("+col(i)+")", t.types[i]) },
		func(i int) string {
			return "(array_agg(" + asText(col(i), t.types[i]) + " ORDER BY " + col(t.follows[i]) + " DESC NULLS LAST))[1]"
		},
		func(i int) string { return "CASE WHEN count(" + col(i) + ") > 0 THEN '0' END" })
	k := strings.Join(keys, ", ")
	return "SELECT ARRAY[" + strings.Join(prefixed(keys, "", "::text"), ", ") + "], ARRAY[" + strings.Join(vals, ", ") + "]::text[], count(*)" +
		" FROM " + ident(t.spec.Name) + " GROUP BY " + k
}

// verifyRowsTable holds, while a table is read for verification (read), the keys of the rows
// the client reads: the hot sets', the written and the changed rows'.
const verifyRowsTable = "counter_verify_rows"

// openingsSQL reads the openings snapshot wrote for a table ($1) of the rows in
// verifyRowsTable, as logicalRowsSQL reads its rows.
const openingsSQL = `SELECT o.key_values, o.vals, 1::int8 FROM counter_openings o JOIN ` + verifyRowsTable + ` v ON v.k = o.key_values
WHERE o.table_name = $1`

// untouchedWhere selects the openings of a table's rows that are not in verifyRowsTable.
const untouchedWhere = `o.table_name = $1 AND NOT EXISTS (SELECT 1 FROM ` + verifyRowsTable + ` v WHERE v.k = o.key_values)`

// changedSQL is the logical rows of a table (logicalRowsSQL, %s) that differ from their
// openings: changed values, a row that was not there, a row not in the expected number of
// slots ($2), and (slots -1, no values) a row that is gone.
const changedSQL = `WITH cur(k, v, slots) AS (%s), op AS (
    SELECT key_values AS k, vals AS v FROM counter_openings WHERE table_name = $1
)
SELECT COALESCE(cur.k, op.k), COALESCE(cur.v, '{}'), COALESCE(cur.slots, -1)
FROM cur FULL JOIN op ON op.k = cur.k
WHERE cur.k IS NULL OR op.k IS NULL OR cur.v IS DISTINCT FROM op.v OR cur.slots <> $2`

// rowReads are the statements a dialect reads a table's rows for verification with (read):
// each logical row is its key columns' texts, its declared columns' texts (encode's form, NULL
// where NULL) and its number of slots, as logicalRowsSQL reads them on PostgreSQL.
type rowReads interface {
	// changedSQL reads the logical rows of t that differ from their openings ($1: the
	// table's name; $2: the slots a row must have), as changedSQL says.
	changedSQL(t *Table) string
	// listRows lists the rows the client reads (their key values) in verifyRowsTable, a
	// temporary table of conn's session made anew; dropRows drops it.
	listRows(ctx context.Context, conn sqldb.Querier, keys [][]string) error
	dropRows(ctx context.Context, conn sqldb.Querier)
	// openingsSQL reads the openings of the rows listed ($1: the table's name).
	openingsSQL() string
	// foldSQL sums up the openings of t's rows not listed ($1: the table's name): their
	// count, and a text array of each declared column's fold (untouchedRows); newestSQL
	// reads the texts of the one of them whose FollowsNewest column col follows the newest
	// value.
	foldSQL(t *Table) string
	newestSQL(t *Table, col int) string
	// keyTexts and texts are what a row's key texts and a text array scan into.
	keyTexts(t *Table, dst *[]string) any
	texts(dst *[]*string) any
}

// pgReads are PostgreSQL's rowReads: the key and values as text arrays, the rows to read
// COPYed in.
type pgReads struct{}

func (pgReads) changedSQL(t *Table) string { return fmt.Sprintf(changedSQL, t.logicalRowsSQL()) }

func (pgReads) listRows(ctx context.Context, conn sqldb.Querier, keys [][]string) error {
	pg, err := sqldb.RequirePgx(conn) // the rows to read go in with COPY
	if err != nil {
		return err
	}
	// A temporary table of the session, not of a transaction: verification may run inside one
	// of the caller's (a test's), which a transaction of its own would end.
	if _, err := conn.Exec(ctx, pgDropRows+"; CREATE TEMP TABLE "+verifyRowsTable+" (k text[] NOT NULL)"); err != nil {
		return err
	}
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k}
	}
	_, err = pg.CopyFrom(ctx, pgx.Identifier{verifyRowsTable}, []string{"k"}, pgx.CopyFromRows(rows))
	return err
}

const pgDropRows = "DROP TABLE IF EXISTS pg_temp." + verifyRowsTable

func (pgReads) dropRows(ctx context.Context, conn sqldb.Querier) { _, _ = conn.Exec(ctx, pgDropRows) }

func (pgReads) openingsSQL() string { return openingsSQL }

func (pgReads) foldSQL(t *Table) string {
	aggs := t.folds("NULL::text", func(fn string, i int) string {
		v := fmt.Sprintf("o.vals[%d]", i+1)
		if fn == "sum" {
			return "sum((" + v + ")::numeric)::text"
		}
		return fn + "(" + ordered(v, t.types[i]) + ")::text"
	})
	return "SELECT count(*), ARRAY[" + strings.Join(aggs, ", ") + "]::text[] FROM counter_openings o WHERE " + untouchedWhere
}

// folds are the SQL of each declared column of t folded over rows (foldSQL): agg's of the
// aggregate that folds it — sum (Add), max (Greatest) or min (Least) — and of column i; none
// for a column of any other Op.
func (t *Table) folds(none string, agg func(fn string, i int) string) []string {
	aggs := make([]string, len(t.spec.Columns))
	for i, c := range t.spec.Columns {
		aggs[i] = none
		if fn := foldOf[c.Op]; fn != "" {
			aggs[i] = agg(fn, i)
		}
	}
	return aggs
}

// foldOf is the aggregate that folds a column of an Op over rows.
var foldOf = map[Op]string{Add: "sum", Greatest: "max", Least: "min"}

// slotFolds are the SQL of each declared column of t folded over a logical row's slots
// (logicalRowsSQL): agg's of its aggregate (folds'; an Assign column's min, an unslotted
// table's one row), newest's of a FollowsNewest column, present's of a ServerTime column ('0'
// where a slot has one: presence only).
func (t *Table) slotFolds(agg func(fn string, i int) string, newest, present func(i int) string) []string {
	vals := make([]string, len(t.spec.Columns))
	for i, c := range t.spec.Columns {
		switch fn := foldOf[c.Op]; {
		case fn != "":
			vals[i] = agg(fn, i)
		case c.Op == Assign:
			vals[i] = agg("min", i)
		case c.Op == FollowsNewest:
			vals[i] = newest(i)
		case c.Op == ServerTime:
			vals[i] = present(i)
		}
	}
	return vals
}

func (pgReads) newestSQL(t *Table, col int) string {
	f := fmt.Sprintf("o.vals[%d]", t.follows[col]+1)
	return "SELECT o.vals FROM counter_openings o WHERE " + untouchedWhere + " AND " + f + " IS NOT NULL ORDER BY " +
		ordered(f, t.types[t.follows[col]]) + " DESC LIMIT 1"
}

func (pgReads) keyTexts(_ *Table, dst *[]string) any { return dst }
func (pgReads) texts(dst *[]*string) any             { return dst }

// read reads what Verify compares of table t, with a dialect's statements: the rows it checks
// one by one — the hot sets', those the applied requests wrote, and those that differ from
// their openings, which the server finds (changedSQL) — as they opened and as they are now
// (got: the unchanged ones their openings, in the expected slots); and of every other row
// only what the server sums up (untouchedRows). The client never reads a row that no request
// wrote and that did not change: TPC-B's accounts are 100,000 rows a unit of scale, of which
// a run writes a few thousand, and reading every one of them cost the client seconds.
func (t *expectedTable) read(ctx context.Context, sql rowReads, conn sqldb.Querier, slots int64) (open, got map[string]logicalRow, rest untouchedRows, err error) {
	changed, err := readRows(ctx, sql, conn, t.table, sql.changedSQL(t.table), t.table.Name(), slots)
	if err != nil {
		return nil, nil, rest, err
	}
	var keys [][]string
	seen := map[string]bool{}
	add := func(row string) {
		if !seen[row] {
			seen[row] = true
			keys = append(keys, t.table.keyValues(row))
		}
	}
	for _, row := range t.setRows {
		add(row)
	}
	for row := range t.merged {
		add(row)
	}
	for row := range changed {
		add(row)
	}
	defer sql.dropRows(ctx, conn) // left by a cancelled context: the next read drops it
	if err := sql.listRows(ctx, conn, keys); err != nil {
		return nil, nil, rest, fmt.Errorf("listing the rows of %s to read: %w", t.table.Name(), err)
	}
	if open, err = readRows(ctx, sql, conn, t.table, sql.openingsSQL(), t.table.Name()); err != nil {
		return nil, nil, rest, err
	}
	if rest, err = t.table.untouched(ctx, sql, conn); err != nil {
		return nil, nil, rest, err
	}
	got = make(map[string]logicalRow, len(open)+len(changed))
	for row, o := range open {
		got[row] = logicalRow{vals: o.vals, slots: slots}
	}
	for row, c := range changed {
		if c.slots < 0 {
			delete(got, row)
			continue
		}
		got[row] = c
	}
	return open, got, rest, nil
}

// untouchedRows is what the server sums up of a table's rows that Verify does not read
// (read): how many there are; per declared column their Add sum, Greatest maximum or Least
// minimum (fold; absent for the other ops, or where no row had a value); and per
// FollowsNewest column the row holding the newest followed value. No request wrote them and
// they did not change, so they hold what they must: each check counts them on both sides, as
// it did when it read them.
type untouchedRows struct {
	n      int64
	fold   []cell
	newest map[int]logicalRow
}

// untouched reads the untouchedRows of t, on conn where verifyRowsTable lists the rows read.
func (t *Table) untouched(ctx context.Context, sql rowReads, conn sqldb.Querier) (untouchedRows, error) {
	rest := untouchedRows{fold: make([]cell, len(t.spec.Columns)), newest: map[int]logicalRow{}}
	var folded []*string
	if err := conn.QueryRow(ctx, sql.foldSQL(t), t.Name()).Scan(&rest.n, sql.texts(&folded)); err != nil {
		return rest, fmt.Errorf("summing the rows of %s no request wrote: %w", t.Name(), err)
	}
	for i, s := range folded {
		if s == nil {
			continue
		}
		v, err := parseValue(t.types[i], *s)
		if err != nil {
			return rest, fmt.Errorf("%s.%s over the rows no request wrote: %w", t.Name(), t.spec.Columns[i].Name, err)
		}
		rest.fold[i] = cell{value: v, present: true}
	}
	for i, c := range t.spec.Columns {
		if c.Op != FollowsNewest {
			continue
		}
		var vals []*string
		err := conn.QueryRow(ctx, sql.newestSQL(t, i), t.Name()).Scan(sql.texts(&vals))
		if errors.Is(err, sqldb.ErrNoRows) {
			continue
		}
		if err != nil {
			return rest, fmt.Errorf("the newest of the rows of %s no request wrote: %w", t.Name(), err)
		}
		row, err := t.parseRow(Key{}, vals, 1)
		if err != nil {
			return rest, err
		}
		rest.newest[i] = row
	}
	return rest, nil
}

// ordered is the SQL of v, an opening's value of type typ as text, in the order Value.compare
// puts values: by number, a text by its bytes.
func ordered(v string, typ Type) string {
	if typ == TypeText {
		return v + ` COLLATE "C"`
	}
	return "(" + v + ")::numeric"
}

func prefixed(s []string, before, after string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = before + v + after
	}
	return out
}

// asText is the SQL of expr, of type typ, as encode writes a value.
func asText(expr string, typ Type) string {
	switch typ {
	case TypeInteger:
		return expr + "::int8::text"
	case TypeTimestamptz:
		return "(extract(epoch FROM " + expr + ") * 1000000)::int8::text"
	}
	return expr + "::text"
}

// readRows reads a table's logical rows with query (a rowReads' changedSQL or openingsSQL), by
// Key.Row.
func readRows(ctx context.Context, sql rowReads, conn sqldb.Querier, t *Table, query string, args ...any) (map[string]logicalRow, error) {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.Name(), err)
	}
	out := map[string]logicalRow{}
	var keys []string
	var vals []*string
	var slots int64
	err = sqldb.ForEachRow(rows, []any{sql.keyTexts(t, &keys), sql.texts(&vals), &slots}, func() error {
		key, err := t.RowOf(keys)
		if err != nil {
			return err
		}
		if slots < 0 { // gone (changedSQL)
			out[key.Row] = logicalRow{slots: slots}
			return nil
		}
		row, err := t.parseRow(key, vals, slots)
		out[key.Row] = row
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.Name(), err)
	}
	return out, nil
}

// parseRow is the logical row of key whose declared columns' texts are vals.
func (t *Table) parseRow(key Key, vals []*string, slots int64) (logicalRow, error) {
	if len(vals) != len(t.spec.Columns) {
		return logicalRow{}, fmt.Errorf("%d values for %d columns", len(vals), len(t.spec.Columns))
	}
	row := logicalRow{vals: make([]cell, len(vals)), slots: slots}
	for i, s := range vals {
		if s == nil {
			continue
		}
		row.vals[i].present = true
		if t.spec.Columns[i].Op == ServerTime {
			continue
		}
		var err error
		if row.vals[i].value, err = parseValue(t.types[i], *s); err != nil {
			return row, fmt.Errorf("%s.%s of %s: %w", t.Name(), t.spec.Columns[i].Name, t.FormatKey(key), err)
		}
	}
	return row, nil
}

// snapshot records the opening of every logical row of tables, as the seed left them, in
// counter_openings (Verify's starting point), in sql's statements. A declared suite's seed
// calls it last.
func snapshot(ctx context.Context, sql dialect, conn sqldb.Querier, tables []*Table) error {
	for _, t := range tables {
		if err := sql.snapshot(ctx, conn, t); err != nil {
			return fmt.Errorf("recording the openings of %s: %w", t.Name(), err)
		}
	}
	return nil
}

// snapshotPostgres records the openings of t's logical rows on PostgreSQL.
func snapshotPostgres(ctx context.Context, conn sqldb.Querier, t *Table) error {
	_, err := conn.Exec(ctx, `INSERT INTO counter_openings (table_name, key_values, vals)
		SELECT $1, q.k, q.v FROM (`+t.logicalRowsSQL()+`) AS q(k, v, slots)`, t.Name())
	return err
}
