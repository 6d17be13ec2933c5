package pgscript

import (
	"fmt"
	"io"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/keydist"
)

// Built-in variables. client_id, random_seed and default_seed are pgbench's; request_id is the
// kit's. A -D value of the same name takes precedence, as in pgbench.
const (
	// VarClientID is the request's client: its index modulo Env.Clients. pgbench numbers a
	// connection; the kit derives it from the request so that it can be recomputed.
	VarClientID = "client_id"
	// VarRequestID is the request's index, 0, 1, 2 ...
	VarRequestID = "request_id"
	// VarRandomSeed is Env.Seed (pgbench: its --random-seed).
	VarRandomSeed = "random_seed"
	// VarDefaultSeed seeds hash functions and permute called without a seed; derived from
	// Env.Seed.
	VarDefaultSeed = "default_seed"
	// VarScale is pgbench's scale factor, defined only by -D here (Script.Uses tells whether
	// a script needs it).
	VarScale = "scale"
)

// Define is a -D NAME=VALUE (pgbench's --set).
type Define struct {
	Name, Value string
}

// ParseDefine reads a -D argument, NAME=VALUE.
func ParseDefine(arg string) (Define, error) {
	name, value, ok := strings.Cut(arg, "=")
	if !ok {
		return Define{}, fmt.Errorf("-D %s: invalid variable definition, want NAME=VALUE", arg)
	}
	if !validVariableName(name) {
		return Define{}, fmt.Errorf("-D %s: invalid variable name %q", arg, name)
	}
	return Define{Name: name, Value: value}, nil
}

// Env is what a script is bound to: everything a request's execution depends on besides its
// index.
type Env struct {
	// Seed seeds every request's random stream (keydist.NewStream(Seed, request)), and
	// :random_seed and :default_seed.
	Seed int64
	// Clients is the number of clients :client_id counts (at least 1).
	Clients int
	// Defines are the -D values, in command-line order; a later one wins.
	Defines []Define
	// Debug, when set, receives a line for each debug() call, as pgbench's stderr does. It
	// is written from whatever goroutine evaluates.
	Debug io.Writer
}

// Program is a script bound to an environment: variables resolved to slots, constant
// expressions folded, conditionals turned into jumps. It is immutable and safe for concurrent
// use: each Eval works in the Execution it is given.
type Program struct {
	script  *Script
	steps   []step
	slotOf  map[string]int
	initial []Value // each request's variables before its first command
	// clientSlot and requestSlot get :client_id and :request_id per request, -1 when a -D
	// value fixes them or no command reads them.
	clientSlot, requestSlot int
	clients                 int64
	seed                    int64
	argCount                int // the most arguments one request can bind
	debug                   io.Writer
}

type stepKind int

const (
	stepSet stepKind = iota
	stepSQL
	stepSleep
	stepJumpUnless // to target when cond is false
	stepJump
)

type step struct {
	kind stepKind
	line int
	// stepSet: slot = value; stepJumpUnless: cond.
	slot  int
	value node
	// stepSQL
	cmd        *Command
	paramSlots []int
	// stepSleep
	sleep     sleepArg
	sleepSlot int
	// stepJumpUnless, stepJump
	target int
	// what names the command in evaluation errors, as \set aid.
	what string
}

// defaultSeed derives :default_seed from the run's seed, so that hash() and permute() without
// a seed differ between seeds as they do between pgbench runs.
func defaultSeed(seed int64) int64 {
	st := keydist.NewStream(seed, -1)
	return int64(st.Uint64())
}

// Bind checks the script against env and compiles it. It refuses, naming the line, a variable
// read before every path to it has set it (by \set, -D or as a built-in), a -D value that is
// not a number used in an expression, and a variable inside a quoted string of an SQL command
// (pgbench would substitute it as text; a bound parameter cannot).
func (s *Script) Bind(env Env) (*Program, error) {
	if env.Clients < 1 {
		return nil, fmt.Errorf("pgscript: Env.Clients must be at least 1, got %d", env.Clients)
	}
	p := &Program{script: s, slotOf: map[string]int{}, clientSlot: -1, requestSlot: -1,
		clients: int64(env.Clients), seed: env.Seed, debug: env.Debug}
	slot := func(name string) int {
		if i, ok := p.slotOf[name]; ok {
			return i
		}
		p.slotOf[name] = len(p.initial)
		p.initial = append(p.initial, Value{})
		return len(p.initial) - 1
	}
	defined := map[string]bool{}
	for _, d := range env.Defines {
		v, err := defineValue(d.Name, d.Value)
		if err != nil {
			return nil, err
		}
		p.initial[slot(d.Name)] = v
		defined[d.Name] = true
	}
	for _, b := range []struct {
		name  string
		value Value
	}{{VarRandomSeed, intValue(env.Seed)}, {VarDefaultSeed, intValue(defaultSeed(env.Seed))}} {
		if !defined[b.name] {
			p.initial[slot(b.name)] = b.value
		}
	}
	if !defined[VarClientID] && s.Uses(VarClientID) {
		p.clientSlot = slot(VarClientID)
	}
	if !defined[VarRequestID] && s.Uses(VarRequestID) {
		p.requestSlot = slot(VarRequestID)
	}
	for _, cmd := range s.commands {
		if cmd.sql == nil && cmd.meta == metaSet {
			slot(cmd.name)
		}
	}
	if err := s.checkDefinite(p); err != nil {
		return nil, err
	}
	c := compiler{p: p}
	if err := c.compile(s.commands); err != nil {
		return nil, err
	}
	return p, nil
}

// constant reports whether the variable has the same value in every request at every point:
// given by -D or a seed built-in, and set by no command.
func (p *Program) constant(name string) (Value, bool) {
	i, ok := p.slotOf[name]
	if !ok || p.script.sets[name] || i == p.clientSlot || i == p.requestSlot {
		return Value{}, false
	}
	v := p.initial[i]
	return v, v.isSet()
}

// checkDefinite refuses a variable read where some path has not set it. A branch of an \if
// sets for what follows only what every branch sets (and nothing when there is no \else).
func (s *Script) checkDefinite(p *Program) error {
	set := map[string]bool{}
	for name, i := range p.slotOf {
		if p.initial[i].isSet() || i == p.clientSlot || i == p.requestSlot {
			set[name] = true
		}
	}
	type frame struct {
		entry, common map[string]bool // common: set by every branch ended so far (nil: none yet)
		hadElse       bool
	}
	var frames []frame
	copySet := func(m map[string]bool) map[string]bool {
		c := make(map[string]bool, len(m))
		for k := range m {
			c[k] = true
		}
		return c
	}
	intersect := func(common, branch map[string]bool) map[string]bool {
		if common == nil {
			return copySet(branch)
		}
		for k := range common {
			if !branch[k] {
				delete(common, k)
			}
		}
		return common
	}
	check := func(line int, names []string) error {
		for _, name := range names {
			if !set[name] {
				return errorAt(line, ":%s is used before it is set%s", name, s.unsetHint(name, line))
			}
		}
		return nil
	}
	for _, cmd := range s.commands {
		if cmd.sql != nil {
			if err := check(cmd.line, cmd.sql.Params); err != nil {
				return err
			}
			continue
		}
		switch cmd.meta {
		case metaSet:
			if err := check(cmd.line, exprVariables(cmd.expr, nil)); err != nil {
				return err
			}
			set[cmd.name] = true
		case metaSleep:
			if cmd.sleep.variable != "" {
				if err := check(cmd.line, []string{cmd.sleep.variable}); err != nil {
					return err
				}
			}
		case metaIf:
			if err := check(cmd.line, exprVariables(cmd.expr, nil)); err != nil {
				return err
			}
			frames = append(frames, frame{entry: copySet(set)})
		case metaElif, metaElse:
			f := &frames[len(frames)-1]
			f.common = intersect(f.common, set)
			f.hadElse = f.hadElse || cmd.meta == metaElse
			set = copySet(f.entry)
			if cmd.meta == metaElif {
				if err := check(cmd.line, exprVariables(cmd.expr, nil)); err != nil {
					return err
				}
			}
		case metaEndif:
			f := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			common := intersect(f.common, set)
			if !f.hadElse {
				common = intersect(common, f.entry)
			}
			set = common
		}
	}
	return nil
}

// unsetHint says where, if anywhere, the script sets a variable read too early at line.
func (s *Script) unsetHint(name string, line int) string {
	for _, cmd := range s.commands {
		if cmd.sql == nil && cmd.meta == metaSet && cmd.name == name {
			if cmd.line < line {
				return fmt.Sprintf(" on every path (line %d sets it inside an \\if branch)", cmd.line)
			}
			return fmt.Sprintf(" (line %d sets it)", cmd.line)
		}
	}
	return fmt.Sprintf(" (no \\set sets it; give it with -D %s=VALUE)", name)
}
