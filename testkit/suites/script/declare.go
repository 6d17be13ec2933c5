package script

import (
	"context"
	"fmt"
	"slices"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// declare makes the counters tables of the UPDATEs and the declaration of the script; it
// returns why the queue modes cannot take it when the core cannot hold a table or a value.
func (p *prepared) declare(ctx context.Context, admin sqldb.Querier, s *Suite, slots int) []string {
	type hot struct {
		cols []counters.Column
		seen map[string]bool
	}
	byTable := map[string]*hot{}
	var order []string
	var refusals []string
	for _, w := range p.writes {
		if w.update == nil {
			continue
		}
		name := w.update.Table.Name
		h := byTable[name]
		if h == nil {
			h = &hot{seen: map[string]bool{}}
			byTable[name] = h
			order = append(order, name)
		}
		for _, it := range w.update.Set {
			op, why := coreOp(it)
			if why != "" {
				refusals = append(refusals, fmt.Sprintf("line %d: %s: %s", w.line, it.Text, why))
				continue
			}
			if !h.seen[it.Column.Name] {
				h.seen[it.Column.Name] = true
				h.cols = append(h.cols, counters.Column{Name: it.Column.Name, Op: op})
			}
		}
	}
	tables := map[string]*counters.Table{}
	for _, name := range order {
		spec, err := counters.Describe(ctx, admin, name)
		if err == nil {
			spec, err = spec.Writing(byTable[name].cols...)
		}
		if slots <= 1 {
			// Without --slots a table with a slot column holds slot 0 only: its rows are found
			// by the rest of the key, and any write merges (last write wins included).
			spec.Slotted = false
		}
		var t *counters.Table
		if err == nil {
			t, err = counters.NewTable(spec)
		}
		if err != nil {
			refusals = append(refusals, fmt.Sprintf("table %s: %v", name, err))
			continue
		}
		tables[name] = t
	}
	if len(refusals) > 0 {
		return refusals
	}
	var declared []*counters.Table
	for _, name := range order {
		declared = append(declared, tables[name])
	}
	for k := range p.writes {
		w := &p.writes[k]
		if w.insert != nil {
			if why := p.prepareAppend(w); why != "" {
				refusals = append(refusals, fmt.Sprintf("line %d: %s", w.line, why))
			}
			continue
		}
		w.table = tables[w.update.Table.Name]
		for _, kc := range w.table.Spec().Key {
			i := slices.IndexFunc(w.update.Key, func(t sqlshape.KeyTerm) bool { return t.Column.Name == kc.Name })
			if i < 0 {
				refusals = append(refusals, fmt.Sprintf("line %d: the WHERE does not name key column %s", w.line, kc.Name))
				break
			}
			w.keys = append(w.keys, i)
		}
		var names []string
		for _, it := range w.update.Set {
			names = append(names, it.Column.Name)
		}
		var err error
		if w.change, err = w.table.Change(names...); err != nil {
			refusals = append(refusals, fmt.Sprintf("line %d: %v", w.line, err))
			continue
		}
		for _, col := range w.change.Columns() {
			i := slices.IndexFunc(w.update.Set, func(it sqlshape.SetItem) bool { return it.Column.Name == col })
			if w.update.Set[i].Value != nil { // a server time takes no value
				w.items = append(w.items, i)
			}
		}
	}
	if len(refusals) > 0 {
		return refusals
	}
	for k := range p.writes {
		if err := p.writes[k].fix(); err != nil {
			refusals = append(refusals, fmt.Sprintf("line %d: %v", p.writes[k].line, err))
		}
		p.values += len(p.writes[k].items)
	}
	if len(refusals) > 0 {
		return refusals
	}
	d := counters.Declaration{
		Info:       s.Info(),
		Tables:     declared,
		Request:    p.request,
		HotSet:     func(*testkit.Run) func(int64) int { return func(int64) int { return 0 } }, // the script picks its rows
		RecordKeys: p.recordKeys,
		ClaimTable: "counter_claims", ClaimIndex: "request_index",
		Claim: p.claim, ClaimAll: p.claimAll,
		Codec:       counters.RecordCodec(),
		HottestRows: true,
		Unclaimed:   p.unclaimed,
		// The declaration is made for the run's database (p.sql): its Claim and ClaimIndex
		// are that dialect's, and the init file seeds the rows.
		MySQL: &counters.DialectSQL{},
	}
	if c := p.ownClaim(s.script.Commands()); c != nil {
		p.claimBy = c
		d.ClaimTable, d.ClaimIndex = c.insert.Table.Name, p.sql.claimIndex(c.column)
	}
	p.core = counters.New(d)
	return nil
}

// coreOp is the counters op of a SET item, or why the core cannot hold it.
func coreOp(it sqlshape.SetItem) (counters.Op, string) {
	switch {
	case it.Op == sqlshape.ServerTime, it.ServerFunc != "":
		// greatest(c, now()) is now() as far as the write knows: taken when it lands.
		return counters.ServerTime, ""
	case it.Op == sqlshape.Increment:
		return counters.Add, ""
	case it.Op == sqlshape.Assign:
		return counters.Assign, ""
	case it.Op == sqlshape.Greatest:
		return counters.Greatest, ""
	case it.Op == sqlshape.Least:
		return counters.Least, ""
	}
	return 0, "not a write the kit merges"
}

// ownClaim is an INSERT of the script that can be its request's claim: it appends one row
// whose unique key holds the request's index (:request_id), so no two requests insert the same
// key and a repeat of the request fails on it.
type ownClaim struct {
	*write
	key    []string // the unique key's columns
	column string   // the one holding :request_id
}

// ownClaim finds the script's INSERT that claims its request, if it has one: one row, not
// inside \if, a claimable unique key (sqlshape.RowInsert.Claim) one of whose columns the
// statement fills with :request_id itself (possibly cast). Without one, the kit's claim table
// claims the request.
func (p *prepared) ownClaim(cmds []*pgscript.Command) *ownClaim {
	for k := range p.writes {
		w := &p.writes[k]
		ins := w.insert
		if ins == nil || ins.Claim == nil || len(ins.Rows) != 1 || cmds[w.cmd].Conditional {
			continue
		}
		for n, col := range ins.Columns {
			if !slices.Contains(ins.Claim.Columns, col.Name) {
				continue
			}
			if isRequestID(ins.Rows[0][n].Value, cmds[w.cmd].Params) {
				return &ownClaim{write: w, key: ins.Claim.Columns, column: col.Name}
			}
		}
	}
	return nil
}

// isRequestID says whether e is the :request_id variable, possibly cast.
func isRequestID(e sqlshape.Expr, params []string) bool {
	switch x := e.(type) {
	case sqlshape.Param:
		return x.Index >= 1 && x.Index <= len(params) && params[x.Index-1] == pgscript.VarRequestID
	case sqlshape.Cast:
		return isRequestID(x.X, params)
	}
	return false
}

// write is one write statement of the script: an UPDATE declared as a change of a counters
// table, or an INSERT appended with the claim of its part.
type write struct {
	cmd        int // command index
	line       int
	update     *sqlshape.KeyedUpdate
	table      *counters.Table
	change     *counters.Change
	items      []int // the SET items that take a value, in the change's value order
	keys       []int // the WHERE's key terms in the table's key order (a slotted table's slot is the kit's)
	insert     *sqlshape.RowInsert
	sql        string         // the INSERT of appended rows (appends.go; on MySQL its head)
	sqlRow     string         // on MySQL, one row of it
	appendCols []appendColumn // the columns it fills
	paramCols  []appendColumn // those of them from client values
	// What does not vary from one request to the next, worked out once (fix): a SET item's
	// value (by items' place), the key's types, an appended row's value (by paramCols' place,
	// of a one-row INSERT).
	fixed     []*counters.Value
	keyTypes  []counters.Type
	fixedText []*string
	fixedSet  []bool
}

// fix works out once what does not vary from one request to the next: the values given by
// constants (an increment by 1, a cost of 0.001), the key's types.
func (w *write) fix() error {
	if w.update != nil {
		w.keyTypes = w.table.KeyTypes()
		w.fixed = make([]*counters.Value, len(w.items))
		for k, idx := range w.items {
			if !constant(w.update.Set[idx].Value) {
				continue
			}
			cv, err := w.itemValue(idx, nil)
			if err != nil {
				return err
			}
			w.fixed[k] = &cv
		}
		return nil
	}
	w.fixedText, w.fixedSet = make([]*string, len(w.paramCols)), make([]bool, len(w.paramCols))
	if len(w.insert.Rows) != 1 {
		return nil
	}
	for n, c := range w.paramCols {
		iv := w.insert.Rows[0][c.pos]
		if !constant(iv.Value) {
			continue
		}
		v, err := insertValue(c.col, iv.Value, nil)
		if err != nil {
			return err
		}
		w.fixedText[n], w.fixedSet[n] = text(v), true
	}
	return nil
}
