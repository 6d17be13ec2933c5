package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a Value: pgbench's null, boolean, int and double, and the string a -D
// value that is none of them stays.
type Kind uint8

const (
	// unset marks a variable slot no command has set yet in this request.
	unset Kind = iota
	// Null is SQL's NULL (pgbench's NULL constant, or a -D value "null").
	Null
	// Bool is a boolean.
	Bool
	// Int is a 64-bit integer.
	Int
	// Double is a float64.
	Double
	// String is a -D value that pgbench cannot read as any of the above: usable in SQL, not in
	// an expression.
	String
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Int:
		return "int"
	case Double:
		return "double"
	case String:
		return "string"
	default:
		return "none"
	}
}

// Value is a script variable's value. Values compare with ==.
type Value struct {
	kind Kind
	// bits holds an Int (two's complement), a Double (IEEE bits) or a Bool (0 or 1).
	bits uint64
	// text is a String, or the text a -D value was given as, which pgbench substitutes into
	// SQL as written.
	text string
}

func nullValue() Value            { return Value{kind: Null} }
func intValue(i int64) Value      { return Value{kind: Int, bits: uint64(i)} }
func doubleValue(f float64) Value { return Value{kind: Double, bits: math.Float64bits(f)} }

func boolValue(b bool) Value {
	if b {
		return Value{kind: Bool, bits: 1}
	}
	return Value{kind: Bool}
}

func (v Value) isSet() bool         { return v.kind != unset }
func (v Value) intBits() int64      { return int64(v.bits) }
func (v Value) doubleBits() float64 { return math.Float64frombits(v.bits) }

// Kind is the value's type.
func (v Value) Kind() Kind { return v.kind }

// Int64 is an Int's value (0 for other kinds).
func (v Value) Int64() int64 {
	if v.kind != Int {
		return 0
	}
	return v.intBits()
}

// Float64 is a Double's value (0 for other kinds).
func (v Value) Float64() float64 {
	if v.kind != Double {
		return 0
	}
	return v.doubleBits()
}

// Bool is a Bool's value (false for other kinds).
func (v Value) Bool() bool { return v.kind == Bool && v.bits == 1 }

// Any is the value as a query argument: int64, float64, bool, string, or nil for NULL.
func (v Value) Any() any {
	switch v.kind {
	case Int:
		return v.intBits()
	case Double:
		return v.doubleBits()
	case Bool:
		return v.Bool()
	case String:
		return v.text
	default:
		return nil
	}
}

// Text is the value as pgbench writes it into SQL: a -D value as given, an int in decimal, a
// double with 15 significant digits (%.15g), true/false, NULL.
func (v Value) Text() string {
	if v.text != "" || v.kind == String {
		return v.text
	}
	switch v.kind {
	case Int:
		return strconv.FormatInt(v.intBits(), 10)
	case Double:
		return formatDouble(v.doubleBits())
	case Bool:
		if v.Bool() {
			return "true"
		}
		return "false"
	default:
		return "NULL"
	}
}

func (v Value) String() string { return v.Text() }

// formatDouble is %.15g as PostgreSQL's own snprintf, which pgbench uses, writes it:
// NaN, Infinity and -Infinity spelled so.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// debugText is how pgbench's debug() prints a value.
func (v Value) debugText() string {
	switch v.kind {
	case Int:
		return "int " + strconv.FormatInt(v.intBits(), 10)
	case Double:
		return "double " + formatDouble(v.doubleBits())
	case Bool:
		return "boolean " + v.Text()
	case Null:
		return "null"
	default:
		return "string " + v.text
	}
}

// defineValue types a -D value as pgbench does when an expression reads it: "null", the
// prefixes of true/yes and false/no, on/off, an integer (which must fit in 64 bits), a double;
// anything else stays a String. The text is kept for SQL.
func defineValue(name, text string) (Value, error) {
	lower := strings.ToLower(text)
	isPrefixOf := func(word string) bool { return lower != "" && strings.HasPrefix(word, lower) }
	var v Value
	switch {
	case text == "":
		v = Value{kind: String}
	case lower == "null":
		v = nullValue()
	case isPrefixOf("true") || isPrefixOf("yes") || lower == "on":
		v = boolValue(true)
	case isPrefixOf("false") || isPrefixOf("no") || lower == "off" || lower == "of":
		v = boolValue(false)
	case looksLikeInt(text):
		i, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("-D %s=%s: value is out of range for type bigint", name, text)
		}
		v = intValue(i)
	default:
		f, ok := parseCDouble(text)
		if !ok {
			v = Value{kind: String}
		} else {
			v = doubleValue(f)
		}
	}
	v.text = text
	return v, nil
}

// looksLikeInt is pgbench's is_an_int: optional leading spaces, an optional sign, then digits
// only.
func looksLikeInt(s string) bool {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseCDouble reads a double as C's strtod does for pgbench: leading spaces allowed, the
// whole rest consumed, overflow and underflow refused.
func parseCDouble(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	if s == "" || strings.ContainsRune(s, '_') {
		return 0, false
	}
	if unsigned := strings.TrimLeft(s, "+-"); (strings.HasPrefix(unsigned, "0x") || strings.HasPrefix(unsigned, "0X")) &&
		!strings.ContainsAny(s, "pP") {
		s += "p0" // strtod reads a hexadecimal float without an exponent; ParseFloat wants one
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 && !math.IsInf(f, 0) {
		return 0, false
	}
	if f == 0 && hasNonzeroMantissa(s) {
		return 0, false
	}
	return f, true
}

// hasNonzeroMantissa reports whether a decimal number's digits before any exponent are not all
// zero: such a number that reads as 0 underflowed.
func hasNonzeroMantissa(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		case c == 'x' || c == 'X':
			return false
		}
	}
	return false
}
