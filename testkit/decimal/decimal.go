// Package decimal owns the kit's exact decimal: an amount in an int64 of units of 10⁻⁸, the
// scale of NUMERIC(20,8) columns, so that sums in Go and in PostgreSQL agree to the last digit
// and floats never touch an amount. It reads a number as PostgreSQL's numeric input reads it,
// writes one as PostgreSQL writes a numeric, and hands one to pgx as a numeric parameter.
// Package counters keeps its amounts in it, and the script suite computes its scripts'
// decimals in it; it knows nothing of either (no table, column or expression).
package decimal

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// Decimal is an exact amount in units of 10⁻⁸ (MaxPlaces decimal places); its range is
// ±92233720368.54775807.
type Decimal int64

// MaxPlaces is the number of decimal places a Decimal keeps.
const MaxPlaces = 8

// One is 1 as a Decimal (10⁸ units).
const One Decimal = 100_000_000

// The ways a text is not a Decimal (Parse). Each says what is wrong with the text without
// naming it: the caller names it as its reader knows it.
var (
	ErrPlaces    = errors.New("has more than 8 decimal places: the kit adds numerics exactly to 10⁻⁸")
	ErrRange     = errors.New("is out of the kit's decimal range (±92233720368.54775807)")
	ErrNotNumber = errors.New("is not a number")
	ErrNotFinite = errors.New("is not a finite number")
)

// pow10[k] is 10^k.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for k := 1; k < len(p); k++ {
		p[k] = p[k-1] * 10
	}
	return p
}()

// Parse reads s as PostgreSQL's numeric input reads it (surrounding spaces, a sign, digits
// with one decimal point, an exponent: " -2.50", "1e-3", ".5"), and returns with it its
// display scale, the places PostgreSQL shows (2.50 shows 2, 1e-3 shows 3). More than
// MaxPlaces places (0.000000001, and 1.000000000 too: PostgreSQL keeps its 9 places) is
// ErrPlaces; NaN and the infinities ErrNotFinite; an amount beyond a Decimal's range
// ErrRange; anything else PostgreSQL 15's numeric input rejects ErrNotNumber.
func Parse(s string) (d Decimal, scale int, err error) {
	s = strings.Trim(s, " \t\n\r\f\v")
	negative := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		negative = s[0] == '-'
		s = s[1:]
	}
	switch strings.ToLower(s) {
	case "nan", "inf", "infinity":
		return 0, 0, ErrNotFinite
	}
	mantissa, exponent, hasExponent := strings.Cut(s, "e")
	if !hasExponent {
		mantissa, exponent, hasExponent = strings.Cut(s, "E")
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	if whole+frac == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, 0, ErrNotNumber
	}
	exp := int64(0)
	if hasExponent {
		digits := strings.TrimPrefix(strings.TrimPrefix(exponent, "+"), "-")
		if digits == "" || !allDigits(digits) {
			return 0, 0, ErrNotNumber
		}
		if exp, err = strconv.ParseInt(exponent, 10, 64); err != nil || exp > 1000 || exp < -1000 {
			return 0, 0, ErrNotNumber // PostgreSQL's own bound on an exponent
		}
	}
	// The number is digits × 10^(exp - len(frac)); PostgreSQL shows max(0, len(frac) - exp)
	// places, trailing zeros included.
	digits := strings.TrimLeft(whole+frac, "0")
	shift := exp - int64(len(frac))
	if -shift > MaxPlaces {
		return 0, 0, ErrPlaces
	}
	scale = int(max(0, -shift))
	if digits == "" {
		return 0, scale, nil
	}
	units, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, 0, ErrRange
	}
	for k := shift + MaxPlaces; k > 0; k-- {
		if units > math.MaxInt64/10 {
			return 0, 0, ErrRange
		}
		units *= 10
	}
	if negative {
		units = -units
	}
	return Decimal(units), scale, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FromInt is the integer i as a Decimal; ok is false when it is beyond a Decimal's range.
func FromInt(i int64) (d Decimal, ok bool) {
	if i > math.MaxInt64/int64(One) || i < -(math.MaxInt64/int64(One)) {
		return 0, false
	}
	return Decimal(i) * One, true
}

// FromCount is n × 10^-places (places from 0 to MaxPlaces); ok is false when it is beyond a
// Decimal's range.
func FromCount(n int64, places int) (d Decimal, ok bool) {
	f := pow10[MaxPlaces-places]
	res := n * f
	if n != 0 && (res/f != n || res == math.MinInt64) {
		return 0, false
	}
	return Decimal(res), true
}

// Count is d as a count of 10^-places (places from 0 to MaxPlaces), exact when places is at
// least d.Places().
func (d Decimal) Count(places int) int64 { return int64(d) / pow10[MaxPlaces-places] }

// Places is the fewest decimal places that write d exactly: 0 to MaxPlaces.
func (d Decimal) Places() int {
	places := MaxPlaces
	for places > 0 && d%Decimal(pow10[MaxPlaces-places+1]) == 0 {
		places--
	}
	return places
}

// String writes d with all MaxPlaces places, as PostgreSQL writes a NUMERIC(20,8): "0.00100000".
func (d Decimal) String() string { return d.Format(MaxPlaces) }

// Format writes d with at least scale places (more when d needs them), as PostgreSQL writes a
// numeric of that display scale: 2.5 at scale 2 is "2.50", at scale 0 "2.5".
func (d Decimal) Format(scale int) string {
	places := max(min(scale, MaxPlaces), d.Places())
	var buf [32]byte // a sign, 11 digits, a point, 8 places: one allocation, the string's
	b := buf[:0]
	u := uint64(d)
	if d < 0 {
		b, u = append(b, '-'), -u
	}
	b = strconv.AppendUint(b, u/uint64(One), 10)
	if places > 0 {
		b = append(b, '.')
		frac := u % uint64(One)
		for k := MaxPlaces - 1; k >= MaxPlaces-places; k-- {
			b = append(b, byte('0'+frac/uint64(pow10[k])%10))
		}
	}
	return string(b)
}

// Equals reports whether numeric (the database's text of a NUMERIC) is exactly d; it makes a
// Decimal a testkit.Amount for Checks.Money.
func (d Decimal) Equals(numeric string) bool {
	g, _, err := Parse(numeric)
	return err == nil && g == d
}

// Numeric is d as a pgtype.Numeric parameter.
func (d Decimal) Numeric() pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(int64(d)), Exp: -MaxPlaces, Valid: true}
}

// Round is d rounded to an integer as PostgreSQL's numeric-to-integer casts round: to the
// nearest, a half away from zero.
func (d Decimal) Round() int64 {
	q, r := int64(d)/int64(One), int64(d)%int64(One)
	switch {
	case r >= int64(One)/2:
		q++
	case r <= -int64(One)/2:
		q--
	}
	return q
}

// FitsDigits reports whether d has at most n integer digits (|d| < 10^n), as numeric(p, s)
// leaves p - s of them.
func (d Decimal) FitsDigits(n int) bool {
	e := n + MaxPlaces // |d| < 10^e units
	switch {
	case e >= len(pow10):
		return true
	case e <= 0:
		return d == 0
	}
	return max(d, -d) < Decimal(pow10[e])
}
