package sqlshape

import (
	"fmt"
	"math"
	"strings"
)

// Type OIDs of pg_type the analysis tells apart.
const (
	oidBool    = 16
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidText    = 25
	oidFloat4  = 700
	oidFloat8  = 701
	oidBpchar  = 1042
	oidVarchar = 1043
	oidNumeric = 1700
	oidUUID    = 2950
)

func (c *Column) integer() bool {
	switch c.BaseTypeOID {
	case oidInt2, oidInt4, oidInt8:
		return true
	}
	return false
}

// numericDigits returns a numeric column's precision and scale; ok is false for
// numeric without a typmod. PostgreSQL 15 and later allow a negative scale, stored in
// the typmod's low 11 bits as a signed number.
func (c *Column) numericDigits() (precision, scale int, ok bool) {
	if c.BaseTypeOID != oidNumeric || c.BaseTypmod < 4 {
		return 0, 0, false
	}
	m := int(c.BaseTypmod - 4)
	precision = (m >> 16) & 0xffff
	scale = m & 0x7ff
	if scale >= 1024 {
		scale -= 2048
	}
	return precision, scale, true
}

// number reads v as the column's integer or numeric type reads it (a string as that
// type's input, a decimal into an integer type only when it is an integer) and returns it
// in its canonical form (an IntValue when an integer, otherwise a DecimalValue at its
// fewest places), refusing what the column would round or cannot hold.
func (c *Column) number(v Value) (Value, error) {
	numeric := c.BaseTypeOID == oidNumeric
	n, err := readNumber(v, numeric)
	if err != nil {
		return Null, err
	}
	n = canonical(n)
	_, scale, typmod := c.numericDigits()
	switch {
	case n.Kind == DecimalValue && !numeric:
		return Null, fmt.Errorf("%s is a decimal, which %s would round", n, c.TypeName)
	case n.Kind == DecimalValue && typmod && n.Dec.Places() > scale:
		return Null, fmt.Errorf("%s has more decimal places than %s keeps: it would round", n, c.TypeName)
	case !c.holds(n):
		return Null, fmt.Errorf("%s is out of range for %s", n, c.TypeName)
	}
	return n, nil
}

// delta is the column as the delta of an increment is written to it: an UNSIGNED column's
// delta may be negative (a decrement), within the type's magnitude.
func (c *Column) delta() *Column {
	if !c.Unsigned || !c.bounded {
		return c
	}
	d := *c
	d.min = -c.max
	return &d
}

// holds says whether the column's type can store the number n.
func (c *Column) holds(n Value) bool {
	if c.bounded {
		return n.Kind == IntValue && n.Int >= c.min && n.Int <= c.max
	}
	switch c.BaseTypeOID {
	case oidInt2:
		return n.Int >= math.MinInt16 && n.Int <= math.MaxInt16
	case oidInt4:
		return n.Int >= math.MinInt32 && n.Int <= math.MaxInt32
	}
	precision, scale, ok := c.numericDigits()
	return !ok || fitsDigits(n, precision, scale)
}

// exactSum says why increments of the column would not add up exactly, or "".
func (c *Column) exactSum() string {
	switch {
	case c.integer():
		return ""
	case c.BaseTypeOID == oidNumeric:
		if _, scale, ok := c.numericDigits(); ok && scale < 0 {
			return fmt.Sprintf("%s is %s, which rounds every write: a merged sum rounds once", c.Name, c.TypeName)
		}
		return ""
	case c.BaseTypeOID == oidFloat4 || c.BaseTypeOID == oidFloat8:
		return fmt.Sprintf("%s is %s: sums of floats taken in another order may differ", c.Name, c.TypeName)
	}
	return fmt.Sprintf("%s is %s: the kit adds to integer and numeric columns only", c.Name, c.TypeName)
}

// exactCompare says why greatest/least of the column would not be computed exactly
// by the kit, or "".
func (c *Column) exactCompare() string {
	if c.integer() || c.BaseTypeOID == oidNumeric {
		return ""
	}
	return fmt.Sprintf("%s is %s: the kit compares numbers, in integer and numeric columns only", c.Name, c.TypeName)
}

// fits says why writing the client value e to the column would not write what
// PostgreSQL writes, or "": a decimal literal in e that the column would round (any
// fraction, in an integer column; more places than its scale, in a numeric one), or, for
// an e without parameters, a value the column cannot take. sum says e is the delta of an
// increment (Expr's eval). Columns of other types take what e evaluates to as it is.
func (c *Column) fits(e Expr, sum bool) string {
	if !c.integer() && c.BaseTypeOID != oidNumeric {
		return ""
	}
	if why := c.roundedLiteral(e); why != "" {
		return why
	}
	if hasParam(e) {
		return ""
	}
	v, err := e.eval(nil, sum)
	if err != nil {
		return err.Error() // it names e
	}
	if v.IsNull() {
		return ""
	}
	if _, err := c.number(v); err != nil {
		if _, isConst := e.(Const); isConst {
			return err.Error()
		}
		return fmt.Sprintf("%s: %v", e, err)
	}
	return ""
}

// roundedLiteral says which decimal literal of e the column would round, or "".
func (c *Column) roundedLiteral(e Expr) string {
	switch v := e.(type) {
	case Const:
		if v.Value.Kind != DecimalValue {
			return ""
		}
		places := v.Value.Dec.Places()
		_, scale, typmod := c.numericDigits()
		switch {
		case c.integer() && places > 0:
			return fmt.Sprintf("%s is a decimal, which %s (%s) would round: the kit writes decimals to numeric "+
				"columns only", v, c.Name, c.TypeName)
		case typmod && places > scale:
			return fmt.Sprintf("%s has more decimal places than %s (%s) keeps: each write would round",
				v, c.Name, c.TypeName)
		}
	case Neg:
		return c.roundedLiteral(v.X)
	case Arith:
		if why := c.roundedLiteral(v.L); why != "" {
			return why
		}
		return c.roundedLiteral(v.R)
	case Cast:
		if v.To == CastNumeric && v.Precision == 0 {
			return c.roundedLiteral(v.X)
		}
	}
	return ""
}

// keyable says why the kit could not tell the column's values apart the way
// PostgreSQL's equality does, or "".
func (c *Column) keyable() string {
	switch c.BaseTypeOID {
	case oidInt2, oidInt4, oidInt8, oidNumeric, oidUUID:
		return ""
	case oidText, oidVarchar:
		switch {
		case !c.DeterministicCollation && c.Collation != "":
			return "has collation " + c.Collation + ", under which strings the kit tells apart ('a', 'A', 'a ') " +
				"can be equal to MySQL"
		case !c.DeterministicCollation:
			return "has a nondeterministic collation: strings the kit tells apart can be equal to PostgreSQL"
		}
		return ""
	}
	return fmt.Sprintf("is %s: the kit keys rows by numbers, text and uuid, whose equality it reproduces exactly",
		c.TypeName)
}

// Compare converts v to the form in which PostgreSQL compares it with the column's
// values, so that two values are equal in the column exactly when their Compare
// results are equal: for integer columns an IntValue in range; for numeric columns an
// IntValue when the number is an integer, otherwise a DecimalValue at its fewest places
// (2.50 is 2.5: its display scale is dropped), within the column's precision and scale
// (a value the column would round is an error, as is a decimal into an integer column; a
// string is read as the column's type reads it); text (a number in its decimal form,
// decimals with their display scale: 2.50 is '2.50'), a uuid in its canonical lower-case
// form, a boolean. Other types' values are returned as they are. NULL stays NULL.
func (c *Column) Compare(v Value) (Value, error) {
	if v.IsNull() {
		return v, nil
	}
	switch c.BaseTypeOID {
	case oidInt2, oidInt4, oidInt8, oidNumeric:
		n, err := c.number(v)
		if err != nil {
			return Null, fmt.Errorf("%s: %w", c.Name, err)
		}
		return n, nil
	case oidText, oidVarchar:
		switch v.Kind {
		case IntValue, DecimalValue, BoolValue:
			return Cast{X: Const{Value: v}, To: CastText, Type: "text"}.Eval(nil)
		}
		return v, nil
	case oidUUID:
		if v.Kind != StringValue {
			return Null, fmt.Errorf("%s (uuid): %s is not a uuid", c.Name, v)
		}
		u, ok := canonicalUUID(v.Str)
		if !ok {
			return Null, fmt.Errorf("%s (uuid): %s is not a uuid", c.Name, v)
		}
		return String(u), nil
	case oidBool:
		if v.Kind == BoolValue {
			return v, nil
		}
		return Cast{X: Const{Value: v}, To: CastBool, Type: "bool"}.Eval(nil)
	}
	return v, nil
}

// canonicalUUID reads a uuid in any form PostgreSQL's uuid input accepts (upper or
// lower case, with or without hyphens after groups of four digits, in braces) and
// writes it in the canonical one.
func canonicalUUID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return "", false
		}
		s = s[1 : len(s)-1]
	}
	var hex []byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '-' && len(hex) > 0 && len(hex)%4 == 0 && i+1 < len(s) && s[i+1] != '-':
		case ch >= '0' && ch <= '9', ch >= 'a' && ch <= 'f':
			hex = append(hex, ch)
		case ch >= 'A' && ch <= 'F':
			hex = append(hex, ch+'a'-'A')
		default:
			return "", false
		}
	}
	if len(hex) != 32 {
		return "", false
	}
	h := string(hex)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}
