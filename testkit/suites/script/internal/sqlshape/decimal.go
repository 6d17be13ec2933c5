package sqlshape

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Decimal is an exact decimal amount in units of 10⁻⁸: DecimalPlaces places, the
// representation of testkit/counters' Money (counters.Money(d) is the same amount), so the
// kit's sums and PostgreSQL's agree to the last digit. Its range is ±92233720368.54775807.
type Decimal int64

// DecimalPlaces is the number of decimal places a Decimal keeps.
const DecimalPlaces = 8

const decimalUnit = 100_000_000 // 1 in units of 10⁻⁸

var (
	errPlaces       = errors.New("has more than 8 decimal places: the kit adds numerics exactly to 10⁻⁸")
	errDecimalRange = errors.New("is out of the kit's decimal range (±92233720368.54775807)")
	errNotNumber    = errors.New("is not a number")
	errNotFinite    = errors.New("is not a finite number")
)

// pow10[k] is 10^k.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for k := 1; k < len(p); k++ {
		p[k] = p[k-1] * 10
	}
	return p
}()

// Places is the fewest decimal places that write d exactly: 0 to DecimalPlaces.
func (d Decimal) Places() int {
	places := DecimalPlaces
	for places > 0 && d%Decimal(pow10[DecimalPlaces-places+1]) == 0 {
		places--
	}
	return places
}

// String writes d with its fewest places: "0.001", "-2.5", "3".
func (d Decimal) String() string { return d.format(0) }

// format writes d with at least scale places (more when d needs them), as PostgreSQL writes
// a numeric of that display scale: 2.5 at scale 2 is "2.50".
func (d Decimal) format(scale int) string {
	places := max(min(scale, DecimalPlaces), d.Places())
	sign := ""
	u := uint64(d)
	if d < 0 {
		sign, u = "-", uint64(-d)
	}
	whole := strconv.FormatUint(u/decimalUnit, 10)
	if places == 0 {
		return sign + whole
	}
	frac := fmt.Sprintf("%08d", u%decimalUnit)
	return sign + whole + "." + frac[:places]
}

// ParseDecimal reads s as PostgreSQL's numeric input reads it (surrounding spaces, a sign,
// digits with one decimal point, an exponent: " -2.50", "1e-3", ".5") into a decimal Value
// whose Scale is the number's display scale, the places PostgreSQL shows (2.50 shows 2, 1e-3
// shows 3). More than DecimalPlaces places (0.000000001, and 1.000000000 too: PostgreSQL
// keeps its 9 places), NaN and infinities, and an amount out of Decimal's range are errors,
// as is anything PostgreSQL 15's numeric input rejects.
func ParseDecimal(s string) (Value, error) {
	v, err := parseDecimal(s)
	if err != nil {
		return Null, fmt.Errorf("%s %w", String(s), err)
	}
	return v, nil
}

func parseDecimal(s string) (Value, error) {
	s = strings.Trim(s, " \t\n\r\f\v")
	negative := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		negative = s[0] == '-'
		s = s[1:]
	}
	switch strings.ToLower(s) {
	case "nan", "inf", "infinity":
		return Null, errNotFinite
	}
	mantissa, exponent, hasExponent := strings.Cut(s, "e")
	if !hasExponent {
		mantissa, exponent, hasExponent = strings.Cut(s, "E")
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return Null, errNotNumber
	}
	exp := int64(0)
	if hasExponent {
		digits := strings.TrimPrefix(strings.TrimPrefix(exponent, "+"), "-")
		if digits == "" || !allDigits(digits) {
			return Null, errNotNumber
		}
		var err error
		if exp, err = strconv.ParseInt(exponent, 10, 64); err != nil || exp > 1000 || exp < -1000 {
			return Null, errNotNumber // PostgreSQL's own bound on an exponent
		}
	}
	// The number is digits × 10^(exp - len(frac)); PostgreSQL shows max(0, len(frac) - exp)
	// places, trailing zeros included.
	digits := strings.TrimLeft(whole+frac, "0")
	shift := exp - int64(len(frac))
	if -shift > DecimalPlaces {
		return Null, errPlaces
	}
	scale := uint8(max(0, -shift))
	if digits == "" {
		return Dec(0, scale), nil
	}
	units, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return Null, errDecimalRange
	}
	for k := shift + DecimalPlaces; k > 0; k-- {
		if units > math.MaxInt64/10 {
			return Null, errDecimalRange
		}
		units *= 10
	}
	if negative {
		units = -units
	}
	return Dec(Decimal(units), scale), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Decimal returns an integer or decimal Value as a Decimal; an integer out of Decimal's
// range, and any other kind, is an error (a string is first read by its column:
// Column.Compare).
func (v Value) Decimal() (Decimal, error) {
	switch v.Kind {
	case DecimalValue:
		return v.Dec, nil
	case IntValue:
		d, ok := intDecimal(v.Int)
		if !ok {
			return 0, fmt.Errorf("%s %w", v, errDecimalRange)
		}
		return d, nil
	}
	return 0, fmt.Errorf("%s is not a number", v)
}

// intDecimal is the integer i as a Decimal, if in range.
func intDecimal(i int64) (Decimal, bool) {
	if i > math.MaxInt64/decimalUnit || i < -(math.MaxInt64/decimalUnit) {
		return 0, false
	}
	return Decimal(i * decimalUnit), true
}

// canonical is the one form of a number that equality sees: an integer as an IntValue,
// a fraction as a DecimalValue at its fewest places.
func canonical(v Value) Value {
	if v.Kind != DecimalValue {
		return v
	}
	if v.Dec%decimalUnit == 0 {
		return Int(int64(v.Dec / decimalUnit))
	}
	return Dec(v.Dec, uint8(v.Dec.Places()))
}

// readNumber reads v as a number, a string as PostgreSQL's input for numeric (decimal) or
// for an integer (otherwise) reads it.
func readNumber(v Value, decimal bool) (Value, error) {
	switch v.Kind {
	case IntValue, DecimalValue:
		return v, nil
	case StringValue:
		if decimal {
			d, err := parseDecimal(v.Str)
			if err != nil {
				return Null, fmt.Errorf("%s %w", v, err)
			}
			return d, nil
		}
		i, err := v.asInt()
		return Int(i), err
	}
	if decimal {
		return Null, fmt.Errorf("%s is not a number", v)
	}
	return Null, fmt.Errorf("%s is not an integer", v)
}

// addNumbers is l + r, or l - r when subtract: integers in int64, anything with a decimal
// in Decimal units, shown with the larger display scale (PostgreSQL's); out of range is
// an error.
func addNumbers(l, r Value, subtract bool) (Value, error) {
	if l.Kind == IntValue && r.Kind == IntValue {
		li, ri := l.Int, r.Int
		if subtract {
			res := li - ri
			if (ri >= 0) != (res <= li) {
				return Null, errOverflow
			}
			return Int(res), nil
		}
		res := li + ri
		if (ri >= 0) != (res >= li) {
			return Null, errOverflow
		}
		return Int(res), nil
	}
	ld, ok := decimalOperand(l)
	if !ok {
		return Null, errDecimalRange
	}
	rd, ok := decimalOperand(r)
	if !ok {
		return Null, errDecimalRange
	}
	if subtract {
		rd = -rd
	}
	res := ld + rd
	if (rd >= 0) != (res >= ld) || res == math.MinInt64 {
		return Null, errDecimalRange
	}
	return Dec(res, max(l.Scale, r.Scale)), nil
}

// mulNumbers is l × r: integers in int64; with a decimal exact in Decimal units, shown with
// the sum of the display scales (PostgreSQL's, whose product is exact): an error when that
// is more than DecimalPlaces (0.00001 × 0.0001) or out of range.
func mulNumbers(l, r Value) (Value, error) {
	if l.Kind == IntValue && r.Kind == IntValue {
		li, ri := l.Int, r.Int
		res, ok := mulInt(li, ri)
		if !ok {
			return Null, errOverflow
		}
		return Int(res), nil
	}
	// Each factor as an integer count of 10^-(its scale), so that their product counts
	// 10^-scale exactly; then in units of 10⁻⁸.
	lc, ls := factor(l)
	rc, rs := factor(r)
	scale := ls + rs
	if scale > DecimalPlaces {
		return Null, errPlaces
	}
	res, ok := mulInt(lc, rc)
	if ok {
		res, ok = mulInt(res, pow10[DecimalPlaces-scale])
	}
	if !ok || res == math.MinInt64 {
		return Null, errDecimalRange
	}
	return Dec(Decimal(res), uint8(scale)), nil
}

// factor is an integer or decimal as a count of 10^-scale, scale its display scale.
func factor(v Value) (count int64, scale int) {
	if v.Kind != DecimalValue {
		return v.Int, 0
	}
	scale = max(int(v.Scale), v.Dec.Places())
	return int64(v.Dec) / pow10[DecimalPlaces-scale], scale
}

func mulInt(a, b int64) (int64, bool) {
	res := a * b
	ok := a == 0 || (res/a == b && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64))
	return res, ok
}

// negNumber is -v.
func negNumber(v Value) (Value, error) {
	switch {
	case v.Kind == IntValue && v.Int == math.MinInt64:
		return Null, errOverflow
	case v.Kind == IntValue:
		return Int(-v.Int), nil
	case v.Dec == math.MinInt64:
		return Null, errDecimalRange
	}
	return Dec(-v.Dec, v.Scale), nil
}

// decimalOperand is an integer or decimal as Decimal units.
func decimalOperand(v Value) (Decimal, bool) {
	if v.Kind == DecimalValue {
		return v.Dec, v.Dec != math.MinInt64
	}
	return intDecimal(v.Int)
}

// roundToInt is a decimal rounded to an integer as PostgreSQL's numeric-to-integer casts
// round: to the nearest, ties away from zero.
func roundToInt(d Decimal) int64 {
	q, r := int64(d)/decimalUnit, int64(d)%decimalUnit
	switch {
	case r >= decimalUnit/2:
		q++
	case r <= -decimalUnit/2:
		q--
	}
	return q
}

// fitsDigits says whether v fits numeric(precision, scale)'s integer digits: fewer than
// precision - scale of them. A scale below zero rounds to tens or more and is not checked
// here.
func fitsDigits(v Value, precision, scale int) bool {
	if scale < 0 {
		return true
	}
	switch v.Kind {
	case IntValue:
		if v.Int == 0 {
			return true
		}
		if v.Int == math.MinInt64 {
			return 19 <= precision-scale
		}
		return len(strconv.FormatInt(max(v.Int, -v.Int), 10)) <= precision-scale
	case DecimalValue:
		e := precision - scale + DecimalPlaces // |units| < 10^e
		switch {
		case e >= len(pow10):
			return true
		case e <= 0:
			return v.Dec == 0
		}
		return max(v.Dec, -v.Dec) < Decimal(pow10[e])
	}
	return true
}
