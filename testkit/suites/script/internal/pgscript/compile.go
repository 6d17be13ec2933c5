package pgscript

import "math"

// compiler turns a checked script's commands into a Program's steps.
type compiler struct {
	p *Program
	// ifs are the open \if blocks: the pending conditional jump and the jumps to patch to
	// the \endif.
	ifs []openBlock
}

type openBlock struct {
	pendingCond int // index of the stepJumpUnless to send to the next branch, -1 after \else
	toEnd       []int
}

func (c *compiler) emit(s step) int {
	c.p.steps = append(c.p.steps, s)
	return len(c.p.steps) - 1
}

func (c *compiler) here() int { return len(c.p.steps) }

func (c *compiler) compile(commands []command) error {
	for _, cmd := range commands {
		if cmd.sql != nil {
			if err := c.sql(cmd); err != nil {
				return err
			}
			continue
		}
		switch cmd.meta {
		case metaSet:
			n, err := c.node(cmd.expr, cmd.line)
			if err != nil {
				return err
			}
			c.emit(step{kind: stepSet, line: cmd.line, slot: c.p.slotOf[cmd.name], value: n, what: `\set ` + cmd.name})
		case metaSleep:
			s := step{kind: stepSleep, line: cmd.line, sleep: cmd.sleep, sleepSlot: -1, what: `\sleep`}
			if cmd.sleep.variable != "" {
				s.sleepSlot = c.p.slotOf[cmd.sleep.variable]
			}
			c.emit(s)
		case metaIf:
			n, err := c.node(cmd.expr, cmd.line)
			if err != nil {
				return err
			}
			c.ifs = append(c.ifs, openBlock{pendingCond: c.emit(step{kind: stepJumpUnless, line: cmd.line, value: n, what: `\if`})})
		case metaElif:
			b := &c.ifs[len(c.ifs)-1]
			b.toEnd = append(b.toEnd, c.emit(step{kind: stepJump, line: cmd.line}))
			c.p.steps[b.pendingCond].target = c.here()
			n, err := c.node(cmd.expr, cmd.line)
			if err != nil {
				return err
			}
			b.pendingCond = c.emit(step{kind: stepJumpUnless, line: cmd.line, value: n, what: `\elif`})
		case metaElse:
			b := &c.ifs[len(c.ifs)-1]
			b.toEnd = append(b.toEnd, c.emit(step{kind: stepJump, line: cmd.line}))
			c.p.steps[b.pendingCond].target = c.here()
			b.pendingCond = -1
		case metaEndif:
			b := c.ifs[len(c.ifs)-1]
			c.ifs = c.ifs[:len(c.ifs)-1]
			if b.pendingCond >= 0 {
				c.p.steps[b.pendingCond].target = c.here()
			}
			for _, j := range b.toEnd {
				c.p.steps[j].target = c.here()
			}
		}
	}
	return nil
}

func (c *compiler) sql(cmd command) error {
	for _, name := range cmd.sql.quoted {
		if _, isVariable := c.p.slotOf[name]; isVariable || name == VarClientID || name == VarRequestID {
			return errorAt(cmd.line, ":%s is inside a quoted string or identifier, where pgbench's simple mode substitutes it as text and a bound parameter cannot: write it outside the quotes (as 'prefix' || :%s)", name, name)
		}
	}
	slots := make([]int, len(cmd.sql.Params))
	for i, name := range cmd.sql.Params {
		slots[i] = c.p.slotOf[name]
	}
	c.p.argCount += len(slots)
	c.emit(step{kind: stepSQL, line: cmd.line, cmd: cmd.sql, paramSlots: slots})
	return nil
}

// node compiles an expression of the command at line, folding what is constant.
func (c *compiler) node(e expr, line int) (node, error) {
	switch e := e.(type) {
	case constExpr:
		return &constNode{e.v}, nil
	case varExpr:
		if v, ok := c.p.constant(e.name); ok {
			if v.kind == String {
				return nil, errorAt(line, ":%s is %q (from -D), which is not a number: an expression cannot use it", e.name, v.text)
			}
			v.text = ""
			return &constNode{v}, nil
		}
		return &slotNode{slot: c.p.slotOf[e.name], name: e.name}, nil
	}
	call := e.(callExpr)
	args := make([]node, len(call.args))
	for i, a := range call.args {
		n, err := c.node(a, line)
		if err != nil {
			return nil, err
		}
		args[i] = n
	}
	var n node
	switch call.fn {
	case fnAnd:
		n = &andNode{args[0], args[1]}
	case fnOr:
		n = &orNode{args[0], args[1]}
	case fnCase:
		cn := &caseNode{otherwise: args[len(args)-1]}
		for i := 0; i+1 < len(args); i += 2 {
			cn.conds = append(cn.conds, args[i])
			cn.results = append(cn.results, args[i+1])
		}
		n = cn
	case fnLeast, fnGreatest:
		n = &extremumNode{greatest: call.fn == fnGreatest, args: args}
	case fnPi:
		n = &constNode{doubleValue(math.Pi)}
	case fnDebug:
		return &debugNode{x: args[0], line: line}, nil
	case fnRandom:
		return &randomNode{fn: call.fn, lb: args[0], ub: args[1]}, nil
	case fnRandomExponential, fnRandomGaussian, fnRandomZipfian:
		return &randomNode{fn: call.fn, lb: args[0], ub: args[1], param: args[2]}, nil
	case fnHashMurmur2, fnHashFnv1a, fnPermute:
		n = &seededNode{fn: call.fn, args: args}
	case fnNot, fnAbs, fnSqrt, fnLn, fnExp, fnInt, fnDouble:
		n = &unaryNode{fn: call.fn, x: args[0]}
	default:
		n = &binaryNode{fn: call.fn, l: args[0], r: args[1]}
	}
	return fold(n, args), nil
}

// fold evaluates a pure node whose arguments are all constant, once; a node whose evaluation
// fails stays, to fail when (and only if) a request reaches it.
func fold(n node, args []node) node {
	for _, a := range args {
		if _, ok := a.(*constNode); !ok {
			return n
		}
	}
	v, err := n.eval(&machine{})
	if err != nil {
		return n
	}
	return &constNode{v}
}
