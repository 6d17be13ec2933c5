package pgscript

import (
	"fmt"
	"math"
	"strings"
)

// funcID names an operator or function. Operators are functions with two arguments, as in
// pgbench: -x is 0 - x, ~x is (~0) # x, x > y is y < x, x >= y is y <= x, x != y is x <> y.
type funcID int

const (
	fnAdd funcID = iota
	fnSub
	fnMul
	fnDiv
	fnMod
	fnAbs
	fnLeast
	fnGreatest
	fnDebug
	fnPi
	fnSqrt
	fnLn
	fnExp
	fnInt
	fnDouble
	fnRandom
	fnRandomGaussian
	fnRandomExponential
	fnRandomZipfian
	fnPow
	fnAnd
	fnOr
	fnNot
	fnBitAnd
	fnBitOr
	fnBitXor
	fnLShift
	fnRShift
	fnEq
	fnNe
	fnLe
	fnLt
	fnIs
	fnCase
	fnHashMurmur2
	fnHashFnv1a
	fnPermute
)

// arity of a function callable by name; the optional seed of the hash functions and permute
// defaults to :default_seed.
type arity int

const (
	atLeastOne     arity = -1
	withSeedOf1    arity = -2 // one argument, then an optional seed
	withSeedOf2    arity = -3 // two arguments, then an optional seed
	noArguments    arity = 0
	oneArgument    arity = 1
	twoArguments   arity = 2
	threeArguments arity = 3
)

type function struct {
	id    funcID
	arity arity
}

// functions are the functions a script may call, by lower-case name.
var functions = map[string]function{
	"abs": {fnAbs, oneArgument}, "least": {fnLeast, atLeastOne}, "greatest": {fnGreatest, atLeastOne},
	"debug": {fnDebug, oneArgument}, "pi": {fnPi, noArguments}, "sqrt": {fnSqrt, oneArgument},
	"ln": {fnLn, oneArgument}, "exp": {fnExp, oneArgument}, "int": {fnInt, oneArgument},
	"double": {fnDouble, oneArgument}, "random": {fnRandom, twoArguments},
	"random_gaussian": {fnRandomGaussian, threeArguments}, "random_exponential": {fnRandomExponential, threeArguments},
	"random_zipfian": {fnRandomZipfian, threeArguments}, "pow": {fnPow, twoArguments},
	"power": {fnPow, twoArguments}, "mod": {fnMod, twoArguments},
	"hash": {fnHashMurmur2, withSeedOf1}, "hash_murmur2": {fnHashMurmur2, withSeedOf1},
	"hash_fnv1a": {fnHashFnv1a, withSeedOf1}, "permute": {fnPermute, withSeedOf2},
}

// randomNames name the random functions in their errors.
var randomNames = map[funcID]string{
	fnRandom: "random", fnRandomGaussian: "random_gaussian", fnRandomExponential: "random_exponential",
	fnRandomZipfian: "random_zipfian",
}

// expr is a parsed expression: a constant, a variable or a call.
type expr interface{ exprNode() }

type constExpr struct{ v Value }

type varExpr struct{ name string }

// callExpr calls fn. For CASE the arguments are condition, result pairs, then the ELSE
// result (NULL when absent).
type callExpr struct {
	fn   funcID
	args []expr
}

func (constExpr) exprNode() {}
func (varExpr) exprNode()   {}
func (callExpr) exprNode()  {}

// Binding powers, lowest first, as pgbench's grammar (taken from PostgreSQL's).
const (
	precOr = 1 + iota
	precAnd
	precNot
	precIs
	precCompare
	precBitwise
	precAdditive
	precMultiplicative
	precUnary
)

type infix struct {
	prec     int
	fn       funcID
	swap     bool // x > y is y < x
	nonassoc bool
}

var infixOps = map[string]infix{
	"+": {prec: precAdditive, fn: fnAdd}, "-": {prec: precAdditive, fn: fnSub},
	"*": {prec: precMultiplicative, fn: fnMul}, "/": {prec: precMultiplicative, fn: fnDiv},
	"%": {prec: precMultiplicative, fn: fnMod},
	"|": {prec: precBitwise, fn: fnBitOr}, "#": {prec: precBitwise, fn: fnBitXor},
	"&": {prec: precBitwise, fn: fnBitAnd}, "<<": {prec: precBitwise, fn: fnLShift},
	">>": {prec: precBitwise, fn: fnRShift},
	"=":  {prec: precCompare, fn: fnEq, nonassoc: true}, "<>": {prec: precCompare, fn: fnNe, nonassoc: true},
	"!=": {prec: precCompare, fn: fnNe, nonassoc: true}, "<": {prec: precCompare, fn: fnLt, nonassoc: true},
	"<=": {prec: precCompare, fn: fnLe, nonassoc: true},
	">":  {prec: precCompare, fn: fnLt, swap: true, nonassoc: true},
	">=": {prec: precCompare, fn: fnLe, swap: true, nonassoc: true},
}

type parser struct {
	src  string
	toks []token
	pos  int
}

// parseExpression parses one pgbench expression.
func parseExpression(src string) (expr, error) {
	toks, err := lexExpression(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t)
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) unexpected(t token) error {
	if t.kind == tokEOF {
		return fmt.Errorf("syntax error: unexpected end of expression")
	}
	return fmt.Errorf("syntax error at column %d: unexpected %q", t.pos+1, t.text)
}

func (p *parser) expect(op string) error {
	if t := p.peek(); t.kind != tokOp || t.text != op {
		return p.unexpected(t)
	}
	p.next()
	return nil
}

// expr parses an expression whose infix operators bind at least minPrec.
func (p *parser) expr(minPrec int) (expr, error) {
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	lastNonassoc := 0
	for {
		t := p.peek()
		switch t.kind {
		case tokOr, tokAnd:
			prec, fn := precOr, fnOr
			if t.kind == tokAnd {
				prec, fn = precAnd, fnAnd
			}
			if prec < minPrec {
				return left, nil
			}
			p.next()
			right, err := p.expr(prec + 1)
			if err != nil {
				return nil, err
			}
			left, lastNonassoc = callExpr{fn: fn, args: []expr{left, right}}, 0
		case tokIs, tokIsNull, tokNotNull:
			if precIs < minPrec {
				return left, nil
			}
			if left, err = p.postfix(left); err != nil {
				return nil, err
			}
			lastNonassoc = 0
		case tokOp:
			op, ok := infixOps[t.text]
			if !ok || op.prec < minPrec {
				return left, nil
			}
			if op.nonassoc && lastNonassoc == op.prec {
				return nil, p.unexpected(t)
			}
			p.next()
			right, err := p.expr(op.prec + 1)
			if err != nil {
				return nil, err
			}
			if op.swap {
				left, right = right, left
			}
			left = callExpr{fn: op.fn, args: []expr{left, right}}
			lastNonassoc = 0
			if op.nonassoc {
				lastNonassoc = op.prec
			}
		default:
			return left, nil
		}
	}
}

// postfix parses IS [NOT] NULL|TRUE|FALSE, ISNULL and NOTNULL after left.
func (p *parser) postfix(left expr) (expr, error) {
	is := func(v Value) expr { return callExpr{fn: fnIs, args: []expr{left, constExpr{v}}} }
	not := func(e expr) expr { return callExpr{fn: fnNot, args: []expr{e}} }
	switch t := p.next(); t.kind {
	case tokIsNull:
		return is(nullValue()), nil
	case tokNotNull:
		return not(is(nullValue())), nil
	}
	negated := false
	if p.peek().kind == tokNot {
		p.next()
		negated = true
	}
	var e expr
	switch t := p.next(); t.kind {
	case tokNull:
		e = is(nullValue())
	case tokTrue:
		e = is(boolValue(true))
	case tokFalse:
		e = is(boolValue(false))
	default:
		return nil, p.unexpected(t)
	}
	if negated {
		e = not(e)
	}
	return e, nil
}

func (p *parser) prefix() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokInt:
		return constExpr{intValue(t.i)}, nil
	case tokDouble:
		return constExpr{doubleValue(t.f)}, nil
	case tokTrue:
		return constExpr{boolValue(true)}, nil
	case tokFalse:
		return constExpr{boolValue(false)}, nil
	case tokNull:
		return constExpr{nullValue()}, nil
	case tokVariable:
		return varExpr{t.text}, nil
	case tokNot:
		operand, err := p.expr(precNot + 1)
		if err != nil {
			return nil, err
		}
		return callExpr{fn: fnNot, args: []expr{operand}}, nil
	case tokCase:
		return p.caseExpr()
	case tokIdent:
		return p.call(t)
	case tokOp:
		switch t.text {
		case "(":
			e, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			return e, p.expect(")")
		case "+":
			return p.expr(precUnary + 1)
		case "-":
			if p.peek().kind == tokMaxIntPlusOne {
				p.next()
				return constExpr{intValue(math.MinInt64)}, nil
			}
			operand, err := p.expr(precUnary + 1)
			if err != nil {
				return nil, err
			}
			return callExpr{fn: fnSub, args: []expr{constExpr{intValue(0)}, operand}}, nil
		case "~":
			operand, err := p.expr(precBitwise + 1)
			if err != nil {
				return nil, err
			}
			return callExpr{fn: fnBitXor, args: []expr{constExpr{intValue(^0)}, operand}}, nil
		}
	}
	return nil, p.unexpected(t)
}

// call parses name(arguments) once name has been read.
func (p *parser) call(name token) (expr, error) {
	f, known := functions[strings.ToLower(name.text)]
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if !known {
		return nil, fmt.Errorf("unknown function %q", name.text)
	}
	var args []expr
	if t := p.peek(); t.kind != tokOp || t.text != ")" {
		for {
			arg, err := p.expr(0)
			if err != nil {
				return nil, err
			}
			args = append(args, arg)
			if t := p.peek(); t.kind == tokOp && t.text == "," {
				p.next()
				continue
			}
			break
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	n := len(args)
	switch f.arity {
	case atLeastOne:
		if n == 0 {
			return nil, fmt.Errorf("%s needs at least one argument", name.text)
		}
	case withSeedOf1, withSeedOf2:
		required := 1
		if f.arity == withSeedOf2 {
			required = 2
		}
		if n < required || n > required+1 {
			return nil, fmt.Errorf("%s takes %d or %d arguments, not %d", name.text, required, required+1, n)
		}
		if n == required {
			args = append(args, varExpr{"default_seed"})
		}
	default:
		if n != int(f.arity) {
			return nil, fmt.Errorf("%s takes %d argument%s, not %d", name.text, f.arity, plural(int(f.arity)), n)
		}
	}
	return callExpr{fn: f.id, args: args}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// caseExpr parses CASE WHEN c THEN r [WHEN ...] [ELSE e] END once CASE has been read.
func (p *parser) caseExpr() (expr, error) {
	var args []expr
	for p.peek().kind == tokWhen {
		p.next()
		cond, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tokThen {
			return nil, p.unexpected(t)
		}
		result, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		args = append(args, cond, result)
	}
	if len(args) == 0 {
		return nil, p.unexpected(p.peek())
	}
	var elseResult expr = constExpr{nullValue()}
	if p.peek().kind == tokElse {
		p.next()
		var err error
		if elseResult, err = p.expr(0); err != nil {
			return nil, err
		}
	}
	if t := p.next(); t.kind != tokEnd {
		return nil, p.unexpected(t)
	}
	return callExpr{fn: fnCase, args: append(args, elseResult)}, nil
}

// exprVariables appends the variables e reads.
func exprVariables(e expr, into []string) []string {
	switch e := e.(type) {
	case varExpr:
		return append(into, e.name)
	case callExpr:
		for _, a := range e.args {
			into = exprVariables(a, into)
		}
	}
	return into
}
