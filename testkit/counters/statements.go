package counters

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// The UPDATEs that apply deltas, composed from a table's declaration once per shape and kept:
// d is the relation of the deltas (the unnest of one array per column, or for a single delta,
// the plain single-row UPDATE a hand-written service would send, scalar parameters), matched
// to the table's rows t by every key column (and the slot, for a slotted delta). A column a
// delta leaves out is unchanged: in an array UPDATE whose rows write different columns it is
// sent as 0 (Add), NULL (Greatest, Least, FollowsNewest, and Assign, which then keeps the
// row's value) or false (ServerTime).

// statementKey names one of a table's statements: the columns it writes (union), those of
// them some of its rows leave out (partial), arrays or one delta, slotted or not.
type statementKey struct {
	union, partial  uint64
	arrays, slotted bool
}

// statement is t's UPDATE of key, composed on first use.
func (t *Table) statement(key statementKey) string {
	return t.composed(&t.statements, key, t.composeUpdate)
}

// composed is the statement of key that statements keeps, composed by compose on first use.
func (t *Table) composed(statements *map[statementKey]string, key statementKey, compose func(statementKey) string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := (*statements)[key]; ok {
		return s
	}
	s := compose(key)
	if *statements == nil {
		*statements = map[statementKey]string{}
	}
	(*statements)[key] = s
	return s
}

func ident(name string) string { return sqldb.Postgres.QuoteIdent(name) }

// param is one parameter of a delta's UPDATE: a key column, a written column's value, a
// partly written ServerTime column's flag (set: the delta writes it), or the slot.
type param struct {
	name string
	cast string // PostgreSQL's type name
	typ  Type   // its class (a flag: an integer on MySQL, 1 or 0)
}

// params are the parameters of key's UPDATE, in the order updateArgs (and mysqlArgs) give them.
func (t *Table) params(key statementKey) []param {
	var ps []param
	for i, k := range t.spec.Key {
		ps = append(ps, param{k.Name, t.keyCast[i], t.keyTypes[i]})
	}
	for i, c := range t.spec.Columns {
		if key.union&(1<<i) != 0 && c.Op != ServerTime {
			ps = append(ps, param{c.Name, t.casts[i], t.types[i]})
		}
	}
	for i, c := range t.spec.Columns {
		if key.partial&(1<<i) != 0 && c.Op == ServerTime {
			ps = append(ps, param{c.Name, "boolean", TypeInteger})
		}
	}
	if key.slotted {
		ps = append(ps, param{"slot", "smallint", TypeInteger})
	}
	return ps
}

// setter is how a dialect writes an UPDATE's SET list (setList): the name a column is
// assigned by (lhs), a column's value in the row (tc) and in the delta (dc), the greatest or
// least of two values (extreme: fn is GREATEST or LEAST), and the server's time.
type setter struct {
	lhs, tc, dc func(name string) string
	extreme     func(fn, a, b string) string
	now         string
}

// setList is key's SET list, as s writes it: each written column of t from the delta's value.
func (t *Table) setList(key statementKey, s setter) string {
	var sets []string
	for i, c := range t.spec.Columns {
		if key.union&(1<<i) == 0 {
			continue
		}
		partial := key.partial&(1<<i) != 0
		tc, dc := s.tc(c.Name), s.dc(c.Name)
		var set string
		switch c.Op {
		case Add:
			set = tc + " + " + dc
		case Greatest:
			set = s.extreme("GREATEST", tc, dc)
		case Least:
			set = s.extreme("LEAST", tc, dc)
		case Assign:
			set = dc
			if partial {
				set = "COALESCE(" + dc + ", " + tc + ")"
			}
		case FollowsNewest:
			f := t.spec.Columns[t.follows[i]].Name
			tf, df := s.tc(f), s.dc(f)
			set = "CASE WHEN " + df + " IS NOT NULL AND " + dc + " IS NOT NULL AND (" + tf + " IS NULL OR " + df + " >= " + tf +
				") THEN " + dc + " ELSE " + tc + " END"
		case ServerTime:
			set = s.now
			if partial {
				set = "CASE WHEN " + dc + " THEN " + s.now + " ELSE " + tc + " END"
			}
		}
		sets = append(sets, s.lhs(c.Name)+" = "+set)
	}
	return strings.Join(sets, ",\n\t\t")
}

// pgSetter is PostgreSQL's: the row t, the deltas d.
var pgSetter = setter{
	lhs:     ident,
	tc:      func(name string) string { return "t." + ident(name) },
	dc:      func(name string) string { return "d." + ident(name) },
	extreme: func(fn, a, b string) string { return fn + "(" + a + ", " + b + ")" },
	now:     "now()",
}

// composeUpdate is the UPDATE of key; its parameters are updateArgs'.
func (t *Table) composeUpdate(key statementKey) string {
	var names, casts []string
	for _, p := range t.params(key) {
		names, casts = append(names, ident(p.name)), append(casts, p.cast)
	}
	set := t.setList(key, pgSetter)
	values := make([]string, len(casts))
	for i, cast := range casts {
		values[i] = fmt.Sprintf("$%d::%s", i+1, cast)
		if key.arrays {
			values[i] += "[]"
		}
	}
	source := "(SELECT " + strings.Join(values, ", ") + ")"
	if key.arrays {
		source = "unnest(" + strings.Join(values, ", ") + ")"
	}
	where := make([]string, 0, len(t.spec.Key)+1)
	for _, k := range t.spec.Key {
		where = append(where, "t."+ident(k.Name)+" = d."+ident(k.Name))
	}
	if key.slotted {
		where = append(where, "t.slot = d.slot")
	}
	return "UPDATE " + ident(t.spec.Name) + " t SET " + set +
		"\n\tFROM " + source + "\n\t     AS d(" + strings.Join(names, ", ") + ")" +
		"\n\tWHERE " + strings.Join(where, " AND ")
}

// arrayUpdate is the UPDATE of a group of merged deltas of one table (one per row, all
// slotted or none), and its arguments.
func arrayUpdate(group []Delta) (string, []any) {
	key := groupKey(group)
	key.arrays = true
	t := group[0].Change.table
	return t.statement(key), t.updateArgs(key, group)
}

// groupKey is the shape of the UPDATE of a group of merged deltas of one table (one per row,
// all slotted or none): the columns any of them writes, and those some leave out.
func groupKey(group []Delta) statementKey {
	c := group[0].Change
	union, inter := c.mask, c.mask
	for _, d := range group[1:] {
		if d.Change != c {
			union, inter = union|d.Change.mask, inter&d.Change.mask
		}
	}
	return statementKey{union: union, partial: union &^ inter, slotted: group[0].slotted()}
}

// scalarUpdate is the single-row UPDATE of d, and its arguments.
func scalarUpdate(d Delta) (string, []any) {
	t := d.Change.table
	key := statementKey{union: d.Change.mask, slotted: d.slotted()}
	args := t.updateArgs(key, []Delta{d})
	for i, a := range args { // each array of one is its element
		args[i] = first(a)
	}
	return t.statement(key), args
}

// first is the element of an array of one argument.
func first(a any) any {
	switch a := a.(type) {
	case []string:
		return a[0]
	case []int64:
		return a[0]
	case []int16:
		return a[0]
	case []bool:
		return a[0]
	case []pgtype.Int8:
		return a[0]
	case []pgtype.Numeric:
		return a[0]
	case []pgtype.Timestamptz:
		return a[0]
	case []pgtype.Text:
		return a[0]
	}
	panic(fmt.Sprintf("counters: no scalar of %T", a))
}

// updateArgs are the parameters of key's UPDATE for ds: one array per parameter, in
// composeUpdate's order.
func (t *Table) updateArgs(key statementKey, ds []Delta) []any {
	n := len(ds)
	args := make([]any, 0, len(t.spec.Key)+len(t.spec.Columns)+1)
	if len(t.spec.Key) == 1 && t.keyTypes[0] == TypeText {
		rows := make([]string, n)
		for j, d := range ds {
			rows[j] = d.Row
		}
		args = append(args, rows)
	} else {
		keys := make([][]string, n)
		for j, d := range ds {
			keys[j] = t.keyValues(d.Row)
		}
		for i, typ := range t.keyTypes {
			if typ == TypeText {
				a := make([]string, n)
				for j := range ds {
					a[j] = keys[j][i]
				}
				args = append(args, a)
				continue
			}
			a := make([]int64, n)
			for j := range ds {
				v, err := parseValue(TypeInteger, keys[j][i])
				if err != nil {
					panic(fmt.Sprintf("counters: %s: a key that Table.Row did not make: %v", t.spec.Name, err))
				}
				a[j] = v.n
			}
			args = append(args, a)
		}
	}
	for i, c := range t.spec.Columns {
		if key.union&(1<<i) != 0 && c.Op != ServerTime {
			args = append(args, t.columnArray(i, ds))
		}
	}
	for i, c := range t.spec.Columns {
		if key.partial&(1<<i) != 0 && c.Op == ServerTime {
			a := make([]bool, n)
			for j, d := range ds {
				a[j] = d.Change.mask&(1<<i) != 0
			}
			args = append(args, a)
		}
	}
	if key.slotted {
		slots := make([]int16, n)
		for j, d := range ds {
			slots[j] = int16(d.Slot)
		}
		args = append(args, slots)
	}
	return args
}

// columnArray is column i's values in ds: a delta that leaves it out sends 0 to an Add and
// NULL to every other column.
func (t *Table) columnArray(i int, ds []Delta) any {
	add := t.spec.Columns[i].Op == Add
	value := func(d Delta) (Value, bool) {
		if p := d.Change.pos[i]; p >= 0 {
			return d.Values[p], true
		}
		return Value{}, add
	}
	switch t.types[i] {
	case TypeInteger:
		a := make([]pgtype.Int8, len(ds))
		for j, d := range ds {
			v, ok := value(d)
			a[j] = pgtype.Int8{Int64: v.n, Valid: ok}
		}
		return a
	case TypeNumeric:
		a := make([]pgtype.Numeric, len(ds))
		for j, d := range ds {
			if v, ok := value(d); ok {
				a[j] = decimal.Decimal(v.n).Numeric()
			}
		}
		return a
	case TypeTimestamptz:
		a := make([]pgtype.Timestamptz, len(ds))
		for j, d := range ds {
			v, ok := value(d)
			a[j] = pgtype.Timestamptz{Time: v.Time(), Valid: ok}
		}
		return a
	}
	a := make([]pgtype.Text, len(ds))
	for j, d := range ds {
		v, ok := value(d)
		a[j] = pgtype.Text{String: v.s, Valid: ok}
	}
	return a
}
