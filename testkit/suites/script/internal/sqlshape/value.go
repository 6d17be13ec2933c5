package sqlshape

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// ValueKind says which field of a Value holds it.
type ValueKind uint8

const (
	NullValue ValueKind = iota
	IntValue
	StringValue
	BoolValue
	// DecimalValue: an exact decimal, Dec, shown with Scale places (a numeric).
	DecimalValue
)

// Value is a client value: what a parameter holds, and what an Expr evaluates to.
// The zero Value is SQL NULL.
type Value struct {
	Kind ValueKind
	Int  int64
	Str  string
	Bool bool
	Dec  decimal.Decimal
	// Scale is a decimal's display scale: the places PostgreSQL shows (2.50 shows 2),
	// which only its text form depends on; at least Dec's own places, at most
	// decimal.MaxPlaces.
	Scale uint8
}

// Int, String and Bool make Values; Null is the zero Value.
func Int(v int64) Value     { return Value{Kind: IntValue, Int: v} }
func String(s string) Value { return Value{Kind: StringValue, Str: s} }
func Bool(b bool) Value     { return Value{Kind: BoolValue, Bool: b} }

// Dec makes a decimal Value shown with scale places (or d's own, when more; at most
// decimal.MaxPlaces).
func Dec(d decimal.Decimal, scale uint8) Value {
	return Value{Kind: DecimalValue, Dec: d, Scale: uint8(min(max(int(scale), d.Places()), decimal.MaxPlaces))}
}

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
	case DecimalValue:
		return v.Dec.Format(int(v.Scale))
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
// decimal, string, boolean or NULL literal, a cast of one, unary minus, and + - * between
// them (integers in int64, decimals in decimal.Decimal units; an overflow is an error, not a
// wrapped value, and so is a product of decimals with more than decimal.MaxPlaces places).
// Statements hand out their keys, deltas and assigned values as Exprs, so any process can
// recompute a request's writes from its parameters.
type Expr interface {
	// Eval computes the value given the parameters: params[0] is $1.
	Eval(params []Value) (Value, error)
	// String renders the expression as SQL, $n for parameters.
	String() string
	// eval is Eval where a string operand of + and - (a parameter or quoted literal, of
	// no type of its own) is read as a decimal when sum says so: an increment of a
	// numeric column, whose every term PostgreSQL adds to the column (c + $1 + 1).
	eval(params []Value, sum bool) (Value, error)
}

// Param is the parameter $Index (1-based).
type Param struct{ Index int }

// Const is a literal.
type Const struct{ Value Value }

// Neg is unary minus.
type Neg struct{ X Expr }

// Arith is L Op R for Op one of '+', '-', '*'. A string operand (a parameter, a quoted
// literal) is read as PostgreSQL types it, as the other operand's type: an integer
// beside an integer, a decimal beside a decimal; two strings as integers, except as the
// terms of a numeric column's increment (SetItem.Eval), where they are decimals.
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
	Type string // the type as written, e.g. "int8", "uuid", "numeric(20,8)"
	// Precision and Scale are a CastNumeric's typmod, numeric(Precision, Scale);
	// Precision is 0 for numeric without one.
	Precision, Scale int
	// Call says the grammar writes it CAST(X AS Type) (MySQL's), not X::Type.
	Call bool
}

// CastClass is what a cast's target type means to the evaluator.
type CastClass uint8

const (
	CastOpaque CastClass = iota
	CastInt2
	CastInt4
	CastInt8
	// CastNumeric: integers and decimals stay exact; a typmod's scale that would round
	// the value, or its precision overflowed, is an error.
	CastNumeric
	CastText
	CastBool
	// CastUnsigned: MySQL's CAST(… AS UNSIGNED), an integer of 64 bits without sign; a
	// negative value, which it wraps around, is an error.
	CastUnsigned
)

func (p Param) Eval(params []Value) (Value, error) { return p.eval(params, false) }
func (c Const) Eval(params []Value) (Value, error) { return c.eval(params, false) }
func (n Neg) Eval(params []Value) (Value, error)   { return n.eval(params, false) }
func (a Arith) Eval(params []Value) (Value, error) { return a.eval(params, false) }
func (c Cast) Eval(params []Value) (Value, error)  { return c.eval(params, false) }

func (p Param) eval(params []Value, _ bool) (Value, error) {
	if p.Index < 1 || p.Index > len(params) {
		return Null, fmt.Errorf("$%d has no value (%d given)", p.Index, len(params))
	}
	return params[p.Index-1], nil
}

func (c Const) eval([]Value, bool) (Value, error) { return c.Value, nil }

func (n Neg) eval(params []Value, sum bool) (Value, error) {
	v, err := n.X.eval(params, sum)
	if err != nil || v.IsNull() {
		return v, err
	}
	if v, err = readNumber(v, sum); err != nil {
		return Null, fmt.Errorf("-%s: %w", n.X, err)
	}
	res, err := negNumber(v)
	if err != nil {
		return Null, fmt.Errorf("-%s: %w", n.X, err)
	}
	return res, nil
}

var errOverflow = errors.New("integer out of range")

func (a Arith) eval(params []Value, sum bool) (Value, error) {
	// A product's operands are typed on their own, not as terms of the sum around it.
	sum = sum && a.Op != '*'
	l, err := a.L.eval(params, sum)
	if err != nil {
		return Null, err
	}
	r, err := a.R.eval(params, sum)
	if err != nil {
		return Null, err
	}
	if l.IsNull() || r.IsNull() {
		return Null, nil
	}
	numeric := sum || l.Kind == DecimalValue || r.Kind == DecimalValue
	if l, err = readNumber(l, numeric); err != nil {
		return Null, fmt.Errorf("%s: %w", a, err)
	}
	if r, err = readNumber(r, numeric); err != nil {
		return Null, fmt.Errorf("%s: %w", a, err)
	}
	var res Value
	switch a.Op {
	case '+', '-':
		res, err = addNumbers(l, r, a.Op == '-')
	case '*':
		res, err = mulNumbers(l, r)
	default:
		return Null, fmt.Errorf("%s: operator %c", a, a.Op)
	}
	switch {
	case errors.Is(err, errOverflow):
		return Null, fmt.Errorf("%s with %s and %s: %w", a, l, r, err)
	case err != nil:
		return Null, fmt.Errorf("%s with %s and %s: the result %w", a, l, r, err)
	}
	return res, nil
}

func (c Cast) eval(params []Value, _ bool) (Value, error) {
	v, err := c.X.eval(params, false)
	if err != nil || v.IsNull() {
		return v, err
	}
	switch c.To {
	case CastInt2, CastInt4, CastInt8, CastUnsigned:
		i, err := v.asInt()
		if v.Kind == DecimalValue {
			i, err = v.Dec.Round(), nil
		}
		if err != nil {
			return Null, fmt.Errorf("%s: %w", c, err)
		}
		if !fitsInt(i, c.To) {
			return Null, fmt.Errorf("%s: %d: %w", c, i, errOverflow)
		}
		if c.To == CastUnsigned && i < 0 {
			return Null, fmt.Errorf("%s: %d is negative, which UNSIGNED wraps around", c, i)
		}
		return Int(i), nil
	case CastNumeric:
		n, err := readNumber(v, true)
		if err != nil {
			return Null, fmt.Errorf("%s: %w", c, err)
		}
		return c.numeric(n)
	case CastText:
		switch v.Kind {
		case IntValue:
			return String(strconv.FormatInt(v.Int, 10)), nil
		case DecimalValue:
			return String(v.Dec.Format(int(v.Scale))), nil
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

// numeric applies a numeric cast's typmod to n: with a scale, the value is shown with
// that many places (5::numeric(10,2) is 5.00); a value it would round, or with more
// integer digits than the precision leaves, is an error.
func (c Cast) numeric(n Value) (Value, error) {
	switch {
	case c.Precision == 0:
		return n, nil
	case c.Scale < 0:
		return Null, fmt.Errorf("%s: %s rounds to tens or more", c, c.Type)
	}
	if n.Kind == DecimalValue && n.Dec.Places() > c.Scale {
		return Null, fmt.Errorf("%s: %s has more decimal places than %s keeps: it would round", c, n, c.Type)
	}
	if !fitsDigits(n, c.Precision, c.Scale) {
		return Null, fmt.Errorf("%s: %s does not fit %s", c, n, c.Type)
	}
	if c.Scale == 0 {
		return canonical(n), nil
	}
	d, err := n.Decimal()
	if err != nil {
		return Null, fmt.Errorf("%s: %w", c, err)
	}
	return Dec(d, uint8(c.Scale)), nil
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

func (c Cast) String() string {
	if c.Call {
		return "CAST(" + c.X.String() + " AS " + c.Type + ")"
	}
	return operand(c.X) + "::" + c.Type
}

// operand renders x as the operand of a unary operator or cast: compound
// expressions in parentheses.
func operand(x Expr) string {
	switch x.(type) {
	case Arith, Neg:
		return "(" + x.String() + ")"
	}
	if c, ok := x.(Const); ok && ((c.Value.Kind == IntValue && c.Value.Int < 0) ||
		(c.Value.Kind == DecimalValue && c.Value.Dec < 0)) {
		return "(" + x.String() + ")"
	}
	return x.String()
}
