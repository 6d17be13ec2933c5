package sqlshape

import (
	"fmt"
	"math"
	"strconv"

	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// ParseDecimal reads s as PostgreSQL's numeric input reads it (decimal.Parse) into a decimal
// Value whose Scale is the number's display scale. More than decimal.MaxPlaces places, NaN and
// infinities, and an amount out of a Decimal's range are errors, as is anything PostgreSQL
// 15's numeric input rejects.
func ParseDecimal(s string) (Value, error) {
	v, err := parseDecimal(s)
	if err != nil {
		return Null, fmt.Errorf("%s %w", String(s), err)
	}
	return v, nil
}

// parseDecimal is ParseDecimal whose error does not name s.
func parseDecimal(s string) (Value, error) {
	d, scale, err := decimal.Parse(s)
	if err != nil {
		return Null, err
	}
	return Dec(d, uint8(scale)), nil
}

// Decimal returns an integer or decimal Value as a Decimal; an integer out of Decimal's
// range, and any other kind, is an error (a string is first read by its column:
// Column.Compare).
func (v Value) Decimal() (decimal.Decimal, error) {
	switch v.Kind {
	case DecimalValue:
		return v.Dec, nil
	case IntValue:
		d, ok := decimal.FromInt(v.Int)
		if !ok {
			return 0, fmt.Errorf("%s %w", v, decimal.ErrRange)
		}
		return d, nil
	}
	return 0, fmt.Errorf("%s is not a number", v)
}

// canonical is the one form of a number that equality sees: an integer as an IntValue,
// a fraction as a DecimalValue at its fewest places.
func canonical(v Value) Value {
	if v.Kind != DecimalValue {
		return v
	}
	if v.Dec%decimal.One == 0 {
		return Int(int64(v.Dec / decimal.One))
	}
	return Dec(v.Dec, uint8(v.Dec.Places()))
}

// readNumber reads v as a number, a string as PostgreSQL's input for numeric (numeric) or
// for an integer (otherwise) reads it.
func readNumber(v Value, numeric bool) (Value, error) {
	switch v.Kind {
	case IntValue, DecimalValue:
		return v, nil
	case StringValue:
		if numeric {
			d, err := parseDecimal(v.Str)
			if err != nil {
				return Null, fmt.Errorf("%s %w", v, err)
			}
			return d, nil
		}
		i, err := v.asInt()
		return Int(i), err
	}
	if numeric {
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
		return Null, decimal.ErrRange
	}
	rd, ok := decimalOperand(r)
	if !ok {
		return Null, decimal.ErrRange
	}
	if subtract {
		rd = -rd
	}
	res := ld + rd
	if (rd >= 0) != (res >= ld) || res == math.MinInt64 {
		return Null, decimal.ErrRange
	}
	return Dec(res, max(l.Scale, r.Scale)), nil
}

// mulNumbers is l × r: integers in int64; with a decimal exact in Decimal units, shown with
// the sum of the display scales (PostgreSQL's, whose product is exact): an error when that
// is more than decimal.MaxPlaces (0.00001 × 0.0001) or out of range.
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
	if scale > decimal.MaxPlaces {
		return Null, decimal.ErrPlaces
	}
	count, ok := mulInt(lc, rc)
	var res decimal.Decimal
	if ok {
		res, ok = decimal.FromCount(count, scale)
	}
	if !ok {
		return Null, decimal.ErrRange
	}
	return Dec(res, uint8(scale)), nil
}

// factor is an integer or decimal as a count of 10^-scale, scale its display scale.
func factor(v Value) (count int64, scale int) {
	if v.Kind != DecimalValue {
		return v.Int, 0
	}
	scale = max(int(v.Scale), v.Dec.Places())
	return v.Dec.Count(scale), scale
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
		return Null, decimal.ErrRange
	}
	return Dec(-v.Dec, v.Scale), nil
}

// decimalOperand is an integer or decimal as Decimal units.
func decimalOperand(v Value) (decimal.Decimal, bool) {
	if v.Kind == DecimalValue {
		return v.Dec, v.Dec != math.MinInt64
	}
	return decimal.FromInt(v.Int)
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
		return v.Dec.FitsDigits(precision - scale)
	}
	return true
}
