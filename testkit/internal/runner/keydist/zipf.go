package keydist

import (
	"fmt"
	"math"
)

// Zipf draws ranks k in [1, n] with probability exactly proportional to 1/k^s, for any s > 0,
// by rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate variates
// from monotone discrete distributions", 1996): a draw inverts the integral H of the hat
// x^-s at a uniform point and keeps the nearest rank k when the point falls inside the part of
// k's interval whose area is exactly k^-s, so the accepted ranks follow the law itself, not an
// approximation of it. A draw costs a few transcendental functions and is accepted at the first
// try most of the time, whatever n; building a Zipf is O(1) too. A Zipf is immutable and safe
// for concurrent use.
type Zipf struct {
	n int64
	s float64
	// hIntegralX1 is H(1.5) - 1: the lower end of the uniform range, one unit (1^-s) below
	// H(1.5), so that rank 1 gets its exact weight.
	hIntegralX1 float64
	// hIntegralN is H(n + 0.5), the upper end.
	hIntegralN float64
	// squeeze is the distance below a rank within which the inverse always lands in the
	// accepted part, which spares computing H for most draws.
	squeeze float64
}

// NewZipf prepares draws over [1, n] with exponent s, 0 < s ≤ MaxZipfianParameter.
func NewZipf(n int64, s float64) (*Zipf, error) {
	if n < 1 {
		return nil, fmt.Errorf("zipfian range needs at least one value (not %d)", n)
	}
	if !(s > 0 && s <= MaxZipfianParameter) {
		return nil, fmt.Errorf("zipfian parameter must be greater than 0 and at most %g (not %g)", MaxZipfianParameter, s)
	}
	z := &Zipf{n: n, s: s}
	z.hIntegralX1 = z.hIntegral(1.5) - 1
	z.hIntegralN = z.hIntegral(float64(n) + 0.5)
	z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// N is the number of ranks.
func (z *Zipf) N() int64 { return z.n }

// S is the exponent.
func (z *Zipf) S() float64 { return z.s }

// Draw draws a rank in [1, n].
func (z *Zipf) Draw(st *Stream) int64 {
	if z.n == 1 {
		return 1
	}
	for {
		u := z.hIntegralN + st.Float64()*(z.hIntegralX1-z.hIntegralN)
		x := z.hIntegralInverse(u)
		k := int64(x + 0.5)
		// Rounding can push the inverse just past either end.
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		// Rank 1 always passes the second test: u ≥ H(1.5) - 1 by construction.
		if float64(k)-x <= z.squeeze || u >= z.hIntegral(float64(k)+0.5)-z.h(float64(k)) {
			return k
		}
	}
}

// h is the hat, x^-s.
func (z *Zipf) h(x float64) float64 {
	return math.Exp(-z.s * math.Log(x))
}

// hIntegral is H(x) = (x^(1-s) - 1)/(1-s), log x at s = 1, written so that it stays exact as
// s approaches 1.
func (z *Zipf) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Ratio((1-z.s)*logX) * logX
}

// hIntegralInverse inverts hIntegral.
func (z *Zipf) hIntegralInverse(y float64) float64 {
	t := y * (1 - z.s)
	if t < -1 {
		// Only rounding gets here (the smallest y is above -1 for every s > 0).
		t = -1
	}
	return math.Exp(log1pRatio(t) * y)
}

// log1pRatio is log(1+t)/t, continued to 1 at t = 0.
func log1pRatio(t float64) float64 {
	if math.Abs(t) > 1e-8 {
		return math.Log1p(t) / t
	}
	return 1 - t*(0.5-t*(1.0/3-t*0.25))
}

// expm1Ratio is (exp(t)-1)/t, continued to 1 at t = 0.
func expm1Ratio(t float64) float64 {
	if math.Abs(t) > 1e-8 {
		return math.Expm1(t) / t
	}
	return 1 + t*(0.5+t*(1.0/6+t/24))
}

// zipfNormalizer is the generalized harmonic number sum_{k=1..n} k^-s: summed term by term for
// the first ranks, and beyond them by the Euler-Maclaurin formula, whose error at that point
// is far below float64's resolution.
func zipfNormalizer(n int64, s float64) float64 {
	const exact = 1 << 16
	sum := 0.0
	m := n
	if m > exact {
		m = exact
	}
	// Smallest terms first, for accuracy.
	for k := m; k >= 1; k-- {
		sum += math.Pow(float64(k), -s)
	}
	if n <= exact {
		return sum
	}
	// sum_{k=m+1..n} f(k) = ∫_m^n f + (f(n) - f(m))/2 + (f'(n) - f'(m))/12 - (f'''(n) - f'''(m))/720
	a, b := float64(m), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -s) }
	d1 := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	d3 := func(x float64) float64 { return -s * (s + 1) * (s + 2) * math.Pow(x, -s-3) }
	var integral float64
	if s == 1 {
		integral = math.Log(b / a)
	} else {
		integral = (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
	}
	return sum + integral + (f(b)-f(a))/2 + (d1(b)-d1(a))/12 - (d3(b)-d3(a))/720
}
