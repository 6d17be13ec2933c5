package decimal

import (
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in    string
		units Decimal
		scale int
		err   error
	}{
		{in: "0.001", units: 100_000, scale: 3},
		{in: " -2.50\n", units: -250_000_000, scale: 2},
		{in: ".5", units: 50_000_000, scale: 1},
		{in: "5.", units: 500_000_000},
		{in: "+.5e+1", units: 500_000_000},
		{in: "1E-3", units: 100_000, scale: 3},
		{in: "1.50e1", units: 1_500_000_000, scale: 1},
		{in: "0e5"},
		{in: "-0.00", scale: 2},
		{in: "00012.3400", units: 1_234_000_000, scale: 4},
		{in: "12", units: 1_200_000_000},
		{in: "0.00000001", units: 1, scale: 8},
		{in: "1e10", units: 1_000_000_000_000_000_000},
		{in: "92233720368.54775807", units: math.MaxInt64, scale: 8},
		{in: "-92233720368.54775807", units: -math.MaxInt64, scale: 8},
		{in: "92233720368.54775808", err: ErrRange},
		{in: "-92233720368.54775808", err: ErrRange},
		{in: "1e11", err: ErrRange},
		{in: "123456789012345678901234567890", err: ErrRange},
		{in: "0.000000001", err: ErrPlaces},
		{in: "1.000000000", err: ErrPlaces},
		{in: "1e-9", err: ErrPlaces},
		{in: "NaN", err: ErrNotFinite},
		{in: "-Infinity", err: ErrNotFinite},
		{in: "", err: ErrNotNumber},
		{in: ".", err: ErrNotNumber},
		{in: "1e", err: ErrNotNumber},
		{in: "1e+-3", err: ErrNotNumber},
		{in: "1.2.3", err: ErrNotNumber},
		{in: "- 5", err: ErrNotNumber},
		{in: "1_000", err: ErrNotNumber},
		{in: "0x10", err: ErrNotNumber},
		{in: "1/3", err: ErrNotNumber},
		{in: "1e2000", err: ErrNotNumber},
	}
	for _, tc := range cases {
		d, scale, err := Parse(tc.in)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("Parse(%q): %d, %d, %v; want %v", tc.in, d, scale, err, tc.err)
		case tc.err == nil && (err != nil || d != tc.units || scale != tc.scale):
			t.Errorf("Parse(%q): %d, %d, %v; want %d units at scale %d", tc.in, d, scale, err, tc.units, tc.scale)
		}
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct {
		d      Decimal
		scale  int
		format string
		str    string
	}{
		{100_000, 0, "0.001", "0.00100000"}, // a scale below d's own places is raised to them
		{250_000_000, 2, "2.50", "2.50000000"},
		{-5, 8, "-0.00000005", "-0.00000005"},
		{-250_000_000, 0, "-2.5", "-2.50000000"},
		{-50_000_000, 0, "-0.5", "-0.50000000"},
		{0, 3, "0.000", "0.00000000"},
		{1_200_000_000, 0, "12", "12.00000000"},
		{1, 0, "0.00000001", "0.00000001"},
		{math.MaxInt64, 8, "92233720368.54775807", "92233720368.54775807"},
		{math.MinInt64 + 1, 0, "-92233720368.54775807", "-92233720368.54775807"},
	} {
		if got := c.d.Format(c.scale); got != c.format {
			t.Errorf("%d.Format(%d) = %q, want %q", int64(c.d), c.scale, got, c.format)
		}
		if got := c.d.String(); got != c.str {
			t.Errorf("%d.String() = %q, want %q", int64(c.d), got, c.str)
		}
		if back, _, err := Parse(c.d.String()); err != nil || back != c.d {
			t.Errorf("Parse(%q) = %d, %v", c.d.String(), back, err)
		}
		if !c.d.Equals(c.d.Format(c.scale)) || c.d.Equals(c.d.Format(c.scale)+"1") {
			t.Errorf("%d.Equals(%q) is not exactly equality", int64(c.d), c.d.Format(c.scale))
		}
	}
	if d, _, _ := Parse("0.001"); d.Equals("0.00100001") || !d.Equals("0.00100000") || d.Equals("abc") {
		t.Error("Equals")
	}
	var sum Decimal
	for range 60_000 {
		sum += 100_000 // 0.001
	}
	if sum.String() != "60.00000000" {
		t.Errorf("60000 × 0.001 = %s", sum)
	}
}

func TestNumeric(t *testing.T) {
	n := Decimal(-250_000_000).Numeric()
	if !n.Valid || n.Exp != -MaxPlaces || n.Int.Int64() != -250_000_000 {
		t.Errorf("Numeric: %+v", n)
	}
}

func TestIntegers(t *testing.T) {
	for _, c := range []struct {
		d    Decimal
		want int64
	}{
		{250_000_000, 3}, {-250_000_000, -3}, {-50_000_000, -1}, {49_999_999, 0},
		{-49_999_999, 0}, {150_000_000, 2}, {0, 0},
	} {
		if got := c.d.Round(); got != c.want {
			t.Errorf("%s.Round() = %d, want %d", c.d, got, c.want)
		}
	}
	if d, ok := FromInt(-3); !ok || d != -300_000_000 {
		t.Errorf("FromInt(-3) = %d, %v", d, ok)
	}
	if _, ok := FromInt(92233720369); ok {
		t.Error("FromInt(92233720369) fits")
	}
	if d, ok := FromCount(125, 3); !ok || d != 12_500_000 || d.Count(3) != 125 || d.Count(8) != 12_500_000 || d.Places() != 3 {
		t.Errorf("FromCount(125, 3) = %d, %v (count %d, places %d)", d, ok, d.Count(3), d.Places())
	}
	if _, ok := FromCount(math.MaxInt64/10+1, 7); ok {
		t.Error("FromCount beyond the range fits")
	}
	for _, c := range []struct {
		d      Decimal
		digits int
		fits   bool
	}{
		{99_999_999_999, 3, true}, {100_000_000_000, 3, false}, {-100_000_000_000, 3, false},
		{99_999_999, 0, true}, {100_000_000, 0, false}, {1, -1, true}, {10_000_000, -1, false}, {1, -8, false}, {0, -8, true},
		{math.MaxInt64, 11, true}, {math.MaxInt64, 10, false},
	} {
		if got := c.d.FitsDigits(c.digits); got != c.fits {
			t.Errorf("%s.FitsDigits(%d) = %v", c.d, c.digits, got)
		}
	}
}
