package script

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// prepared is a script made ready against the run's database: bound, its statements
// classified, and — when the queue modes can take it — declared on package counters
// (declare.go). Its evaluator works out each request's writes (evaluate.go); checkedTables
// are what its verification compares beyond the counters tables (verify.go).
type prepared struct {
	evaluator
	checkedTables
	sql    dialect // the suite's own SQL, in the run's database's
	init   []pgscript.InitStatement
	schema string
	stmts  []*sqlshape.Statement // by command index
	// core is the script declared on package counters; nil when the queue modes cannot take
	// the script (deferral says why): sync then runs it, and its verification checks that
	// every request was written once, not what it wrote.
	core     *counters.Suite
	deferral string
	// claimBy is the script's own INSERT that claims its request (ownClaim); nil: the kit's
	// claim table does, in sync unless asWritten (--as-written).
	claimBy   *ownClaim
	asWritten bool
	// selects are the commands a queue mode runs at request time (SELECTs); sleeps says the
	// script sleeps (\sleep), which a queue mode's request does too.
	selects []int
	sleeps  bool
}

// unclaimed says run r's requests carry no claim: a sync run as written (--as-written) of a
// script that does not claim its request itself.
func (p *prepared) unclaimed(r *testkit.Run) bool {
	return p.asWritten && p.claimBy == nil && r.Mode() == testkit.Sync
}

// checkedTables are the tables a script's verification looks at besides the counters tables:
// the objects the init file makes (seed drops them before running it again), the tables the
// script appends to, and the others it must leave alone with their checksums after the seed.
type checkedTables struct {
	created   []object
	inserted  []string
	unchanged []string
	sums      map[string]string
}

// prepare runs the init file (unless the process joins a run another set up), binds the
// script, classifies its statements and declares it on package counters when the queue modes
// can take it; it refuses --modes that ask a queue mode of a script it cannot take.
func prepare(ctx context.Context, s *Suite, env testkit.PrepareEnv) (*prepared, error) {
	p := &prepared{schema: env.Schema, asWritten: s.asWritten}
	p.execs.New = func() any { return new(scratch) }
	p.memo = newDeltaMemo()
	var err error
	if p.sql, err = dialectFor(env.Admin.Dialect(), p); err != nil {
		return nil, err
	}
	if err := s.parse(p.sql.lexicon()); err != nil {
		return nil, err
	}
	vars := s.vars()
	if s.init != "" {
		if p.init, err = p.sql.lexicon().ParseInit(s.init, vars); err != nil {
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
	cat, err := p.sql.catalog(ctx, env.Admin, env.Schema)
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	cmds := s.script.Commands()
	plan, err := sqlshape.Plan(inputs(cmds), cat)
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

// inputs are the script's commands as package sqlshape reads them.
func inputs(cmds []*pgscript.Command) []sqlshape.Input {
	out := make([]sqlshape.Input, len(cmds))
	for i, c := range cmds {
		out[i] = sqlshape.Input{SQL: c.SQL, Line: c.Line, Params: c.Params}
	}
	return out
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
