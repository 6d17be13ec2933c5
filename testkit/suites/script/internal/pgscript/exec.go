package pgscript

import (
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/keydist"
)

// Execution is what one request of a script does: the SQL commands that run, in order, with
// their arguments, and the sleeps between them. It is filled by Program.Eval and reused from
// one call to the next (its slices are overwritten), so copy what must outlive the next call.
type Execution struct {
	// Request is the request's index.
	Request int64
	// Statements are the SQL commands that run, in order.
	Statements []Statement
	// SleepAfter is the \sleep time after the last statement.
	SleepAfter time.Duration

	prog *Program
	vars []Value
	args []Value
	// m is the evaluation state, kept here so that a request allocates nothing.
	m machine
}

// Statement is an SQL command as one request runs it.
type Statement struct {
	// Command is the script's command: its line, text, SQL with placeholders and the
	// variables they bind.
	Command *Command
	// Args are the values of the placeholders: Args[k] binds $k+1.
	Args []Value
	// SleepBefore is the \sleep time between the previous statement (or the start) and this
	// one.
	SleepBefore time.Duration
}

// Var is the value of a variable once the request has run (false when it is unset or not a
// variable of the script).
func (x *Execution) Var(name string) (Value, bool) {
	if x.prog == nil {
		return Value{}, false
	}
	i, ok := x.prog.slotOf[name]
	if !ok || !x.vars[i].isSet() {
		return Value{}, false
	}
	return x.vars[i], true
}

// Script is the script the program was bound from.
func (p *Program) Script() *Script { return p.script }

// Eval runs request's meta commands with its stream, keydist.NewStream(seed, request), and
// its built-ins, and fills x with the SQL commands that run and their arguments. The same
// program and request always give the same execution, in any process. Each request starts
// from the -D values and the built-ins: unlike pgbench, which carries a client's variables
// from one transaction to the next, nothing carries over between requests. An evaluation
// error (division by zero, integer overflow, a bad random parameter ...) is an *Error at the
// command's line.
func (p *Program) Eval(request int64, x *Execution) error {
	if x.prog != p {
		x.prog = p
		x.vars = make([]Value, len(p.initial))
		x.args = make([]Value, 0, p.argCount)
		x.Statements = make([]Statement, 0, len(p.script.sql))
	}
	x.Request = request
	x.Statements = x.Statements[:0]
	x.args = x.args[:0]
	x.SleepAfter = 0
	copy(x.vars, p.initial)
	if p.clientSlot >= 0 {
		c := request % p.clients
		if c < 0 {
			c += p.clients
		}
		x.vars[p.clientSlot] = intValue(c)
	}
	if p.requestSlot >= 0 {
		x.vars[p.requestSlot] = intValue(request)
	}
	x.m = machine{vars: x.vars, stream: keydist.NewStream(p.seed, request), request: request, debug: p.debug}
	m := &x.m
	var sleep time.Duration
	for pc := 0; pc < len(p.steps); {
		s := &p.steps[pc]
		pc++
		switch s.kind {
		case stepSet:
			v, err := s.value.eval(m)
			if err != nil {
				return errorAt(s.line, "%s: %v", s.what, err)
			}
			x.vars[s.slot] = v
		case stepSQL:
			start := len(x.args)
			for _, slot := range s.paramSlots {
				x.args = append(x.args, x.vars[slot])
			}
			x.Statements = append(x.Statements, Statement{Command: s.cmd, Args: x.args[start:len(x.args):len(x.args)], SleepBefore: sleep})
			sleep = 0
		case stepSleep:
			d, err := p.sleepFor(s, x.vars)
			if err != nil {
				return err
			}
			sleep += d
		case stepJumpUnless:
			v, err := s.value.eval(m)
			if err != nil {
				return errorAt(s.line, "%s: %v", s.what, err)
			}
			if !truth(v) {
				pc = s.target
			}
		case stepJump:
			pc = s.target
		}
	}
	x.SleepAfter = sleep
	return nil
}

// sleepFor is a \sleep's duration: a variable's amount is read from its text, as pgbench's
// atoi does, and must start with a digit unless it is not 0.
func (p *Program) sleepFor(s *step, vars []Value) (time.Duration, error) {
	amount := s.sleep.micros
	if s.sleepSlot >= 0 {
		v := vars[s.sleepSlot]
		text := v.Text()
		amount = atoi(text)
		if amount == 0 && (text == "" || !isDigit(text[0])) {
			return 0, errorAt(s.line, `\sleep: invalid sleep time %q for variable %q`, text, s.sleep.variable)
		}
	}
	if amount <= 0 {
		return 0, nil
	}
	return time.Duration(amount*s.sleep.unit) * time.Microsecond, nil
}
