package sqlshape

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
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

func (a *analysis) insert(ins *pg.InsertStmt) {
	a.st.Tag, a.st.Target = "INSERT", ins.Relation.Relname
	a.st.short = short(a.st.Text, "INSERT INTO "+ins.Relation.Relname, "")
	shaped := true
	if ins.WithClause != nil {
		shaped = false
		a.refuse(UnsupportedForm, "WITH: the kit defers an INSERT whose rows are its own VALUES")
	}
	if ins.OnConflictClause != nil {
		shaped = false
		a.refuse(UnsupportedForm, "ON CONFLICT: whether it inserts, and what it updates, depends on the rows "+
			"written before it")
	}
	if len(ins.ReturningList) > 0 {
		shaped = false
		a.refuse(Returning, "RETURNING: a deferred write cannot return its values at request time")
	}
	if ins.Override != pg.OverridingKind_OVERRIDING_NOT_SET {
		shaped = false
		a.refuse(UnsupportedForm, "OVERRIDING … VALUE: the kit writes identity columns only by their default")
	}
	var lists []*pg.Node
	if ins.SelectStmt != nil {
		sel := ins.SelectStmt.GetSelectStmt()
		if sel == nil || len(sel.ValuesLists) == 0 || sel.WithClause != nil || len(sel.SortClause) > 0 ||
			sel.LimitCount != nil || sel.LimitOffset != nil {
			a.refuse(UnsupportedForm, "INSERT … SELECT reads the database when the write lands")
			return
		}
		lists = sel.ValuesLists
	}
	t := a.table(ins.Relation, false)
	if t == nil {
		return
	}
	cols, ok := a.insertColumns(ins.Cols, t)
	if !ok {
		return
	}
	out := &RowInsert{Table: t, Columns: cols}
	serverTimed, defaulted := map[string]bool{}, map[string]bool{}
	for _, list := range lists {
		items := list.GetList().GetItems()
		if len(ins.Cols) == 0 && out.Columns == nil {
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
			if _, isDefault := item.Node.(*pg.Node_SetToDefault); isDefault {
				row[i].Default = true
				defaulted[col.Name] = true
				continue
			}
			if col.Generated {
				a.refuse(UnsupportedForm, "%s is a generated column: only DEFAULT can be inserted into it", col.Name)
				shaped = false
				continue
			}
			if serverTime(item) {
				row[i].ServerFunc = a.r.expr(item)
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
	if ins.SelectStmt == nil {
		out.Rows = [][]InsertValue{{}} // DEFAULT VALUES
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

func (a *analysis) insertColumns(targets []*pg.Node, t *Table) ([]*Column, bool) {
	var cols []*Column
	for _, n := range targets {
		rt := n.GetResTarget()
		if len(rt.GetIndirection()) > 0 {
			a.refuse(UnsupportedForm, "INSERT INTO %s (%s…): the kit writes whole columns, not elements or fields",
				t.Name, rt.Name)
			return nil, false
		}
		c := t.Column(rt.GetName())
		if c == nil {
			a.refuse(UnknownName, "%s has no column %s", t.Name, rt.GetName())
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
