package sqlshape

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueKind says which field of a Value holds it.
type ValueKind uint8

const (
	NullValue ValueKind = iota
	IntValue
	StringValue
	BoolValue
)

// Value is a client value: what a parameter holds, and what an Expr evaluates to.
// The zero Value is SQL NULL.
type Value struct {
	Kind ValueKind
	Int  int64
	Str  string
	Bool bool
}

// Int, String and Bool make Values; Null is the zero Value.
func Int(v int64) Value     { return Value{Kind: IntValue, Int: v} }
func String(s string) Value { return Value{Kind: StringValue, Str: s} }
func Bool(b bool) Value     { return Value{Kind: BoolValue, Bool: b} }

// Null is SQL NULL.
var Null = Value{}

// IsNull says whether v is SQL NULL.
func (v Value) IsNull() bool { return v.Kind == NullValue }

func (v Value) String() string {
	switch v.Kind {
	case IntValue:
		return strconv.FormatInt(v.Int, 10)
	case StringValue:
		return "'" + strings.ReplaceAll(v.Str, "'", "''") + "'"
	case BoolValue:
		return strconv.FormatBool(v.Bool)
	}
	return "NULL"
}

// asInt reads v as an integer the way PostgreSQL reads an integer parameter or an
// untyped literal: an integer, or a string holding one decimal integer (surrounding
// spaces allowed). Anything else is an error, never a guess.
func (v Value) asInt() (int64, error) {
	switch v.Kind {
	case IntValue:
		return v.Int, nil
	case StringValue:
		n, err := strconv.ParseInt(strings.Trim(v.Str, " \t\n\r\f\v"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not an integer", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s is not an integer", v)
}

// Expr is a client value the kit evaluates itself, exactly: a parameter, an integer,
// string, boolean or NULL literal, a cast of one, unary minus, and + - * between them
// (int64 arithmetic; an overflow is an error, not a wrapped value). Statements hand
// out their keys, deltas and assigned values as Exprs, so any process can recompute
// a request's writes from its parameters.
type Expr interface {
	// Eval computes the value given the parameters: params[0] is $1.
	Eval(params []Value) (Value, error)
	// String renders the expression as SQL, $n for parameters.
	String() string
	isExpr()
}

// Param is the parameter $Index (1-based).
type Param struct{ Index int }

// Const is a literal.
type Const struct{ Value Value }

// Neg is unary minus.
type Neg struct{ X Expr }

// Arith is L Op R for Op one of '+', '-', '*'.
type Arith struct {
	Op   byte
	L, R Expr
}

// Cast is X::Type. To says how the kit evaluates it; a cast to a type the kit does not
// know (CastOpaque) passes the value through for PostgreSQL to convert, and is
// accepted only where no arithmetic or comparison depends on it.
type Cast struct {
	X    Expr
	To   CastClass
	Type string // the type as written, e.g. "int8", "uuid"
}

// CastClass is what a cast's target type means to the evaluator.
type CastClass uint8

const (
	CastOpaque CastClass = iota
	CastInt2
	CastInt4
	CastInt8
	CastNumeric // an integer stays exact; a fraction is refused
	CastText
	CastBool
)

func (Param) isExpr() {}
func (Const) isExpr() {}
func (Neg) isExpr()   {}
func (Arith) isExpr() {}
func (Cast) isExpr()  {}

func (p Param) Eval(params []Value) (Value, error) {
	if p.Index < 1 || p.Index > len(params) {
		return Null, fmt.Errorf("$%d has no value (%d given)", p.Index, len(params))
	}
	return params[p.Index-1], nil
}

func (c Const) Eval([]Value) (Value, error) { return c.Value, nil }

func (n Neg) Eval(params []Value) (Value, error) {
	v, err := n.X.Eval(params)
	if err != nil || v.IsNull() {
		return v, err
	}
	i, err := v.asInt()
	if err != nil {
		return Null, fmt.Errorf("-%s: %w", n.X, err)
	}
	if i == math.MinInt64 {
		return Null, fmt.Errorf("-%s: %w", n.X, errOverflow)
	}
	return Int(-i), nil
}

var errOverflow = errors.New("integer out of range")

func (a Arith) Eval(params []Value) (Value, error) {
	l, err := a.L.Eval(params)
	if err != nil {
		return Null, err
	}
	r, err := a.R.Eval(params)
	if err != nil {
		return Null, err
	}
	if l.IsNull() || r.IsNull() {
		return Null, nil
	}
	li, err := l.asInt()
	if err != nil {
		return Null, fmt.Errorf("%s: %w", a, err)
	}
	ri, err := r.asInt()
	if err != nil {
		return Null, fmt.Errorf("%s: %w", a, err)
	}
	var res int64
	ok := true
	switch a.Op {
	case '+':
		res = li + ri
		ok = (ri >= 0) == (res >= li)
	case '-':
		res = li - ri
		ok = (ri >= 0) == (res <= li)
	case '*':
		res = li * ri
		ok = li == 0 || (res/li == ri && !(li == -1 && ri == math.MinInt64) && !(ri == -1 && li == math.MinInt64))
	default:
		return Null, fmt.Errorf("%s: operator %c", a, a.Op)
	}
	if !ok {
		return Null, fmt.Errorf("%s with %s and %s: %w", a, l, r, errOverflow)
	}
	return Int(res), nil
}

func (c Cast) Eval(params []Value) (Value, error) {
	v, err := c.X.Eval(params)
	if err != nil || v.IsNull() {
		return v, err
	}
	switch c.To {
	case CastInt2, CastInt4, CastInt8, CastNumeric:
		i, err := v.asInt()
		if err != nil {
			return Null, fmt.Errorf("%s: %w", c, err)
		}
		if !fitsInt(i, c.To) {
			return Null, fmt.Errorf("%s: %d: %w", c, i, errOverflow)
		}
		return Int(i), nil
	case CastText:
		switch v.Kind {
		case IntValue:
			return String(strconv.FormatInt(v.Int, 10)), nil
		case BoolValue:
			return String(strconv.FormatBool(v.Bool)), nil
		}
		return v, nil
	case CastBool:
		switch v.Kind {
		case BoolValue:
			return v, nil
		case StringValue:
			switch strings.ToLower(strings.TrimSpace(v.Str)) {
			case "t", "true":
				return Bool(true), nil
			case "f", "false":
				return Bool(false), nil
			}
		}
		return Null, fmt.Errorf("%s: %s is not a boolean", c, v)
	}
	return v, nil
}

func fitsInt(i int64, class CastClass) bool {
	switch class {
	case CastInt2:
		return i >= math.MinInt16 && i <= math.MaxInt16
	case CastInt4:
		return i >= math.MinInt32 && i <= math.MaxInt32
	}
	return true
}

func (p Param) String() string { return "$" + strconv.Itoa(p.Index) }
func (c Const) String() string { return c.Value.String() }
func (n Neg) String() string   { return "-" + operand(n.X) }
func (a Arith) String() string {
	l, r := a.L.String(), a.R.String()
	if inner, ok := a.L.(Arith); ok && precedence(inner.Op) < precedence(a.Op) {
		l = "(" + l + ")"
	}
	if inner, ok := a.R.(Arith); ok && precedence(inner.Op) <= precedence(a.Op) {
		r = "(" + r + ")"
	}
	return l + " " + string(a.Op) + " " + r
}

func precedence(op byte) int {
	if op == '*' {
		return 2
	}
	return 1
}

func (c Cast) String() string { return operand(c.X) + "::" + c.Type }

// operand renders x as the operand of a unary operator or cast: compound
// expressions in parentheses.
func operand(x Expr) string {
	switch x.(type) {
	case Arith, Neg:
		return "(" + x.String() + ")"
	}
	if c, ok := x.(Const); ok && c.Value.Kind == IntValue && c.Value.Int < 0 {
		return "(" + x.String() + ")"
	}
	return x.String()
}
