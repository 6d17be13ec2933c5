package script

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// evaluator works out a request's writes from the bound script: its deltas (one per UPDATE,
// in the script's order), its record key and the rows its INSERTs append. A request is
// evaluated once while it is remembered (cache), and its deltas built once per distinct set of
// values bound to the UPDATEs (memo).
type evaluator struct {
	prog    *pgscript.Program
	writes  []write // the write statements, in order: together a request's one part
	updates int     // how many of writes are UPDATEs
	values  int     // how many values their deltas take

	execs sync.Pool  // *scratch
	memo  *deltaMemo // requests' deltas by their UPDATEs' bound values
	cache [cacheSize]atomic.Pointer[evaluated]
}

// errEval is a request the script cannot be evaluated for (a division by zero in a \set, an
// increment out of its column's range): the request fails, nothing of it is written.
var errEval = errors.New("script")

// eval evaluates request i into x and returns each statement's parameters as sqlshape values.
func (ev *evaluator) eval(i int64, x *pgscript.Execution) error {
	if err := ev.prog.Eval(i, x); err != nil {
		return fmt.Errorf("%w: request %d: %v", errEval, i, err)
	}
	return nil
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
	// argv is a statement's arguments as sent (args).
	argv []any
}

// evaluate is request i's deltas, or an error when the request cannot be evaluated (or an
// INSERT's values be taken). The result is shared: callers must not change it.
func (ev *evaluator) evaluate(i int64) (*evaluated, error) {
	slot := &ev.cache[i&(cacheSize-1)]
	if e := slot.Load(); e != nil && e.i == i {
		return e, nil
	}
	sc := ev.execs.Get().(*scratch)
	defer ev.execs.Put(sc)
	if err := ev.eval(i, &sc.x); err != nil {
		return nil, err
	}
	return ev.evaluateFrom(i, sc)
}

// evaluateFrom is evaluate for sc.x, request i's execution already worked out (by a caller
// that needs it too: the queue modes' SELECTs).
func (ev *evaluator) evaluateFrom(i int64, sc *scratch) (*evaluated, error) {
	sc.bound = sc.bound[:0]
	for k := range ev.writes {
		w := &ev.writes[k]
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
	if ev.updates > 0 { // without an UPDATE a request's record key is its own
		m, memoSlot = ev.memo.get(sc.bound)
	}
	if m == nil {
		part := counters.NewPart(ev.updates, ev.values)
		for k := range ev.writes {
			w := &ev.writes[k]
			if w.update == nil {
				continue
			}
			sc.params = appendParams(sc.params[:0], statement(&sc.x, w.cmd).Args)
			if err := w.addDelta(&part, sc); err != nil {
				return nil, fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
			}
		}
		m = &memoEntry{deltas: part.Deltas(), keys: ev.keysOf(i, part.Deltas())}
		ev.memo.put(memoSlot, sc.bound, m)
	}
	e := &evaluated{i: i, deltas: m.deltas, keys: m.keys}
	ev.cache[i&(cacheSize-1)].Store(e)
	return e, nil
}

// deltas are request i's deltas, one per UPDATE, in the script's order: the request's one part
// (its appended rows go with the part's claim). One part a request: a batch merges the writes
// to a row whatever the record they came in (counters.Apply), and a request is claimed with
// one row.
func (ev *evaluator) deltas(i int64) ([]counters.Delta, error) {
	e, err := ev.evaluate(i)
	if err != nil {
		return nil, err
	}
	return slices.Clone(e.deltas), nil // the core stamps each delta's Order
}

// request is Declaration.Request: only requests that evaluate reach it (the queue modes' op
// refused the others before anything of them was queued).
func (ev *evaluator) request(i int64, _ int) [][]counters.Delta {
	deltas, err := ev.deltas(i)
	if err != nil {
		panic(err) // deterministic: this request evaluated when it was queued
	}
	return [][]counters.Delta{deltas}
}

// recordKeys is Declaration.RecordKeys: a request's record is queued by the row of its first
// UPDATE (a script without one: by the request itself).
func (ev *evaluator) recordKeys(i int64, _ int) []counters.Key {
	e, err := ev.evaluate(i)
	if err != nil {
		panic(err) // deterministic: the queue modes' op evaluated this request first
	}
	return e.keys
}

// keysOf is request i's record key: the row of its first UPDATE, or for a script that only
// appends, one of its own.
func (ev *evaluator) keysOf(i int64, deltas []counters.Delta) []counters.Key {
	if len(deltas) > 0 {
		return []counters.Key{deltas[0].Key}
	}
	return []counters.Key{{Table: ev.writes[0].insert.Table.Name, Row: "#" + strconv.FormatInt(i, 10)}}
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

// insertRows appends request i's rows of INSERT w, as text (nil: NULL), to rows.
func (ev *evaluator) insertRows(w *write, i int64, rows [][]*string) ([][]*string, error) {
	err := ev.eachInsertRow(w, i, func(row []sqlshape.InsertValue, params []sqlshape.Value) error {
		r, err := w.insertRow(row, params)
		rows = append(rows, r)
		return err
	})
	return rows, err
}

// eachInsertRow calls f with every VALUES row of INSERT w and request i's bound values.
func (ev *evaluator) eachInsertRow(w *write, i int64, f func(row []sqlshape.InsertValue, params []sqlshape.Value) error) error {
	sc := ev.execs.Get().(*scratch)
	defer ev.execs.Put(sc)
	if err := ev.eval(i, &sc.x); err != nil {
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
