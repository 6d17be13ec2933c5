package counters

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// Type is the class of a column's PostgreSQL type: how its values are held in Go, sent and
// compared.
type Type uint8

// The column types a hot table may have.
const (
	TypeInteger     Type = iota + 1 // smallint, integer, bigint: an int64
	TypeNumeric                     // numeric with at most 8 decimal places: a decimal.Decimal, exact
	TypeTimestamptz                 // timestamp with time zone: microseconds, as PostgreSQL keeps it
	TypeText                        // text, varchar
)

func (t Type) String() string {
	switch t {
	case TypeInteger:
		return "integer"
	case TypeNumeric:
		return "numeric"
	case TypeTimestamptz:
		return "timestamptz"
	case TypeText:
		return "text"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// typeClass is the Type of a type name as a declaration spells it or a catalog prints it —
// PostgreSQL's format_type, or MySQL's COLUMN_TYPE (a datetime holds a UTC time there;
// decimal is numeric) — and the name without its modifier (what a PostgreSQL array
// parameter is cast to).
func typeClass(pgType string) (Type, string, error) {
	base := baseType(pgType)
	switch base {
	case "smallint", "int2", "integer", "int", "int4", "bigint", "int8", "tinyint", "mediumint":
		return TypeInteger, base, nil
	case "numeric", "decimal":
		return TypeNumeric, base, nil
	case "timestamptz", "timestamp with time zone", "datetime":
		return TypeTimestamptz, base, nil
	case "text", "varchar", "character varying", "tinytext", "mediumtext", "longtext":
		return TypeText, base, nil
	}
	return 0, "", fmt.Errorf("type %q is not one a hot column can have (integer, numeric, timestamptz, text)", pgType)
}

// baseType is a type name in lower case without its modifier: bigint(20) is bigint.
func baseType(name string) string {
	base := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexByte(base, '('); i >= 0 {
		base = strings.TrimSpace(base[:i])
	}
	return base
}

// Op is how a column takes a delta's value, and so how two deltas for one row merge.
type Op int

// The ways a column takes a delta.
const (
	// Add sums: c = c + v (exact: integers and numeric).
	Add Op = iota + 1
	// Greatest keeps the larger: c = GREATEST(c, v).
	Greatest
	// Least keeps the smaller: c = LEAST(c, v).
	Least
	// Assign is last write wins: c = v. Two deltas merge to the one of the later request
	// (within a request, the later statement). A table with one is not slotted.
	Assign
	// FollowsNewest takes the value that came with the newest value of the Greatest column
	// Column.Follows (a last used IP beside its last used time); on a tie, the later delta's.
	FollowsNewest
	// ServerTime is c = now() when the write lands: it carries no value, and verification
	// checks only that it is set where a request wrote it.
	ServerTime
)

func (o Op) String() string {
	switch o {
	case Add:
		return "add"
	case Greatest:
		return "greatest"
	case Least:
		return "least"
	case Assign:
		return "assign"
	case FollowsNewest:
		return "follows-newest"
	case ServerTime:
		return "server-time"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Column is a column of a hot table: a key column (Name and Type) or one the deltas write.
type Column struct {
	Name string
	// Type is the column's PostgreSQL type (bigint, integer, numeric(20,8), timestamptz, text,
	// ...: format_type's spelling or the usual short ones).
	Type string
	// Op is how it takes a delta (not for key columns).
	Op Op
	// Follows is the Greatest column a FollowsNewest column follows.
	Follows string
}

// TableSpec declares a hot table: as a Go literal, or at run time from the database's catalog
// (Describe). NewTable checks it and builds what every write needs, once.
type TableSpec struct {
	Name string
	// Key are the columns a row is found by (one or more: its primary key less the slot),
	// each an integer or text.
	Key []Column
	// Slotted says the table has a smallint column slot in its primary key, so --slots can
	// split each of its rows into N (slots.go). Unslotted tables ignore --slots.
	Slotted bool
	// SlotCopies are the columns a new slot copies from the seeded row (those NOT NULL
	// without a default); every other column of a new slot starts at its default.
	SlotCopies []string
	// Columns are the columns deltas write, each with its Op; at most 64.
	Columns []Column
}

// Column returns the spec's column called name.
func (s TableSpec) Column(name string) (Column, bool) {
	for _, c := range s.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Table is a declared hot table (NewTable): its rows are Keys (Row), the column sets its
// deltas write are Changes, and the UPDATEs that apply them are composed once per shape and
// kept (statements.go).
type Table struct {
	spec     TableSpec
	keyTypes []Type
	keyCast  []string // the key columns' type names, for parameters
	types    []Type   // by column index
	casts    []string
	index    map[string]int // column name → index
	follows  []int          // FollowsNewest column → the index of the column it follows (else -1)
	assigns  bool           // some column is Assign
	verified uint64         // the columns Verify reads (every column)
	nameArg  any            // the table's name in an any once, for arrays of names (Texts)

	mu              sync.Mutex
	changes         map[uint64]*Change
	statements      map[statementKey]string
	mysqlStatements map[statementKey]string // MySQL's (mysql.go)
}

// simpleName is what a table or column name may be: an identifier PostgreSQL keeps as written
// when quoted.
var simpleName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// NewTable checks spec and returns its table.
func NewTable(spec TableSpec) (*Table, error) {
	fail := func(format string, args ...any) (*Table, error) {
		return nil, fmt.Errorf("counters: table %s: "+format, append([]any{spec.Name}, args...)...)
	}
	if !simpleName.MatchString(spec.Name) {
		return fail("not a table name")
	}
	if len(spec.Key) == 0 {
		return fail("no key columns")
	}
	if len(spec.Columns) == 0 || len(spec.Columns) > 64 {
		return fail("%d columns (1 to 64)", len(spec.Columns))
	}
	t := &Table{spec: spec, index: map[string]int{}, changes: map[uint64]*Change{}, statements: map[statementKey]string{}, nameArg: spec.Name}
	names := map[string]bool{"slot": true}
	for _, k := range spec.Key {
		typ, cast, err := typeClass(k.Type)
		switch {
		case err != nil:
			return fail("key %s: %v", k.Name, err)
		case typ != TypeInteger && typ != TypeText:
			return fail("key %s: a key is an integer or text, not %s", k.Name, k.Type)
		case !simpleName.MatchString(k.Name) || names[k.Name]:
			return fail("key %s: not a name, or one used twice (slot is the kit's)", k.Name)
		}
		names[k.Name] = true
		t.keyTypes, t.keyCast = append(t.keyTypes, typ), append(t.keyCast, cast)
	}
	for i, c := range spec.Columns {
		typ, cast, err := typeClass(c.Type)
		switch {
		case err != nil:
			return fail("column %s: %v", c.Name, err)
		case !simpleName.MatchString(c.Name) || names[c.Name]:
			return fail("column %s: not a name, or one used twice (slot is the kit's)", c.Name)
		case c.Op < Add || c.Op > ServerTime:
			return fail("column %s: no Op (Add, Greatest, Least, Assign, FollowsNewest or ServerTime)", c.Name)
		case c.Op == Add && typ != TypeInteger && typ != TypeNumeric:
			return fail("column %s: Add sums integers or numeric, not %s", c.Name, c.Type)
		case c.Op == ServerTime && typ != TypeTimestamptz:
			return fail("column %s: ServerTime is a timestamptz, not %s", c.Name, c.Type)
		case c.Op == Assign && spec.Slotted:
			return fail("column %s: Assign has no single row to win on when a row is split into slots: a table with one is not Slotted", c.Name)
		}
		names[c.Name] = true
		t.index[c.Name] = i
		t.types, t.casts = append(t.types, typ), append(t.casts, cast)
		t.assigns = t.assigns || c.Op == Assign
		t.verified |= 1 << i
	}
	t.follows = make([]int, len(spec.Columns))
	for i, c := range spec.Columns {
		t.follows[i] = -1
		if c.Op != FollowsNewest {
			if c.Follows != "" {
				return fail("column %s: Follows is for FollowsNewest columns", c.Name)
			}
			continue
		}
		f, ok := t.index[c.Follows]
		if !ok || spec.Columns[f].Op != Greatest {
			return fail("column %s: follows %q, which is not a Greatest column of the table", c.Name, c.Follows)
		}
		t.follows[i] = f
	}
	for _, c := range spec.SlotCopies {
		if !simpleName.MatchString(c) || names[c] {
			return fail("slot copy %s: not a name, or a key or hot column", c)
		}
	}
	return t, nil
}

// MustTable is NewTable for a declaration written in Go: it panics on a bad spec.
func MustTable(spec TableSpec) *Table {
	t, err := NewTable(spec)
	if err != nil {
		panic(err)
	}
	return t
}

// Name is the table's name.
func (t *Table) Name() string { return t.spec.Name }

// Spec is the table's declaration.
func (t *Table) Spec() TableSpec { return t.spec }

// KeyTypes are the classes of the key columns, in key order: what Row takes.
func (t *Table) KeyTypes() []Type { return slices.Clone(t.keyTypes) }

// ColumnType is the class of hot column name: what its deltas' values are.
func (t *Table) ColumnType(name string) (Type, bool) {
	i, ok := t.index[name]
	if !ok {
		return 0, false
	}
	return t.types[i], true
}

// Slotted says whether --slots splits the table's rows.
func (t *Table) Slotted() bool { return t.spec.Slotted }

// keySeparator separates the values of a composite key in Key.Row, and keyEscape escapes
// itself and the separator inside a text value of one.
const (
	keySeparator = '\x1f'
	keyEscape    = '\x1e'
)

// Row is the row of t whose key columns hold key (Int or Text values, one per key column, in
// order), unslotted. It panics when the values do not match the key columns.
func (t *Table) Row(key ...Value) Key {
	if len(key) != len(t.keyTypes) {
		panic(fmt.Sprintf("counters: %s has %d key columns, the row has %d values", t.spec.Name, len(t.keyTypes), len(key)))
	}
	if len(key) == 1 {
		return Key{Table: t.spec.Name, Row: t.keyText(0, key[0])}
	}
	return Key{Table: t.spec.Name, Row: joinKey(len(key), func(i int) string { return t.keyText(i, key[i]) })}
}

// joinKey is the Key.Row of a row of n key columns whose texts text gives: the one text, or
// each escaped and joined by keySeparator.
func joinKey(n int, text func(i int) string) string {
	if n == 1 {
		return text(0)
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(keySeparator)
		}
		s := text(i)
		if strings.ContainsAny(s, "\x1e\x1f") {
			s = strings.NewReplacer("\x1e", "\x1e\x1e", "\x1f", "\x1e\x1f").Replace(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

// keyText is key value v of key column i as text, as PostgreSQL prints it.
func (t *Table) keyText(i int, v Value) string {
	if v.typ != t.keyTypes[i] {
		panic(fmt.Sprintf("counters: %s key %s is %s, the row gives a %s", t.spec.Name, t.spec.Key[i].Name, t.keyTypes[i], v.typ))
	}
	if v.typ == TypeInteger {
		return strconv.FormatInt(v.n, 10)
	}
	return v.s
}

// RowOf is the row of t whose key columns hold these texts (as PostgreSQL prints them).
func (t *Table) RowOf(texts []string) (Key, error) {
	if len(texts) != len(t.keyTypes) {
		return Key{}, fmt.Errorf("%s: %d key values for %d key columns", t.spec.Name, len(texts), len(t.keyTypes))
	}
	key := make([]Value, len(texts))
	for i, s := range texts {
		v, err := parseValue(t.keyTypes[i], s)
		if err != nil {
			return Key{}, fmt.Errorf("%s key %s: %w", t.spec.Name, t.spec.Key[i].Name, err)
		}
		key[i] = v
	}
	return t.Row(key...), nil
}

// keyValues splits a Key.Row of t into its key columns' texts.
func (t *Table) keyValues(row string) []string {
	if len(t.keyTypes) == 1 {
		return []string{row}
	}
	out := make([]string, 0, len(t.keyTypes))
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch c := row[i]; {
		case c == keyEscape && i+1 < len(row):
			i++
			b.WriteByte(row[i])
		case c == keySeparator:
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(out, b.String())
}

// FormatKey is k's row as its key columns and values, for messages.
func (t *Table) FormatKey(k Key) string {
	vals := t.keyValues(k.Row)
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = t.spec.Key[i].Name + "=" + v
	}
	s := t.spec.Name + "(" + strings.Join(parts, ", ") + ")"
	if k.Slot > 0 {
		s += " slot " + strconv.Itoa(k.Slot)
	}
	return s
}

// Change is a set of a table's columns that deltas write together (the SET list of one
// statement), resolved once: Delta makes a delta of it.
type Change struct {
	table  *Table
	mask   uint64 // the columns, bit i: column i
	valued []int  // the columns that take a value (all but ServerTime), in column order
	pos    []int  // column index → its place in valued, or -1
}

// Change is the change that writes columns (names; at least one). A FollowsNewest column
// comes with the column it follows.
func (t *Table) Change(columns ...string) (*Change, error) {
	var mask uint64
	for _, name := range columns {
		i, ok := t.index[name]
		if !ok {
			return nil, fmt.Errorf("counters: table %s has no hot column %q", t.spec.Name, name)
		}
		mask |= 1 << i
	}
	for i, f := range t.follows {
		if mask&(1<<i) != 0 && f >= 0 && mask&(1<<f) == 0 {
			return nil, fmt.Errorf("counters: %s.%s follows %s: a change writes both or neither", t.spec.Name, t.spec.Columns[i].Name, t.spec.Columns[f].Name)
		}
	}
	if mask == 0 {
		return nil, fmt.Errorf("counters: a change of %s writes no column", t.spec.Name)
	}
	return t.changeOf(mask), nil
}

// MustChange is Change for a declaration written in Go: it panics on a bad column list.
func (t *Table) MustChange(columns ...string) *Change {
	c, err := t.Change(columns...)
	if err != nil {
		panic(err)
	}
	return c
}

// changeOf is the one Change of mask (kept, so that deltas of one shape share it).
func (t *Table) changeOf(mask uint64) *Change {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.changes[mask]; ok {
		return c
	}
	c := &Change{table: t, mask: mask, pos: make([]int, len(t.spec.Columns))}
	for i := range t.spec.Columns {
		c.pos[i] = -1
		if mask&(1<<i) != 0 && t.spec.Columns[i].Op != ServerTime {
			c.pos[i] = len(c.valued)
			c.valued = append(c.valued, i)
		}
	}
	t.changes[mask] = c
	return c
}

// Table is the table the change writes.
func (c *Change) Table() *Table { return c.table }

// Columns are the names of the columns the change writes, in the table's order.
func (c *Change) Columns() []string {
	var out []string
	for i, col := range c.table.spec.Columns {
		if c.mask&(1<<i) != 0 {
			out = append(out, col.Name)
		}
	}
	return out
}

// Delta is a delta of row writing values: one per column of the change that takes one (every
// column but ServerTime ones), in the table's column order. The delta keeps values as given (a
// merge never changes them). It panics when they do not match.
func (c *Change) Delta(row Key, values ...Value) Delta {
	c.check(values)
	return Delta{Key: row, Change: c, Values: values}
}

// check panics unless values are one per column of c that takes one, each of its type.
func (c *Change) check(values []Value) {
	if len(values) != len(c.valued) {
		panic(fmt.Sprintf("counters: a change of %v takes %d values, got %d", c.Columns(), len(c.valued), len(values)))
	}
	for k, v := range values {
		if want := c.table.types[c.valued[k]]; v.typ != want {
			panic(fmt.Sprintf("counters: %s.%s is %s, the delta gives a %s", c.table.spec.Name, c.table.spec.Columns[c.valued[k]].Name, want, v.typ))
		}
	}
}

// Part builds the deltas of one part of a request with all their values in one allocation
// (NewPart sizes it): Add is Change.Delta without an allocation per delta, for the requests of
// a hot path.
type Part struct {
	deltas []Delta
	values []Value
}

// NewPart is a part with room for deltas deltas of values values in all.
func NewPart(deltas, values int) Part {
	return Part{deltas: make([]Delta, 0, deltas), values: make([]Value, 0, values)}
}

// Add adds c's delta of row writing values (as Change.Delta).
func (p *Part) Add(c *Change, row Key, values ...Value) {
	c.check(values)
	start := len(p.values)
	p.values = append(p.values, values...)
	p.deltas = append(p.deltas, Delta{Key: row, Change: c, Values: p.values[start:len(p.values):len(p.values)]})
}

// Deltas are the part's deltas, in the order added.
func (p *Part) Deltas() []Delta { return p.deltas }

// Value is a key's or a column's value: Int, Amount, Time or Text.
type Value struct {
	n   int64  // an integer; a numeric in decimal.Decimal units; a timestamptz in microseconds since 1970
	s   string // Text
	typ Type
}

// Int is an integer value.
func Int(n int64) Value { return Value{typ: TypeInteger, n: n} }

// Amount is an exact numeric value.
func Amount(d decimal.Decimal) Value { return Value{typ: TypeNumeric, n: int64(d)} }

// Time is a timestamptz value, to the microsecond (PostgreSQL's precision).
func Time(t time.Time) Value { return Value{typ: TypeTimestamptz, n: t.UnixMicro()} }

// Text is a text value.
func Text(s string) Value { return Value{typ: TypeText, s: s} }

// Type is the value's type.
func (v Value) Type() Type { return v.typ }

// Int64 is an integer value.
func (v Value) Int64() int64 { return v.n }

// Decimal is a numeric value.
func (v Value) Decimal() decimal.Decimal { return decimal.Decimal(v.n) }

// Time is a timestamptz value.
func (v Value) Time() time.Time { return time.UnixMicro(v.n).UTC() }

// String is the value as PostgreSQL prints it (a timestamptz in RFC 3339).
func (v Value) String() string {
	switch v.typ {
	case TypeInteger:
		return strconv.FormatInt(v.n, 10)
	case TypeNumeric:
		return decimal.Decimal(v.n).String()
	case TypeTimestamptz:
		return v.Time().Format(time.RFC3339Nano)
	}
	return v.s
}

// same reports whether v and w are the same value.
func (v Value) same(w Value) bool { return v.typ == w.typ && v.n == w.n && v.s == w.s }

// compare orders v and w of one column's type.
func (v Value) compare(w Value) int {
	if v.typ == TypeText {
		return strings.Compare(v.s, w.s)
	}
	switch {
	case v.n < w.n:
		return -1
	case v.n > w.n:
		return 1
	}
	return 0
}

// encode is v as the outbox and verification carry it: a timestamptz as its microseconds.
func (v Value) encode() string {
	if v.typ == TypeTimestamptz {
		return strconv.FormatInt(v.n, 10)
	}
	return v.String()
}

// parseValue reads a value of type typ from encode's text (or PostgreSQL's for integers,
// numeric and text).
func parseValue(typ Type, s string) (Value, error) {
	switch typ {
	case TypeInteger, TypeTimestamptz:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("not an integer: %q", s)
		}
		return Value{typ: typ, n: n}, nil
	case TypeNumeric:
		d, _, err := decimal.Parse(s)
		if err != nil {
			return Value{}, fmt.Errorf("amount %q %w", s, err)
		}
		return Amount(d), nil
	}
	return Text(s), nil
}
