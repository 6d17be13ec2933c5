package script

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// prepared is a script made ready against the run's database: bound, its statements
// classified, and — when the queue modes can take it — declared on package counters.
type prepared struct {
	prog   *pgscript.Program
	init   []pgscript.InitStatement
	schema string
	stmts  []*sqlshape.Statement // by command index
	writes []write               // the write statements, in order: together a request's one part
	// core is the script declared on package counters; nil when the queue modes cannot take
	// the script (deferral says why): sync then runs it, and its verification checks that
	// every request was written once, not what it wrote.
	core     *counters.Suite
	deferral string
	updates  int // how many of writes are UPDATEs
	values   int // how many values their deltas take
	// claimBy is the script's own INSERT that claims its request (ownClaim); nil: the kit's
	// claim table does.
	claimBy *ownClaim
	// selects are the commands a queue mode runs at request time (SELECTs); sleeps says the
	// script sleeps (\sleep), which a queue mode's request does too.
	selects []int
	sleeps  bool
	// created are the objects the init file makes (seed drops them before running it again);
	// inserted the tables the script appends to, unchanged the others it must leave alone.
	created   []object
	inserted  []string
	unchanged []string
	sums      map[string]string // unchanged tables' checksums after the seed

	execs sync.Pool  // *scratch
	memo  *deltaMemo // requests' deltas by their UPDATEs' bound values
	cache [cacheSize]atomic.Pointer[evaluated]
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
	sql        string         // the INSERT of appended rows (appends.go)
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

// prepare runs the init file (unless the process joins a run another set up), binds the
// script, classifies its statements and declares it on package counters when the queue modes
// can take it; it refuses --modes that ask a queue mode of a script it cannot take.
func prepare(ctx context.Context, s *Suite, env testkit.PrepareEnv) (*prepared, error) {
	p := &prepared{schema: env.Schema}
	p.execs.New = func() any { return new(scratch) }
	p.memo = newDeltaMemo()
	vars := s.vars()
	var err error
	if s.init != "" {
		if p.init, err = pgscript.ParseInit(s.init, vars); err != nil {
			return nil, fmt.Errorf("%s: %w", s.initFile, err)
		}
	}
	if !env.Joining {
		if p.created, err = p.runInit(ctx, env.Admin, s.initFile); err != nil {
			return nil, err
		}
	}
	defines := slices.Clone(s.defines)
	if s.script.Uses(pgscript.VarScale) && vars[pgscript.VarScale] == "" {
		// pgbench's own rule: the scale is pgbench_branches' rows when -D scale does not say.
		var n int64
		if err := env.Admin.QueryRow(ctx, `SELECT count(*) FROM pgbench_branches`).Scan(&n); err != nil {
			return nil, fmt.Errorf("the script uses :scale: give it with --set scale=N (pgbench_branches, which would tell, cannot be read: %v)", err)
		}
		defines = append(defines, pgscript.Define{Name: pgscript.VarScale, Value: strconv.FormatInt(n, 10)})
	}
	if p.prog, err = s.script.Bind(pgscript.Env{Seed: env.Config.Seed, Clients: max(env.Config.Concurrency, 1), Defines: defines}); err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	cat, err := sqlshape.LoadCatalog(ctx, env.Admin, env.Schema, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	cmds := s.script.Commands()
	inputs := make([]sqlshape.Input, len(cmds))
	for i, c := range cmds {
		inputs[i] = sqlshape.Input{SQL: c.SQL, Line: c.Line, Params: c.Params}
	}
	plan, err := sqlshape.Plan(inputs, cat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	p.stmts = plan.Statements
	refusals := p.classify(cmds, plan)
	if len(refusals) == 0 {
		refusals = p.declare(ctx, env.Admin, s, env.Config.Slots)
	}
	if env.Config.Slots > 1 {
		if err := p.checkSlots(env.Config); err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
	}
	if len(refusals) > 0 {
		p.deferral = strings.Join(refusals, "; ")
		if queued := queueModes(env.Config.Modes); len(queued) > 0 {
			return nil, fmt.Errorf("%s: the %s mode%s cannot take this script: %s (sync runs it as written: --modes sync)",
				s.file, strings.Join(queued, ", "), plural(len(queued)), p.deferral)
		}
	}
	p.tablesToCheck(cmds, cat)
	return p, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// queueModes are the modes among modes that defer writes.
func queueModes(modes []testkit.Mode) []string {
	var out []string
	for _, m := range modes {
		if m != testkit.Sync {
			out = append(out, m.String())
		}
	}
	return out
}

// classify sorts the script's commands into writes (the parts of a request), SELECTs and the
// rest, and returns why the queue modes cannot take the script, if they cannot.
func (p *prepared) classify(cmds []*pgscript.Command, plan *sqlshape.Script) []string {
	var refusals []string
	for _, r := range plan.Refusals {
		refusals = append(refusals, r.Error())
	}
	for i, st := range plan.Statements {
		switch st.Class {
		case sqlshape.Update, sqlshape.Insert:
			if cmds[i].Conditional {
				refusals = append(refusals, fmt.Sprintf("line %d: a write inside \\if: the queue modes need the same writes in every request", st.Line))
			}
			p.writes = append(p.writes, write{cmd: i, line: st.Line, update: st.Update, insert: st.Insert})
			if st.Update != nil {
				p.updates++
			}
		case sqlshape.Select:
			p.selects = append(p.selects, i)
		}
	}
	p.sleeps = p.prog.Script().Sleeps()
	return refusals
}

// declare makes the counters tables of the UPDATEs and the declaration of the script; it
// returns why the queue modes cannot take it when the core cannot hold a table or a value.
func (p *prepared) declare(ctx context.Context, admin *pgx.Conn, s *Suite, slots int) []string {
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
	}
	if c := p.ownClaim(s.script.Commands()); c != nil {
		p.claimBy = c
		d.ClaimTable, d.ClaimIndex = c.insert.Table.Name, pgx.Identifier{c.column}.Sanitize()+"::int8"
	}
	p.core = counters.New(d)
	return nil
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

// checkSlots refuses --slots where it cannot mean what it says. A table is split into slots
// when its primary key ends with a slot smallint column (the init file declares it, as the
// built-in suites' tables do) and the script only adds to it or keeps an extreme (no last
// write wins); sync runs the script as written, on the rows it names, so it runs without
// slots; a SELECT of a split table would read one slot of a row.
func (p *prepared) checkSlots(c testkit.Config) error {
	if err := slotsWithSync(c); err != nil {
		return err
	}
	if p.core == nil {
		return nil // the queue modes are refused anyway, with the reason
	}
	split := map[string]bool{}
	for _, w := range p.writes {
		if w.table != nil && w.table.Slotted() {
			split[w.table.Name()] = true
		}
	}
	if len(split) == 0 {
		return errors.New("--slots: no table the script updates can be split: a table is split when its primary key ends with a slot smallint column, holding 0 (docs/scripts.md, --slots)")
	}
	for _, i := range p.selects {
		for _, t := range p.stmts[i].Reads {
			if split[t] {
				return fmt.Errorf("--slots: line %d reads %s, which --slots splits into rows the SELECT does not sum", p.stmts[i].Line, t)
			}
		}
	}
	return nil
}

// slotsWithSync refuses --slots with sync, which runs the script as written.
func slotsWithSync(c testkit.Config) error {
	if c.Slots > 1 && slices.Contains(c.Modes, testkit.Sync) {
		return errors.New("--slots: sync runs the script as written, on the rows it names, not on slots the kit splits them into (run the queue modes with --slots)")
	}
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

// tablesToCheck lists the tables the script inserts into, and the tables it must leave
// alone: every table of the init file that no statement writes.
func (p *prepared) tablesToCheck(cmds []*pgscript.Command, cat *sqlshape.Catalog) {
	written := map[string]bool{}
	for _, st := range p.stmts {
		if st.Target != "" {
			written[st.Target] = true
		}
		if st.Class == sqlshape.Insert && !slices.Contains(p.inserted, st.Target) {
			p.inserted = append(p.inserted, st.Target)
		}
	}
	for _, o := range p.created {
		if o.kind == "table" && !written[o.name] && cat.Table(o.name) != nil {
			p.unchanged = append(p.unchanged, o.name)
		}
	}
}

// errEval is a request the script cannot be evaluated for (a division by zero in a \set, an
// increment out of its column's range): the request fails, nothing of it is written.
var errEval = errors.New("script")

// eval evaluates request i into x and returns each statement's parameters as sqlshape values.
func (p *prepared) eval(i int64, x *pgscript.Execution) error {
	if err := p.prog.Eval(i, x); err != nil {
		return fmt.Errorf("%w: request %d: %v", errEval, i, err)
	}
	return nil
}

// appendParams appends a statement's arguments to out as sqlshape evaluates them: a pgbench
// double in its shortest exact decimal form.
func appendParams(out []sqlshape.Value, args []pgscript.Value) []sqlshape.Value {
	for _, a := range args {
		switch a.Kind() {
		case pgscript.Int:
			out = append(out, sqlshape.Int(a.Int64()))
		case pgscript.Double:
			out = append(out, sqlshape.String(strconv.FormatFloat(a.Float64(), 'g', -1, 64)))
		case pgscript.Bool:
			out = append(out, sqlshape.Bool(a.Bool()))
		case pgscript.String:
			out = append(out, sqlshape.String(a.Text()))
		default:
			out = append(out, sqlshape.Null)
		}
	}
	return out
}

// statement is the evaluated statement of command cmd in x (nil when the request skipped it).
func statement(x *pgscript.Execution, cmd int) *pgscript.Statement {
	for k := range x.Statements {
		if x.Statements[k].Command.Index == cmd {
			return &x.Statements[k]
		}
	}
	return nil
}

// evaluated is request i's deltas, one per UPDATE in the script's order.
type evaluated struct {
	i      int64
	deltas []counters.Delta // shared: never changed
	keys   []counters.Key   // its record key (recordKeys)
}

// cacheSize is how many evaluated requests are kept (by index modulo it): a request is
// evaluated when it is queued, and its deltas asked for again when its batch is written.
const cacheSize = 1 << 16

// scratch is what one evaluation works in, reused.
type scratch struct {
	x      pgscript.Execution
	params []sqlshape.Value
	bound  []pgscript.Value // the values bound to the UPDATEs, in order (the memo's key)
	key    []counters.Value
	values []counters.Value
}

// evaluate is request i's deltas, or an error when the request cannot be evaluated (or an
// INSERT's values be taken). The result is shared: callers must not change it.
func (p *prepared) evaluate(i int64) (*evaluated, error) {
	slot := &p.cache[i&(cacheSize-1)]
	if e := slot.Load(); e != nil && e.i == i {
		return e, nil
	}
	sc := p.execs.Get().(*scratch)
	defer p.execs.Put(sc)
	if err := p.eval(i, &sc.x); err != nil {
		return nil, err
	}
	return p.evaluateFrom(i, sc)
}

// evaluateFrom is evaluate for sc.x, request i's execution already worked out (by a caller
// that needs it too: the queue modes' SELECTs).
func (p *prepared) evaluateFrom(i int64, sc *scratch) (*evaluated, error) {
	sc.bound = sc.bound[:0]
	for k := range p.writes {
		w := &p.writes[k]
		st := statement(&sc.x, w.cmd)
		if st == nil {
			return nil, fmt.Errorf("%w: request %d skipped line %d", errEval, i, w.line)
		}
		if w.update != nil {
			sc.bound = append(sc.bound, st.Args...)
			continue
		}
		sc.params = appendParams(sc.params[:0], st.Args)
		if err := w.checkRows(sc.params); err != nil {
			return nil, fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
		}
	}
	var m *memoEntry
	var memoSlot *atomic.Pointer[memoEntry]
	if p.updates > 0 { // without an UPDATE a request's record key is its own
		m, memoSlot = p.memo.get(sc.bound)
	}
	if m == nil {
		part := counters.NewPart(p.updates, p.values)
		for k := range p.writes {
			w := &p.writes[k]
			if w.update == nil {
				continue
			}
			sc.params = appendParams(sc.params[:0], statement(&sc.x, w.cmd).Args)
			if err := w.addDelta(&part, sc); err != nil {
				return nil, fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
			}
		}
		m = &memoEntry{deltas: part.Deltas(), keys: p.keysOf(i, part.Deltas())}
		p.memo.put(memoSlot, sc.bound, m)
	}
	e := &evaluated{i: i, deltas: m.deltas, keys: m.keys}
	p.cache[i&(cacheSize-1)].Store(e)
	return e, nil
}

// insertRows appends request i's rows of INSERT w, as text (nil: NULL), to rows.
func (p *prepared) insertRows(w *write, i int64, rows [][]*string) ([][]*string, error) {
	err := p.eachInsertRow(w, i, func(row []sqlshape.InsertValue, params []sqlshape.Value) error {
		r, err := w.insertRow(row, params)
		rows = append(rows, r)
		return err
	})
	return rows, err
}

// eachInsertRow calls f with every VALUES row of INSERT w and request i's bound values.
func (p *prepared) eachInsertRow(w *write, i int64, f func(row []sqlshape.InsertValue, params []sqlshape.Value) error) error {
	sc := p.execs.Get().(*scratch)
	defer p.execs.Put(sc)
	if err := p.eval(i, &sc.x); err != nil {
		return err
	}
	st := statement(&sc.x, w.cmd)
	if st == nil {
		return fmt.Errorf("%w: request %d skipped line %d", errEval, i, w.line)
	}
	sc.params = appendParams(sc.params[:0], st.Args)
	for r := range w.insert.Rows {
		if err := f(w.insert.Rows[r], sc.params); err != nil {
			return fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
		}
	}
	return nil
}

// checkRows checks that every VALUES row of w takes its values for params, keeping nothing:
// the rows are built when their batch is written (appendArgs).
func (w *write) checkRows(params []sqlshape.Value) error {
	for _, r := range w.insert.Rows {
		for n, c := range w.paramCols {
			if w.fixedSet[n] {
				continue
			}
			if err := checkValue(c.col, r[c.pos].Value, params); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertRow is one VALUES row of w for params, its client values as text (nil: NULL).
func (w *write) insertRow(row []sqlshape.InsertValue, params []sqlshape.Value) ([]*string, error) {
	out := make([]*string, len(w.paramCols))
	for n := range w.paramCols {
		t, null, err := w.valueText(n, row, params)
		if err != nil {
			return nil, err
		}
		if !null {
			out[n] = &t
		}
	}
	return out, nil
}

// valueText is the text of w's client-valued column n (paramCols' place) in VALUES row row,
// or null.
func (w *write) valueText(n int, row []sqlshape.InsertValue, params []sqlshape.Value) (_ string, null bool, _ error) {
	c := w.paramCols[n]
	if w.fixedSet[n] {
		if t := w.fixedText[n]; t != nil {
			return *t, false, nil
		}
		return "", true, nil
	}
	if c.text { // a text column takes the value's text as it is
		x, err := row[c.pos].Value.Eval(params)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", c.col.Name, err)
		}
		if x.IsNull() {
			return "", true, nil
		}
		return plain(x), false, nil
	}
	v, err := insertValue(c.col, row[c.pos].Value, params)
	if err != nil {
		return "", false, err
	}
	if v.Kind == sqlshape.NullValue {
		return "", true, nil
	}
	return plain(v), false, nil
}

// deltas are request i's deltas, one per UPDATE, in the script's order: the request's one part
// (its appended rows go with the part's claim). One part a request: a batch merges the writes
// to a row whatever the record they came in (counters.Apply), and a request is claimed with
// one row.
func (p *prepared) deltas(i int64) ([]counters.Delta, error) {
	e, err := p.evaluate(i)
	if err != nil {
		return nil, err
	}
	return slices.Clone(e.deltas), nil // the core stamps each delta's Order
}

// request is Declaration.Request: only requests that evaluate reach it (the queue modes' op
// refused the others before anything of them was queued).
func (p *prepared) request(i int64, _ int) [][]counters.Delta {
	deltas, err := p.deltas(i)
	if err != nil {
		panic(err) // deterministic: this request evaluated when it was queued
	}
	return [][]counters.Delta{deltas}
}

// recordKeys is Declaration.RecordKeys: a request's record is queued by the row of its first
// UPDATE (a script without one: by the request itself).
func (p *prepared) recordKeys(i int64, _ int) []counters.Key {
	e, err := p.evaluate(i)
	if err != nil {
		panic(err) // deterministic: the queue modes' op evaluated this request first
	}
	return e.keys
}

// keysOf is request i's record key: the row of its first UPDATE, or for a script that only
// appends, one of its own.
func (p *prepared) keysOf(i int64, deltas []counters.Delta) []counters.Key {
	if len(deltas) > 0 {
		return []counters.Key{deltas[0].Key}
	}
	return []counters.Key{{Table: p.writes[0].insert.Table.Name, Row: "#" + strconv.FormatInt(i, 10)}}
}

// addDelta adds the write's delta for the parameters in sc to part.
func (w *write) addDelta(part *counters.Part, sc *scratch) error {
	sc.key = sc.key[:0]
	for k, term := range w.keys {
		kt := w.update.Key[term]
		v, err := kt.Value.Eval(sc.params)
		if err == nil && v.IsNull() {
			err = errors.New("NULL: the UPDATE names no row")
		}
		if err == nil {
			v, err = kt.Column.Compare(v)
		}
		var cv counters.Value
		if err == nil {
			cv, err = coreValue(w.keyTypes[k], v)
		}
		if err != nil {
			return fmt.Errorf("key %s: %w", kt.Column.Name, err)
		}
		sc.key = append(sc.key, cv)
	}
	sc.values = sc.values[:0]
	for k, idx := range w.items {
		if f := w.fixed[k]; f != nil {
			sc.values = append(sc.values, *f)
			continue
		}
		cv, err := w.itemValue(idx, sc.params)
		if err != nil {
			return err
		}
		sc.values = append(sc.values, cv)
	}
	part.Add(w.change, w.table.Row(sc.key...), sc.values...)
	return nil
}

// itemValue is SET item idx's value for params, as the core takes it.
func (w *write) itemValue(idx int, params []sqlshape.Value) (counters.Value, error) {
	it := w.update.Set[idx]
	v, err := it.Eval(params)
	if err != nil {
		return counters.Value{}, err
	}
	typ, _ := w.table.ColumnType(it.Column.Name)
	cv, err := coreValue(typ, v)
	if err != nil {
		return counters.Value{}, fmt.Errorf("%s: %w", it.Text, err)
	}
	return cv, nil
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

// constant says whether e takes no parameter: its value is the same for every request.
func constant(e sqlshape.Expr) bool {
	switch x := e.(type) {
	case sqlshape.Param:
		return false
	case sqlshape.Const:
		return true
	case sqlshape.Neg:
		return constant(x.X)
	case sqlshape.Cast:
		return constant(x.X)
	case sqlshape.Arith:
		return constant(x.L) && constant(x.R)
	}
	return false
}

// checkValue fails where insertValue would, without the text a text column keeps as it is.
func checkValue(col *sqlshape.Column, e sqlshape.Expr, params []sqlshape.Value) error {
	if !isText(col) {
		_, err := insertValue(col, e, params)
		return err
	}
	x, err := e.Eval(params)
	if err != nil {
		return fmt.Errorf("%s: %w", col.Name, err)
	}
	if x.IsNull() && col.NotNull {
		return fmt.Errorf("NULL into NOT NULL column %s", col.Name)
	}
	return nil
}

// isText says whether col keeps a value's text as it is (text, varchar without a length).
func isText(col *sqlshape.Column) bool {
	return col.TypeName == "text" || col.TypeName == "character varying"
}

// insertValue is e's value for column col, as RowInsert.Values gives it.
func insertValue(col *sqlshape.Column, e sqlshape.Expr, params []sqlshape.Value) (sqlshape.Value, error) {
	x, err := e.Eval(params)
	if err != nil {
		return sqlshape.Null, fmt.Errorf("%s: %w", col.Name, err)
	}
	if x.IsNull() && col.NotNull {
		return sqlshape.Null, fmt.Errorf("NULL into NOT NULL column %s", col.Name)
	}
	return col.Compare(x)
}

// coreValue is v as counters holds a value of class typ.
func coreValue(typ counters.Type, v sqlshape.Value) (counters.Value, error) {
	if v.IsNull() {
		return counters.Value{}, errors.New("a NULL the kit cannot merge")
	}
	switch typ {
	case counters.TypeInteger:
		n, err := intOf(v)
		return counters.Int(n), err
	case counters.TypeNumeric:
		d, err := v.Decimal()
		return counters.Amount(d), err
	case counters.TypeText:
		if v.Kind == sqlshape.StringValue {
			return counters.Text(v.Str), nil
		}
		return counters.Text(v.String()), nil
	}
	return counters.Value{}, fmt.Errorf("a client value of a %s column", typ)
}

func intOf(v sqlshape.Value) (int64, error) {
	switch v.Kind {
	case sqlshape.IntValue:
		return v.Int, nil
	case sqlshape.StringValue:
		return strconv.ParseInt(v.Str, 10, 64)
	}
	return 0, fmt.Errorf("%s is not an integer", v)
}
