package sqlshape

import (
	"fmt"
	"slices"
	"strings"
)

// WriteOp is how one SET item of an UPDATE merges with the same column's earlier
// writes to the same row.
type WriteOp uint8

const (
	// Increment: c = c + e, c = e + c, c = c - e (Value is then -e), and longer sums
	// with c once: the deltas add up, in any order.
	Increment WriteOp = iota + 1
	// Assign: c = e; the last write, in request order, wins.
	Assign
	// Greatest and Least: c = greatest(c, e) / least(c, e), either argument order: the
	// extreme of all writes wins, in any order.
	Greatest
	Least
	// ServerTime: c = now(), CURRENT_TIMESTAMP and their kin: taken when the write lands,
	// so verification checks the column for presence only.
	ServerTime
)

func (op WriteOp) String() string {
	switch op {
	case Increment:
		return "increment"
	case Assign:
		return "assign"
	case Greatest:
		return "greatest"
	case Least:
		return "least"
	case ServerTime:
		return "server time"
	}
	return fmt.Sprintf("WriteOp(%d)", op)
}

// KeyedUpdate is an UPDATE of one row named by its whole primary key.
type KeyedUpdate struct {
	Table *Table
	Key   []KeyTerm // one per primary-key column, in key order
	Set   []SetItem // in the statement's order
}

// KeyTerm is one primary-key column and the client value the WHERE equates it with.
type KeyTerm struct {
	Column *Column
	Value  Expr
}

// SetItem is one mergeable SET item.
type SetItem struct {
	Column *Column
	Op     WriteOp
	// Value: the delta (Increment), the value (Assign), the bound (Greatest, Least);
	// nil when ServerFunc is set.
	Value Expr
	// ServerFunc is the server-side value, as SQL to write at flush time: "now()",
	// "CURRENT_TIMESTAMP", "now()::date". Set for ServerTime, and for greatest/least
	// of the column and a server time (c = greatest(c, now())).
	ServerFunc string
	Text       string // the item as written, for messages: "bbalance = bbalance + :delta"
}

// KeyValues evaluates the row's primary key for the given parameters, each value in the
// form PostgreSQL compares it in (Column.Compare), so that two requests name the same
// row exactly when their keys are equal.
func (u *KeyedUpdate) KeyValues(params []Value) ([]Value, error) {
	key := make([]Value, len(u.Key))
	for i, term := range u.Key {
		v, err := term.Value.Eval(params)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", term.Column.Name, err)
		}
		if v.IsNull() {
			return nil, fmt.Errorf("key %s is NULL: the UPDATE names no row", term.Column.Name)
		}
		if key[i], err = term.Column.Compare(v); err != nil {
			return nil, fmt.Errorf("key %s: %w", term.Column.Name, err)
		}
	}
	return key, nil
}

// Eval computes the item's value for the given parameters, in the form Column.Compare
// gives (an IntValue for an integer, a DecimalValue for a fraction, in a numeric
// column), refusing what would not merge the way the statement runs one by one: a NULL
// or out-of-range increment, a value the column would round (a decimal into an integer
// column, more places than a numeric column's scale), a NULL assigned to a NOT NULL
// column (each an error PostgreSQL would raise for that request alone, a write it would
// round, or a NULL that would wipe the column). A string parameter is read as the
// column's type reads it: '0.001' is a decimal in a numeric column, an error in an
// integer one. A NULL greatest/least bound is returned as NULL: PostgreSQL's greatest
// and least ignore it. ServerFunc items have no client value: an error.
func (s SetItem) Eval(params []Value) (Value, error) {
	if s.Value == nil {
		return Null, fmt.Errorf("%s: the server computes this value", s.Text)
	}
	sum := s.Op == Increment && s.Column.BaseTypeOID == oidNumeric
	v, err := s.Value.eval(params, sum)
	if err != nil {
		return Null, fmt.Errorf("%s: %w", s.Text, err)
	}
	switch s.Op {
	case Increment, Greatest, Least:
		if v.IsNull() {
			if s.Op != Increment {
				return Null, nil
			}
			return Null, fmt.Errorf("%s: the increment is NULL, which would make %s NULL", s.Text, s.Column.Name)
		}
		c := s.Column
		if s.Op == Increment {
			c = c.delta()
		}
		n, err := c.number(v)
		if err != nil {
			return Null, fmt.Errorf("%s: %w", s.Text, err)
		}
		return n, nil
	}
	if v.IsNull() {
		if s.Column.NotNull {
			return Null, fmt.Errorf("%s: NULL into NOT NULL column %s", s.Text, s.Column.Name)
		}
		return Null, nil
	}
	return s.Column.Compare(v)
}

// formReasons are why the kit does not defer a statement with such a part; the clause
// is the grammar's spelling of it.
var formReasons = map[formKind]struct {
	kind   RefusalKind
	format string
}{
	formWith:       {UnsupportedForm, ""}, // forms says what the kit defers instead
	formJoin:       {UnsupportedForm, "%s joins other rows, which only the server knows when the write lands"},
	formReturning:  {Returning, "%s: a deferred write cannot return its values at request time"},
	formOnConflict: {UnsupportedForm, "%s: whether it inserts, and what it updates, depends on the rows written before it"},
	formOverriding: {UnsupportedForm, "%s: the kit writes identity columns only by their default"},
	formOrderLimit: {UnsupportedForm, "%s: the kit defers an UPDATE of the one row its key names, not a number of rows"},
	formIgnore:     {UnsupportedForm, "%s: a write that fails is skipped with a warning, and merged writes could fail differently from the writes one by one"},
	formReplace:    {UnsupportedForm, "%s deletes the row its key collides with: whether it does depends on the rows written before it"},
	formPartition:  {UnsupportedForm, "%s: the kit writes to a table, not to partitions named by the statement"},
}

// forms refuses the parts of a statement beyond the shapes the kit defers; it says
// whether there were none. what names the statement for WITH ("an UPDATE that names its
// row itself").
func (a *analysis) forms(forms []form, with string) bool {
	for _, f := range forms {
		r := formReasons[f.kind]
		if f.kind == formWith {
			a.refuse(r.kind, "WITH: the kit defers %s", with)
			continue
		}
		a.refuse(r.kind, r.format, f.clause)
	}
	return len(forms) == 0
}

func (a *analysis) update(u *updateSyntax) {
	a.st.Tag, a.st.Target = "UPDATE", u.table.name
	if u.where != nil {
		a.st.short = short(a.st.Text, "UPDATE "+u.table.name, u.where.text())
	}
	// shaped: the statement's form is a keyed update, whatever the catalog says of it
	shaped := a.forms(u.forms, "an UPDATE that names its row itself")
	t := a.table(u.table, true)
	if t == nil {
		return
	}
	key, ok := a.updateKey(u.where, t, u.table.alias)
	shaped = shaped && ok
	set, ok := a.setItems(u.set, t, u.table.alias)
	shaped = shaped && ok
	if shaped {
		a.st.Class = Update
		a.st.Update = &KeyedUpdate{Table: t, Key: key, Set: set}
	}
}

// updateKey reads the WHERE as the equality of every primary-key column with a
// client value, and nothing more.
func (a *analysis) updateKey(where *node, t *Table, alias string) ([]KeyTerm, bool) {
	if len(t.PrimaryKey) == 0 {
		a.refuse(NoPrimaryKey, "%s has no primary key: an UPDATE cannot name one row of it", t.Name)
		return nil, false
	}
	keyList := strings.Join(t.PrimaryKey, ", ")
	if where == nil {
		a.refuse(NotFullKey, "no WHERE: it writes every row of %s, not one row by its primary key (%s)", t.Name, keyList)
		return nil, false
	}
	if where.op == opCurrentOf {
		a.refuse(UnsupportedForm, "WHERE CURRENT OF: a cursor's row is known only at request time")
		return nil, false
	}
	values := map[string]Expr{}
	var further []string
	ok := true
	for _, cond := range conjuncts(where) {
		col, value := a.keyEquality(cond, t, alias)
		if col == "" {
			further = append(further, cond.text())
			continue
		}
		if _, seen := values[col]; seen {
			further = append(further, cond.text())
			continue
		}
		e, bad := clientValue(value)
		if bad != nil {
			a.refuse(Inexact, "%s: %s", cond.text(), a.notClientWhy(value, bad))
			ok = false
			values[col] = nil
			continue
		}
		if c, isConst := e.(Const); isConst && c.Value.IsNull() {
			a.refuse(NotFullKey, "%s = NULL matches no row", col)
			ok = false
		} else if c := t.Column(col); c.fits(e, false) != "" {
			a.refuse(Inexact, "%s: %s is not a value of %s (%s), so the UPDATE names no row", cond.text(),
				value.text(), c.Name, c.TypeName)
			ok = false
		}
		values[col] = e
	}
	var missing []string
	for _, k := range t.PrimaryKey {
		if _, found := values[k]; !found {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		a.refuse(NotFullKey, "the WHERE is not the full primary key of %s (%s; %s not named): "+
			"the kit merges writes per row, so an UPDATE must name one row by its whole key",
			t.Name, keyList, strings.Join(missing, ", "))
		return nil, false
	}
	if len(further) > 0 {
		what := "a further condition (" + further[0] + ") decides"
		if len(further) > 1 {
			what = "further conditions (" + strings.Join(further, ", ") + ") decide"
		}
		a.refuse(FurtherCondition, "%s which writes apply; deferring could change which fail", what)
		return nil, false
	}
	var key []KeyTerm
	for _, k := range t.PrimaryKey {
		c := t.Column(k)
		if why := c.keyable(); why != "" {
			a.refuse(KeyType, "key column %s %s", k, why)
		}
		key = append(key, KeyTerm{Column: c, Value: values[k]})
	}
	return key, ok
}

// keyEquality reads cond as "key column = value" (either side): the key column, as the
// catalog names it, and the value's expression, or "" when cond is anything else.
func (a *analysis) keyEquality(cond *node, t *Table, alias string) (string, *node) {
	if cond.op != opBinary || cond.oper != "=" {
		return "", nil
	}
	for i, side := range cond.args {
		c := t.Column(columnRef(side, t.Name, alias))
		if c == nil || !t.IsKey(c.Name) {
			continue
		}
		other := cond.args[1-i]
		if other.op == opColumn {
			return "", nil
		}
		return c.Name, other
	}
	return "", nil
}

// setItems reads every SET item as a mergeable write, refusing the ones that are not
// and the columns a merged write could break a constraint of.
func (a *analysis) setItems(targets []assignment, t *Table, alias string) ([]SetItem, bool) {
	var items []SetItem
	ok := true
	seen := map[string]bool{}
	multiAssign := false
	for _, rt := range targets {
		if rt.value == nil {
			ok = false
			continue
		}
		if rt.multi {
			if !multiAssign {
				a.refuse(UnsupportedForm, "SET (…) = (…): the kit reads one column per SET item")
			}
			multiAssign = true
			ok = false
			continue
		}
		text := rt.column + " = " + rt.value.text()
		if rt.indirection {
			a.refuse(UnsupportedForm, "SET %s…: the kit writes whole columns, not elements or fields", rt.column)
			ok = false
			continue
		}
		c := t.Column(rt.column)
		switch {
		case c == nil:
			a.refuse(UnknownName, "%s has no column %s", t.Name, rt.column)
			ok = false
			continue
		case t.IsKey(c.Name):
			a.refuse(KeyWritten, "it writes primary-key column %s: the row it names would move", c.Name)
			ok = false
			continue
		case c.Generated:
			a.refuse(UnsupportedForm, "%s is a generated column", c.Name)
			ok = false
			continue
		case seen[c.Name]:
			a.refuse(UnsupportedForm, "%s is set twice", c.Name)
			ok = false
			continue
		}
		seen[c.Name] = true
		item, why := a.setItem(rt.value, c, t, alias)
		if why != "" {
			a.refuse(Inexact, "%s: %s", text, why)
			ok = false
			continue
		}
		item.Column, item.Text = c, text
		items = append(items, item)
		a.constrained(t, c)
		if c.Unsigned && item.Op == Increment {
			a.refuse(CheckedColumn, "%s is %s, whose range acts as CHECK (%s >= 0): compacting could change which "+
				"writes fail", c.Name, c.TypeName, c.Name)
		}
	}
	return items, ok
}

// setItem reads one SET value as a write op on column c; why says what it is not.
func (a *analysis) setItem(val *node, c *Column, t *Table, alias string) (SetItem, string) {
	isSelf := func(n *node) bool { return t.sameColumn(columnRef(n, t.Name, alias), c.Name) }
	if val.op == opDefault {
		return SetItem{}, "DEFAULT is the server's value, not one the kit can evaluate"
	}
	if isServerTime(val) {
		return SetItem{Op: ServerTime, ServerFunc: val.text()}, ""
	}
	if val.op == opGreatest || val.op == opLeast {
		op, name := Greatest, "greatest"
		if val.op == opLeast {
			op, name = Least, "least"
		}
		args := val.args
		if len(args) != 2 || isSelf(args[0]) == isSelf(args[1]) {
			return SetItem{}, fmt.Sprintf("the kit merges %s(%s, e) of the column and one value only", name, c.Name)
		}
		bound := args[1]
		if isSelf(args[1]) {
			bound = args[0]
		}
		if isServerTime(bound) {
			return SetItem{Op: op, ServerFunc: bound.text()}, ""
		}
		e, bad := clientValue(bound)
		if bad != nil {
			return SetItem{}, a.notClientWhy(bound, bad)
		}
		if why := c.exactCompare(); why != "" {
			return SetItem{}, why
		}
		if bad := numberOnly(e); bad != nil {
			return SetItem{}, fmt.Sprintf("%s is not a number, which the kit compares exactly", a.named(bad.String()))
		}
		if why := c.fits(e, false); why != "" {
			return SetItem{}, why
		}
		return SetItem{Op: op, Value: e}, ""
	}
	terms, isSum := sumTerms(val, false)
	if isSum {
		var delta Expr
		self := 0
		for _, term := range terms {
			if isSelf(term.node) {
				if term.negative {
					return SetItem{}, fmt.Sprintf("%s is subtracted: the kit merges %s = %s + e", c.Name, c.Name, c.Name)
				}
				self++
				continue
			}
			e, bad := clientValue(term.node)
			if bad != nil {
				return SetItem{}, a.notClientWhy(term.node, bad)
			}
			switch {
			case delta == nil && term.negative:
				delta = Neg{X: e}
			case delta == nil:
				delta = e
			case term.negative:
				delta = Arith{Op: '-', L: delta, R: e}
			default:
				delta = Arith{Op: '+', L: delta, R: e}
			}
		}
		switch {
		case self == 1 && delta != nil:
			if why := c.exactSum(); why != "" {
				return SetItem{}, why
			}
			if bad := numberOnly(delta); bad != nil {
				return SetItem{}, fmt.Sprintf("%s is not a number, which the kit adds exactly", a.named(bad.String()))
			}
			if why := c.delta().fits(delta, c.BaseTypeOID == oidNumeric); why != "" {
				return SetItem{}, why
			}
			return SetItem{Op: Increment, Value: delta}, ""
		case self > 1:
			return SetItem{}, fmt.Sprintf("%s appears %d times: the kit merges %s = %s + e", c.Name, self, c.Name, c.Name)
		}
	}
	e, bad := clientValue(val)
	if bad != nil {
		selfRead := false
		walkNodes(val, func(n *node) { selfRead = selfRead || isSelf(n) })
		if selfRead {
			return SetItem{}, "none of the writes the kit merges (c = c + e, c = e, greatest/least(c, e), a server time)"
		}
		return SetItem{}, a.notClientWhy(val, bad)
	}
	if why := c.fits(e, false); why != "" {
		return SetItem{}, why
	}
	return SetItem{Op: Assign, Value: e}, ""
}

// term is one operand of a sum, and whether it is subtracted.
type term struct {
	node     *node
	negative bool
}

// sumTerms flattens a chain of binary + and - (and unary minus inside it) into its
// signed terms; isSum is false when n is not a sum at all.
func sumTerms(n *node, negative bool) (terms []term, isSum bool) {
	switch {
	case n.op == opBinary && (n.oper == "+" || n.oper == "-"):
		left, _ := sumTerms(n.args[0], negative)
		right, _ := sumTerms(n.args[1], negative != (n.oper == "-"))
		return append(left, right...), true
	case n.op == opUnary && n.oper == "-":
		inner, isSum := sumTerms(n.args[0], !negative)
		return inner, isSum
	}
	return []term{{node: n, negative: negative}}, false
}

// notClientWhy says why part of an expression is not a client value: the part and
// why, or for a column read the whole operand that reads it ("$1 * c reads column c").
func (a *analysis) notClientWhy(operand *node, bad *notClient) string {
	if bad.evaluated {
		return bad.why
	}
	if bad.column {
		return operand.text() + " " + bad.why
	}
	return bad.node.text() + " " + bad.why
}

// constrained refuses a written column under a constraint that merged or reordered
// writes could pass or fail differently from the writes one by one: a CHECK (the
// table's or its domain's), a unique index or exclusion constraint, a foreign key.
func (a *analysis) constrained(t *Table, c *Column) {
	for _, ch := range t.Checks {
		if slices.Contains(ch.Columns, c.Name) {
			a.refuse(CheckedColumn, "%s is under CHECK constraint %s %s: compacting could change which writes fail",
				c.Name, ch.Name, checkBody(ch.Definition))
		}
	}
	for _, ch := range c.DomainCheck {
		a.refuse(CheckedColumn, "%s is of domain %s, under CHECK constraint %s %s: compacting could change "+
			"which writes fail", c.Name, ch.Domain, ch.Name, checkBody(ch.Definition))
	}
	for _, k := range t.UniqueKeys {
		if k.Primary || !slices.Contains(k.References, c.Name) {
			continue
		}
		what := "unique index"
		if k.Exclusion {
			what = "exclusion constraint"
		}
		a.refuse(UniqueColumn, "%s is under %s %s: merged writes could pass or fail it differently "+
			"from the writes one by one", c.Name, what, k.Name)
	}
	for _, fk := range t.ForeignKeys {
		if slices.Contains(fk.Columns, c.Name) {
			a.refuse(ForeignKeyColumn, "%s is in foreign key %s to %s: merged writes could pass or fail it "+
				"differently from the writes one by one", c.Name, fk.Name, fk.RefTable)
		}
	}
}

// checkBody is a CHECK constraint's condition as pg_get_constraintdef writes it,
// without the keyword and the outer parentheses: "(qty >= 0)".
func checkBody(def string) string {
	body := strings.TrimPrefix(def, "CHECK ")
	if strings.HasPrefix(body, "((") {
		if end := strings.LastIndex(body, "))"); end > 0 {
			body = body[1:end+1] + body[end+2:]
		}
	}
	return body
}
