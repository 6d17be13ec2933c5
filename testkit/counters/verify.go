package counters

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// Verify checks every hot row exactly against the requests whose writes must be there: what
// the declared deltas of those requests add up to (with the seed's Opening), column by column,
// summed over all hot rows and row by row (summed over each row's slots), each logical row's
// slot count, the claim rows, and the outbox left empty (and, in the outbox mode, every delta
// of those requests processed).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	hot := r.Config().HotKeys
	want := s.expected(r, res)
	c := r.NewChecks()
	exactSets := make([]bool, hot)
	for h := range exactSets {
		exactSets[h] = true
	}
	for _, t := range want.tables {
		got, err := readTable(ctx, r.Admin(), t)
		if err != nil {
			return nil, err
		}
		for _, col := range t.columns {
			var sumWant, sumGot value
			for _, row := range t.rows {
				sumWant = col.add(sumWant, row.want[col.name])
				sumGot = col.add(sumGot, got.values[row.target][col.name])
			}
			sumCheck(c, t.table+"."+col.name, col, sumWant, sumGot)
		}
		for _, row := range t.rows {
			g, ok := got.values[row.target]
			for _, col := range t.columns {
				if !ok || !col.equal(g[col.name], row.want[col.name]) {
					exactSets[row.hot] = false
				}
			}
		}
		slots := int64(max(r.Slots(), 1))
		c.Int(fmt.Sprintf("%s rows with %d slots each", t.table, slots), got.rows, got.slots[slots])
	}
	exact := int64(0)
	for _, ok := range exactSets {
		if ok {
			exact++
		}
	}
	c.Int("hot row sets whose every counter is exact", int64(hot), exact)

	var claims, pending, processed int64
	if err := r.Admin().QueryRow(ctx, `SELECT (SELECT count(*) FROM `+pgx.Identifier{s.d.ClaimTable}.Sanitize()+`),
		       (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NULL),
		       (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NOT NULL)`).Scan(&claims, &pending, &processed); err != nil {
		return nil, fmt.Errorf("counting the claims and the outbox: %w", err)
	}
	c.Int(fmt.Sprintf("%s rows = %d × applied requests", s.d.ClaimTable, s.parts), int64(s.parts)*want.applied, claims)
	c.Int("outbox pending deltas", 0, pending)
	var wantProcessed int64
	if r.Mode() == Outbox {
		wantProcessed = want.deltas
	}
	c.Int("outbox processed deltas = deltas of the applied requests (outbox mode only)", wantProcessed, processed)
	return c.List(), nil
}

// sumCheck compares a column over all hot rows: counts and amounts summed, times and IPs the
// newest.
func sumCheck(c *testkit.Checks, name string, col column, want, got value) {
	switch {
	case col.count != nil:
		c.Int(name+" (all hot rows)", want.n, got.n)
	case col.money != nil:
		c.Money(name+" (all hot rows)", want.m, got.m.String())
	case col.newest:
		c.Text(name+" = the newest applied request's", timeText(want.at), timeText(got.at))
	default:
		c.Text(name+" = the newest applied request's", textOrNull(want.s), textOrNull(got.s))
	}
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return "NULL"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func textOrNull(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}

// expectation is what the applied requests leave in the hot tables.
type expectation struct {
	tables          []*expectedTable
	applied, deltas int64 // applied requests, and their deltas
}

// expectedTable is one hot table: its columns the suite's kinds change and its hot rows.
type expectedTable struct {
	table, key string
	columns    []column
	rows       []*expectedRow
}

type expectedRow struct {
	target string
	hot    int
	want   map[string]value // by column
}

// expected adds up, per logical hot row, the deltas of the requests that must be there, from
// the seed's Opening.
func (s *Suite) expected(r *testkit.Run, res testkit.Result) expectation {
	hot := r.Config().HotKeys
	var e expectation
	merged := map[Key]*Delta{} // per logical row (slot 0)
	var keys []Key
	tables := map[string]*expectedTable{}
	for h := range hot {
		for _, part := range s.d.Request(int64(h), h) {
			for _, d := range part {
				k := Key{Kind: d.Kind, Target: d.Target}
				if merged[k] != nil {
					continue
				}
				opening := s.d.Opening[d.Kind]
				opening.Key = k
				merged[k] = &opening
				keys = append(keys, k)
				kd := kinds[d.Kind]
				t := tables[kd.table]
				if t == nil {
					t = &expectedTable{table: kd.table, key: kd.keyColumn()}
					tables[kd.table] = t
					e.tables = append(e.tables, t)
				}
				for _, col := range kd.columns {
					if !slices.ContainsFunc(t.columns, func(c column) bool { return c.name == col.name }) {
						t.columns = append(t.columns, col)
					}
				}
				if !slices.ContainsFunc(t.rows, func(row *expectedRow) bool { return row.target == d.Target }) {
					t.rows = append(t.rows, &expectedRow{target: d.Target, hot: h, want: map[string]value{}})
				}
			}
		}
	}
	for i := range res.Len() {
		if !res.Applied(i) {
			continue
		}
		e.applied++
		for _, part := range s.d.Request(i, int(i%int64(hot))) {
			for _, d := range part {
				merged[Key{Kind: d.Kind, Target: d.Target}].Merge(d)
				e.deltas++
			}
		}
	}
	for _, k := range keys {
		kd := kinds[k.Kind]
		t := tables[kd.table]
		row := t.rows[slices.IndexFunc(t.rows, func(row *expectedRow) bool { return row.target == k.Target })]
		for _, col := range kd.columns {
			row.want[col.name] = col.add(row.want[col.name], col.of(*merged[k]))
		}
	}
	return e
}

// gotTable is what a hot table's logical rows hold (its *_totals view).
type gotTable struct {
	values map[string]map[string]value // by target, by column
	rows   int64                       // logical rows
	slots  map[int64]int64             // logical rows by their number of slots
}

// readTable reads every logical row of t from its totals view.
func readTable(ctx context.Context, conn *pgx.Conn, t *expectedTable) (gotTable, error) {
	cols := make([]string, len(t.columns))
	for k, col := range t.columns {
		cols[k] = pgx.Identifier{col.name}.Sanitize()
		switch {
		case col.count != nil:
			cols[k] += "::int8"
		case col.money != nil:
			cols[k] += "::text"
		}
	}
	rows, err := conn.Query(ctx, `SELECT `+pgx.Identifier{t.key}.Sanitize()+`, `+strings.Join(cols, ", ")+`, slots FROM `+
		pgx.Identifier{t.table + "_totals"}.Sanitize())
	if err != nil {
		return gotTable{}, fmt.Errorf("reading %s: %w", t.table, err)
	}
	defer rows.Close()
	got := gotTable{values: map[string]map[string]value{}, slots: map[int64]int64{}}
	for rows.Next() {
		var target string
		var slots int64
		scans := make([]any, len(t.columns))
		for k, col := range t.columns {
			switch {
			case col.count != nil:
				scans[k] = new(int64)
			case col.money != nil:
				scans[k] = new(string)
			case col.newest:
				scans[k] = new(pgtype.Timestamptz)
			default:
				scans[k] = new(pgtype.Text)
			}
		}
		if err := rows.Scan(append(append([]any{&target}, scans...), &slots)...); err != nil {
			return gotTable{}, fmt.Errorf("reading %s: %w", t.table, err)
		}
		row := map[string]value{}
		for k, col := range t.columns {
			var v value
			switch p := scans[k].(type) {
			case *int64:
				v.n = *p
			case *string:
				if v.m, err = ParseMoney(*p); err != nil {
					return gotTable{}, fmt.Errorf("%s.%s of %s: %w", t.table, col.name, target, err)
				}
			case *pgtype.Timestamptz:
				v.at = p.Time
			case *pgtype.Text:
				v.s = p.String
			}
			row[col.name] = v
		}
		for _, col := range t.columns { // an IP is the newest use's: it carries that use's time
			if col.ip {
				for _, at := range t.columns {
					if at.newest {
						v := row[col.name]
						v.at = row[at.name].at
						row[col.name] = v
					}
				}
			}
		}
		got.values[target] = row
		got.rows++
		got.slots[slots]++
	}
	return got, rows.Err()
}
