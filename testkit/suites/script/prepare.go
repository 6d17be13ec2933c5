package script

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/internal/sqlshape"
)

// prepared is a script made ready against the run's database: bound, its statements
// classified, and — when the queue modes can take it — declared on package counters.
type prepared struct {
	prog   *pgscript.Program
	init   []pgscript.InitStatement
	schema string
	stmts  []*sqlshape.Statement // by command index
	writes []write               // the parts of a request: one per write statement, in order
	// core is the script declared on package counters; nil when the queue modes cannot take
	// the script (deferral says why): sync then runs it, and its verification checks that
	// every request was written once, not what it wrote.
	core     *counters.Suite
	deferral string
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

	execs sync.Pool // *pgscript.Execution
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
}

// prepare runs the init file (unless the process joins a run another set up), binds the
// script, classifies its statements and declares it on package counters when the queue modes
// can take it; it refuses --modes that ask a queue mode of a script it cannot take.
func prepare(ctx context.Context, s *Suite, env testkit.PrepareEnv) (*prepared, error) {
	p := &prepared{schema: env.Schema}
	p.execs.New = func() any { return new(pgscript.Execution) }
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
	d := counters.Declaration{
		Info:       s.Info(),
		Tables:     declared,
		Request:    p.request,
		HotSet:     func(*testkit.Run) func(int64) int { return func(int64) int { return 0 } }, // the script picks its rows
		RecordKeys: p.recordKeys,
		ClaimTable: "counter_claims", ClaimIndex: "request_index",
		Claim: p.claim, ClaimAll: p.claimAll,
		Codec: counters.RecordCodec(),
	}
	p.core = counters.New(d)
	return nil
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

// params are a statement's arguments as sqlshape evaluates them: a pgbench double in its
// shortest exact decimal form.
func params(args []pgscript.Value) []sqlshape.Value {
	out := make([]sqlshape.Value, len(args))
	for k, a := range args {
		switch a.Kind() {
		case pgscript.Int:
			out[k] = sqlshape.Int(a.Int64())
		case pgscript.Double:
			out[k] = sqlshape.String(strconv.FormatFloat(a.Float64(), 'g', -1, 64))
		case pgscript.Bool:
			out[k] = sqlshape.Bool(a.Bool())
		case pgscript.String:
			out[k] = sqlshape.String(a.Text())
		default:
			out[k] = sqlshape.Null
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

// parts are request i's deltas, one part per write statement (an INSERT's part has none: its
// row is written with the part's claim), or an error when the request cannot be evaluated.
func (p *prepared) parts(i int64) ([][]counters.Delta, error) {
	x := p.execs.Get().(*pgscript.Execution)
	defer p.execs.Put(x)
	if err := p.eval(i, x); err != nil {
		return nil, err
	}
	out := make([][]counters.Delta, len(p.writes))
	for k, w := range p.writes {
		if w.update == nil {
			continue
		}
		st := statement(x, w.cmd)
		if st == nil {
			return nil, fmt.Errorf("%w: request %d skipped line %d", errEval, i, w.line)
		}
		d, err := w.delta(params(st.Args))
		if err != nil {
			return nil, fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
		}
		out[k] = []counters.Delta{d}
	}
	return out, nil
}

// request is Declaration.Request: only requests that evaluate reach it (check rejected the
// others before anything of them was queued).
func (p *prepared) request(i int64, _ int) [][]counters.Delta {
	parts, err := p.parts(i)
	if err != nil {
		panic(err) // deterministic: check saw this request evaluate
	}
	return parts
}

// recordKeys is Declaration.RecordKeys: an UPDATE's part is queued by its row, so that the
// writes to one row merge; an INSERT's by the request, so that it merges with nothing.
func (p *prepared) recordKeys(i int64, _ int) []counters.Key {
	parts := p.request(i, 0)
	keys := make([]counters.Key, len(parts))
	for k, part := range parts {
		if len(part) > 0 {
			keys[k] = part[0].Key
		} else {
			keys[k] = counters.Key{Table: p.writes[k].insert.Table.Name, Row: "#" + strconv.FormatInt(i, 10) + "/" + strconv.Itoa(k)}
		}
	}
	return keys
}

// delta is the write's delta for a request's parameters.
func (w *write) delta(params []sqlshape.Value) (counters.Delta, error) {
	kv, err := w.update.KeyValues(params)
	if err != nil {
		return counters.Delta{}, err
	}
	kt := w.table.KeyTypes()
	key := make([]counters.Value, len(w.keys))
	for k, term := range w.keys {
		if key[k], err = coreValue(kt[k], kv[term]); err != nil {
			return counters.Delta{}, fmt.Errorf("key %s: %w", w.update.Key[term].Column.Name, err)
		}
	}
	values := make([]counters.Value, len(w.items))
	for k, idx := range w.items {
		it := w.update.Set[idx]
		v, err := it.Eval(params)
		if err != nil {
			return counters.Delta{}, err
		}
		typ, _ := w.table.ColumnType(it.Column.Name)
		if values[k], err = coreValue(typ, v); err != nil {
			return counters.Delta{}, fmt.Errorf("%s: %w", it.Text, err)
		}
	}
	return w.change.Delta(w.table.Row(key...), values...), nil
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
		d, err := v.Decimal() // units of 10⁻⁸, as Money's
		return counters.Amount(counters.Money(d)), err
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
