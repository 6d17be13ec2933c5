package counters

import (
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5/pgtype"
)

// Money is an exact amount in units of 10⁻⁸ (the scale of NUMERIC(20,8) columns), so sums in
// Go and in PostgreSQL agree to the last digit. Floats never touch money.
type Money int64

// MoneyScale is the number of decimal places Money keeps.
const MoneyScale = 8

// Unit is 1 in Money units (10⁸).
const Unit Money = 100_000_000

// ParseMoney reads a decimal such as "0.001" (at most 8 decimal places).
func ParseMoney(s string) (Money, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("not a decimal amount: %q", s)
	}
	r.Mul(r, big.NewRat(int64(Unit), 1))
	if !r.IsInt() {
		return 0, fmt.Errorf("amount %q has more than %d decimal places", s, MoneyScale)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("amount %q is out of range", s)
	}
	return Money(r.Num().Int64()), nil
}

// String formats the amount with exactly 8 decimal places, as PostgreSQL prints NUMERIC(20,8).
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%08d", sign, v/int64(Unit), v%int64(Unit))
}

// Equals reports whether numeric (the database's text of a NUMERIC) is exactly m; it makes
// Money a testkit.Amount for Checks.Money.
func (m Money) Equals(numeric string) bool {
	g, err := ParseMoney(numeric)
	return err == nil && g == m
}

// Numeric is the amount as a pgtype.Numeric parameter.
func (m Money) Numeric() pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(int64(m)), Exp: -MoneyScale, Valid: true}
}
