package sqlshape

import (
	"fmt"
	"math"
	"strconv"
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

// holds says whether the column's type can store the integer i.
func (c *Column) holds(i int64) bool {
	switch c.BaseTypeOID {
	case oidInt2:
		return i >= math.MinInt16 && i <= math.MaxInt16
	case oidInt4:
		return i >= math.MinInt32 && i <= math.MaxInt32
	}
	precision, scale, ok := c.numericDigits()
	if !ok || scale < 0 {
		return true
	}
	digits := len(strconv.FormatUint(uint64(max(i, -i)), 10))
	if i == math.MinInt64 {
		digits = 19
	}
	return i == 0 || digits <= precision-scale
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
	return fmt.Sprintf("%s is %s: the kit adds integers to integer and numeric columns only", c.Name, c.TypeName)
}

// exactCompare says why greatest/least of the column would not be computed exactly
// by the kit, or "".
func (c *Column) exactCompare() string {
	if c.integer() || c.BaseTypeOID == oidNumeric {
		return ""
	}
	return fmt.Sprintf("%s is %s: the kit compares integers, in integer and numeric columns only", c.Name, c.TypeName)
}

// keyable says why the kit could not tell the column's values apart the way
// PostgreSQL's equality does, or "".
func (c *Column) keyable() string {
	switch c.BaseTypeOID {
	case oidInt2, oidInt4, oidInt8, oidNumeric, oidUUID:
		return ""
	case oidText, oidVarchar:
		if !c.DeterministicCollation {
			return "has a nondeterministic collation: strings the kit tells apart can be equal to PostgreSQL"
		}
		return ""
	}
	return fmt.Sprintf("is %s: the kit keys rows by integers, text and uuid, whose equality it reproduces exactly",
		c.TypeName)
}

// Compare converts v to the form in which PostgreSQL compares it with the column's
// values, so that two values are equal in the column exactly when their Compare
// results are equal: integers (integer and numeric columns: an integer in range),
// text (an integer in its decimal form), a uuid in its canonical lower-case form, a
// boolean. Other types' values are returned as they are. NULL stays NULL.
func (c *Column) Compare(v Value) (Value, error) {
	if v.IsNull() {
		return v, nil
	}
	switch c.BaseTypeOID {
	case oidInt2, oidInt4, oidInt8, oidNumeric:
		i, err := v.asInt()
		if err != nil {
			return Null, fmt.Errorf("%s (%s): %w", c.Name, c.TypeName, err)
		}
		if !c.holds(i) {
			return Null, fmt.Errorf("%s (%s): %d: %w", c.Name, c.TypeName, i, errOverflow)
		}
		return Int(i), nil
	case oidText, oidVarchar:
		switch v.Kind {
		case IntValue:
			return String(strconv.FormatInt(v.Int, 10)), nil
		case BoolValue:
			return String(strconv.FormatBool(v.Bool)), nil
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
