package pgscript

import (
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/keydist"
)

// machine is the state of one request's evaluation.
type machine struct {
	vars    []Value
	stream  keydist.Stream
	request int64
	debug   io.Writer
}

// node is a compiled expression: variables resolved to slots, constant parts folded.
type node interface {
	eval(m *machine) (Value, error)
}

type constNode struct{ v Value }

func (n *constNode) eval(*machine) (Value, error) { return n.v, nil }

type slotNode struct {
	slot int
	name string
}

func (n *slotNode) eval(m *machine) (Value, error) {
	v := m.vars[n.slot]
	if v.kind == unset || v.kind == String {
		return Value{}, n.invalid(v)
	}
	v.text = "" // a -D value's text is for SQL; what an expression makes of it is its value
	return v, nil
}

func (n *slotNode) invalid(v Value) error {
	if v.kind == unset {
		return fmt.Errorf("undefined variable %q", n.name)
	}
	return fmt.Errorf("malformed variable %q value: %q", n.name, v.text)
}

// binaryNode is an operator or a two-argument function without laziness.
type binaryNode struct {
	fn   funcID
	l, r node
}

func (n *binaryNode) eval(m *machine) (Value, error) {
	a, err := n.l.eval(m)
	if err != nil {
		return Value{}, err
	}
	b, err := n.r.eval(m)
	if err != nil {
		return Value{}, err
	}
	return binary(n.fn, a, b)
}

// unaryNode is a one-argument function.
type unaryNode struct {
	fn funcID
	x  node
}

func (n *unaryNode) eval(m *machine) (Value, error) {
	a, err := n.x.eval(m)
	if err != nil {
		return Value{}, err
	}
	return unary(n.fn, a)
}

// debugNode is debug(x): x, written to the environment's Debug writer when there is one.
type debugNode struct {
	x    node
	line int
}

func (n *debugNode) eval(m *machine) (Value, error) {
	a, err := n.x.eval(m)
	if err != nil {
		return Value{}, err
	}
	if m.debug != nil {
		fmt.Fprintf(m.debug, "debug(request=%d,line=%d): %s\n", m.request, n.line, a.debugText())
	}
	return a, nil
}

type andNode struct{ l, r node }

func (n *andNode) eval(m *machine) (Value, error) { return logical(m, n.l, n.r, false) }

type orNode struct{ l, r node }

func (n *orNode) eval(m *machine) (Value, error) { return logical(m, n.l, n.r, true) }

// logical is pgbench's lazy AND (shortCircuit false) and OR (true): NULL on the left gives
// NULL, the left value decides when it equals shortCircuit, else the right value, NULL or
// boolean, is the result.
func logical(m *machine, l, r node, shortCircuit bool) (Value, error) {
	a, err := l.eval(m)
	if err != nil || a.kind == Null {
		return a, err
	}
	ab, err := toBool(a)
	if err != nil {
		return Value{}, err
	}
	if ab == shortCircuit {
		return boolValue(ab), nil
	}
	b, err := r.eval(m)
	if err != nil || b.kind == Null {
		return b, err
	}
	bb, err := toBool(b)
	if err != nil {
		return Value{}, err
	}
	return boolValue(bb), nil
}

// caseNode evaluates conditions in order and only the result of the first true one.
type caseNode struct {
	conds, results []node
	otherwise      node
}

func (n *caseNode) eval(m *machine) (Value, error) {
	for i, c := range n.conds {
		v, err := c.eval(m)
		if err != nil {
			return Value{}, err
		}
		if truth(v) {
			return n.results[i].eval(m)
		}
	}
	return n.otherwise.eval(m)
}

// extremumNode is least or greatest.
type extremumNode struct {
	greatest bool
	args     []node
}

func (n *extremumNode) eval(m *machine) (Value, error) {
	var buf [8]Value
	vals := buf[:0]
	anyNull, anyDouble := false, false
	for _, a := range n.args {
		v, err := a.eval(m)
		if err != nil {
			return Value{}, err
		}
		anyNull = anyNull || v.kind == Null
		anyDouble = anyDouble || v.kind == Double
		vals = append(vals, v)
	}
	if anyNull {
		return nullValue(), nil
	}
	if anyDouble {
		best, err := toDouble(vals[0])
		if err != nil {
			return Value{}, err
		}
		for _, v := range vals[1:] {
			d, err := toDouble(v)
			if err != nil {
				return Value{}, err
			}
			if n.greatest && d > best || !n.greatest && d < best {
				best = d
			}
		}
		return doubleValue(best), nil
	}
	best, err := toInt(vals[0])
	if err != nil {
		return Value{}, err
	}
	for _, v := range vals[1:] {
		i, err := toInt(v)
		if err != nil {
			return Value{}, err
		}
		if n.greatest && i > best || !n.greatest && i < best {
			best = i
		}
	}
	return intValue(best), nil
}

// randomNode draws from the request's stream: random, random_exponential, random_gaussian,
// random_zipfian.
type randomNode struct {
	fn            funcID
	lb, ub, param node
	// zipf is the last zipfian set-up of this call, reused while (n, s) do not change.
	zipf atomic.Pointer[keydist.Zipf]
}

func (n *randomNode) eval(m *machine) (Value, error) {
	lbv, err := n.lb.eval(m)
	if err != nil {
		return Value{}, err
	}
	ubv, err := n.ub.eval(m)
	if err != nil {
		return Value{}, err
	}
	var pv Value
	if n.param != nil {
		if pv, err = n.param.eval(m); err != nil {
			return Value{}, err
		}
	}
	if lbv.kind == Null || ubv.kind == Null || pv.kind == Null {
		return nullValue(), nil
	}
	lb, err := toInt(lbv)
	if err != nil {
		return Value{}, err
	}
	ub, err := toInt(ubv)
	if err != nil {
		return Value{}, err
	}
	if lb > ub {
		return Value{}, fmt.Errorf("empty range given to %s: [%d, %d]", randomNames[n.fn], lb, ub)
	}
	if width := ub - lb; width < 0 || width == math.MaxInt64 {
		return Value{}, fmt.Errorf("%s range is too large: [%d, %d]", randomNames[n.fn], lb, ub)
	}
	var param float64
	if n.param != nil {
		if param, err = toDouble(pv); err != nil {
			return Value{}, err
		}
	}
	var drawn int64
	switch n.fn {
	case fnRandom:
		drawn, err = m.stream.Uniform(lb, ub)
	case fnRandomExponential:
		drawn, err = m.stream.Exponential(lb, ub, param)
	case fnRandomGaussian:
		drawn, err = m.stream.Gaussian(lb, ub, param)
	case fnRandomZipfian:
		var z *keydist.Zipf
		if z, err = n.zipfOver(ub-lb+1, param); err == nil {
			drawn = lb - 1 + z.Draw(&m.stream)
		}
	}
	if err != nil {
		return Value{}, fmt.Errorf("%s: %w", randomNames[n.fn], err)
	}
	return intValue(drawn), nil
}

func (n *randomNode) zipfOver(size int64, s float64) (*keydist.Zipf, error) {
	if z := n.zipf.Load(); z != nil && z.N() == size && z.S() == s {
		return z, nil
	}
	z, err := keydist.NewZipf(size, s)
	if err != nil {
		return nil, err
	}
	n.zipf.Store(z)
	return z, nil
}

// seededNode is hash, hash_murmur2, hash_fnv1a (two arguments) and permute (three).
type seededNode struct {
	fn   funcID
	args []node
}

func (n *seededNode) eval(m *machine) (Value, error) {
	var ints [3]int64
	var vals [3]Value
	for i, a := range n.args {
		v, err := a.eval(m)
		if err != nil {
			return Value{}, err
		}
		vals[i] = v
	}
	for i := range n.args {
		if vals[i].kind == Null {
			return nullValue(), nil
		}
	}
	for i := range n.args {
		var err error
		if ints[i], err = toInt(vals[i]); err != nil {
			return Value{}, err
		}
	}
	switch n.fn {
	case fnHashFnv1a:
		return intValue(hashFNV1a(ints[0], ints[1])), nil
	case fnPermute:
		if ints[1] <= 0 {
			return Value{}, fmt.Errorf("permute size parameter must be greater than zero")
		}
		return intValue(permute(ints[0], ints[1], ints[2])), nil
	default:
		return intValue(hashMurmur2(ints[0], ints[1])), nil
	}
}

// truth is the value of a condition (\if, \elif, CASE WHEN): NULL and zero are false.
func truth(v Value) bool {
	switch v.kind {
	case Bool:
		return v.Bool()
	case Int:
		return v.intBits() != 0
	case Double:
		return v.doubleBits() != 0
	default:
		return false
	}
}

func toBool(v Value) (bool, error) {
	if v.kind != Bool {
		return false, fmt.Errorf("cannot coerce %s to boolean", v.kind)
	}
	return v.Bool(), nil
}

// toInt reads an int, or a double rounded half to even, as C's rint.
func toInt(v Value) (int64, error) {
	switch v.kind {
	case Int:
		return v.intBits(), nil
	case Double:
		d := math.RoundToEven(v.doubleBits())
		if math.IsNaN(d) || d < math.MinInt64 || d >= -math.MinInt64 {
			return 0, fmt.Errorf("double to int overflow for %f", d)
		}
		return int64(d), nil
	default:
		return 0, fmt.Errorf("cannot coerce %s to int", v.kind)
	}
}

func toDouble(v Value) (float64, error) {
	switch v.kind {
	case Double:
		return v.doubleBits(), nil
	case Int:
		return float64(v.intBits()), nil
	default:
		return 0, fmt.Errorf("cannot coerce %s to double", v.kind)
	}
}

// binary applies an operator or two-argument function with pgbench's rules: NULL in, NULL out
// (but for IS); a double on either side of + - * / and the comparisons makes the operation
// double; % and the bitwise operators are on ints; integer overflow and division by zero are
// errors.
func binary(fn funcID, a, b Value) (Value, error) {
	if fn == fnIs {
		return boolValue(a.kind == b.kind && (a.kind != Bool || a.bits == b.bits)), nil
	}
	if a.kind == Null || b.kind == Null {
		return nullValue(), nil
	}
	switch fn {
	case fnPow:
		x, y, err := doubles(a, b)
		if err != nil {
			return Value{}, err
		}
		return doubleValue(math.Pow(x, y)), nil
	case fnAdd, fnSub, fnMul, fnDiv, fnEq, fnNe, fnLe, fnLt:
		if a.kind == Double || b.kind == Double {
			x, y, err := doubles(a, b)
			if err != nil {
				return Value{}, err
			}
			return doubleOp(fn, x, y), nil
		}
	}
	x, err := toInt(a)
	if err != nil {
		return Value{}, err
	}
	y, err := toInt(b)
	if err != nil {
		return Value{}, err
	}
	return intOp(fn, x, y)
}

func doubles(a, b Value) (float64, float64, error) {
	x, err := toDouble(a)
	if err != nil {
		return 0, 0, err
	}
	y, err := toDouble(b)
	return x, y, err
}

func doubleOp(fn funcID, x, y float64) Value {
	switch fn {
	case fnAdd:
		return doubleValue(x + y)
	case fnSub:
		return doubleValue(x - y)
	case fnMul:
		return doubleValue(x * y)
	case fnDiv:
		return doubleValue(x / y)
	case fnEq:
		return boolValue(x == y)
	case fnNe:
		return boolValue(x != y)
	case fnLe:
		return boolValue(x <= y)
	default:
		return boolValue(x < y)
	}
}

func intOp(fn funcID, x, y int64) (Value, error) {
	switch fn {
	case fnAdd:
		s := x + y
		if (s^x)&(s^y) < 0 {
			return Value{}, fmt.Errorf("bigint add out of range")
		}
		return intValue(s), nil
	case fnSub:
		d := x - y
		if (x^y)&(d^x) < 0 {
			return Value{}, fmt.Errorf("bigint sub out of range")
		}
		return intValue(d), nil
	case fnMul:
		p := x * y
		if x != 0 && (p/x != y || x == -1 && y == math.MinInt64) {
			return Value{}, fmt.Errorf("bigint mul out of range")
		}
		return intValue(p), nil
	case fnDiv, fnMod:
		if y == 0 {
			return Value{}, fmt.Errorf("division by zero")
		}
		if y == -1 {
			if fn == fnMod {
				return intValue(0), nil
			}
			if x == math.MinInt64 {
				return Value{}, fmt.Errorf("bigint div out of range")
			}
			return intValue(-x), nil
		}
		if fn == fnDiv {
			return intValue(x / y), nil
		}
		return intValue(x % y), nil
	case fnEq:
		return boolValue(x == y), nil
	case fnNe:
		return boolValue(x != y), nil
	case fnLe:
		return boolValue(x <= y), nil
	case fnLt:
		return boolValue(x < y), nil
	case fnBitAnd:
		return intValue(x & y), nil
	case fnBitOr:
		return intValue(x | y), nil
	case fnBitXor:
		return intValue(x ^ y), nil
	// A shift count is taken modulo 64, as the x86-64 instruction pgbench compiles to does.
	case fnLShift:
		return intValue(x << (uint64(y) & 63)), nil
	default: // fnRShift
		return intValue(x >> (uint64(y) & 63)), nil
	}
}

// unary applies a one-argument function.
func unary(fn funcID, a Value) (Value, error) {
	if a.kind == Null {
		return a, nil
	}
	switch fn {
	case fnNot:
		b, err := toBool(a)
		if err != nil {
			return Value{}, err
		}
		return boolValue(!b), nil
	case fnInt:
		i, err := toInt(a)
		if err != nil {
			return Value{}, err
		}
		return intValue(i), nil
	case fnAbs:
		if a.kind == Int {
			i := a.intBits()
			if i < 0 {
				i = -i
			}
			return intValue(i), nil
		}
	}
	d, err := toDouble(a)
	if err != nil {
		return Value{}, err
	}
	switch fn {
	case fnAbs:
		if d < 0 { // pgbench keeps -0 as it is
			d = -d
		}
		return doubleValue(d), nil
	case fnSqrt:
		return doubleValue(math.Sqrt(d)), nil
	case fnLn:
		return doubleValue(math.Log(d)), nil
	case fnExp:
		return doubleValue(math.Exp(d)), nil
	default: // fnDouble
		return doubleValue(d), nil
	}
}
