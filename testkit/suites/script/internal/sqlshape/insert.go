package sqlshape

import (
	"fmt"
	"slices"
)

// RowInsert is an INSERT of rows given in VALUES (one or several) or DEFAULT VALUES.
type RowInsert struct {
	Table *Table
	// Columns are the columns the VALUES fill, in their order: the named ones, or the
	// table's first ones when the statement names none.
	Columns []*Column
	Rows    [][]InsertValue // one per VALUES row, each as long as Columns
	// ServerTime names the columns some row gives a server time: verification checks
	// them for presence only.
	ServerTime []string
	// Defaulted names the columns the server fills (left out, or DEFAULT in some row):
	// serial keys, defaults, generated columns. Verification cannot predict them.
	Defaulted []string
	// Claim is a unique key (primary key first) every column of which every row gives
	// a client value other than a NULL literal: the row can be the claim of its own
	// write, provided different requests never insert the same key. Nil when none.
	Claim *UniqueKey
}

// InsertValue is one value of a VALUES row: a client value, a server time or DEFAULT.
type InsertValue struct {
	Value      Expr   // a client value; nil for a server time or DEFAULT
	ServerFunc string // the server time as SQL: "CURRENT_TIMESTAMP", "now()"
	Default    bool
}

// Values evaluates every row's client values for the given parameters, each in the
// form its column compares it in (Column.Compare). A server time or DEFAULT is NULL
// there: Rows says which. A NULL for a NOT NULL column is an error, as it would be
// for PostgreSQL.
func (ins *RowInsert) Values(params []Value) ([][]Value, error) {
	out := make([][]Value, len(ins.Rows))
	for r, row := range ins.Rows {
		out[r] = make([]Value, len(row))
		for i, v := range row {
			if v.Value == nil {
				continue
			}
			col := ins.Columns[i]
			x, err := v.Value.Eval(params)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", col.Name, err)
			}
			if x.IsNull() && col.NotNull {
				return nil, fmt.Errorf("NULL into NOT NULL column %s", col.Name)
			}
			if out[r][i], err = col.Compare(x); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (a *analysis) insert(ins *insertSyntax) {
	a.st.Tag, a.st.Target = "INSERT", ins.table.name
	a.st.short = short(a.st.Text, "INSERT INTO "+ins.table.name, "")
	shaped := a.forms(ins.forms, "an INSERT whose rows are its own VALUES")
	if ins.fromSelect {
		a.refuse(UnsupportedForm, "INSERT … SELECT reads the database when the write lands")
		return
	}
	t := a.table(ins.table, false)
	if t == nil {
		return
	}
	cols, ok := a.insertColumns(ins.columns, t)
	if !ok {
		return
	}
	out := &RowInsert{Table: t, Columns: cols}
	serverTimed, defaulted := map[string]bool{}, map[string]bool{}
	for _, items := range ins.rows {
		if len(ins.columns) == 0 && out.Columns == nil {
			if len(items) > len(t.Columns) {
				a.refuse(UnsupportedForm, "VALUES has %d values, and %s has %d columns", len(items), t.Name,
					len(t.Columns))
				return
			}
			out.Columns = t.Columns[:len(items)]
		}
		if len(items) != len(out.Columns) {
			a.refuse(UnsupportedForm, "VALUES has %d values for %d columns", len(items), len(out.Columns))
			return
		}
		row := make([]InsertValue, len(items))
		for i, item := range items {
			col := out.Columns[i]
			if item.op == opDefault {
				row[i].Default = true
				defaulted[col.Name] = true
				continue
			}
			if col.Generated {
				a.refuse(UnsupportedForm, "%s is a generated column: only DEFAULT can be inserted into it", col.Name)
				shaped = false
				continue
			}
			if isServerTime(item) {
				row[i].ServerFunc = item.text()
				serverTimed[col.Name] = true
				continue
			}
			e, bad := clientValue(item)
			if bad != nil {
				a.refuse(Inexact, "%s: %s", col.Name, a.notClientWhy(item, bad))
				shaped = false
				continue
			}
			if why := col.fits(e, false); why != "" {
				a.refuse(Inexact, "%s: %s", col.Name, why)
				shaped = false
				continue
			}
			row[i].Value = e
		}
		out.Rows = append(out.Rows, row)
	}
	if ins.defaultValues {
		out.Rows = [][]InsertValue{{}}
	}
	for _, c := range t.Columns {
		if !slices.Contains(out.Columns, c) {
			defaulted[c.Name] = true
		}
	}
	for _, c := range t.Columns {
		if serverTimed[c.Name] {
			out.ServerTime = append(out.ServerTime, c.Name)
		}
		if defaulted[c.Name] {
			out.Defaulted = append(out.Defaulted, c.Name)
		}
	}
	out.Claim = claimKey(out, t)
	if shaped {
		a.st.Class = Insert
		a.st.Insert = out
	}
}

func (a *analysis) insertColumns(targets []insertColumn, t *Table) ([]*Column, bool) {
	var cols []*Column
	for _, rt := range targets {
		if rt.indirection {
			a.refuse(UnsupportedForm, "INSERT INTO %s (%s…): the kit writes whole columns, not elements or fields",
				t.Name, rt.name)
			return nil, false
		}
		c := t.Column(rt.name)
		if c == nil {
			a.refuse(UnknownName, "%s has no column %s", t.Name, rt.name)
			return nil, false
		}
		if slices.Contains(cols, c) {
			a.refuse(UnsupportedForm, "%s is named twice", c.Name)
			return nil, false
		}
		cols = append(cols, c)
	}
	return cols, true
}

// claimKey finds the unique key every row of ins gives client values for.
func claimKey(ins *RowInsert, t *Table) *UniqueKey {
	for _, k := range t.Claimable() {
		ok := len(ins.Rows) > 0
		for _, name := range k.Columns {
			i := slices.IndexFunc(ins.Columns, func(c *Column) bool { return c.Name == name })
			if i < 0 {
				ok = false
				break
			}
			for _, row := range ins.Rows {
				c, isConst := row[i].Value.(Const)
				if row[i].Value == nil || (isConst && c.Value.IsNull()) {
					ok = false
				}
			}
		}
		if ok {
			return k
		}
	}
	return nil
}
