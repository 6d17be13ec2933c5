package keydist

import (
	"fmt"
	"math"
)

// MinGaussianParameter is the smallest Gaussian parameter pgbench accepts: below it the
// truncated normal would be redrawn too often.
const MinGaussianParameter = 2.0

// MaxZipfianParameter is the largest zipfian exponent pgbench accepts.
const MaxZipfianParameter = 1000.0

// span returns the number of integers in [lb, ub].
func span(lb, ub int64) (uint64, error) {
	if lb > ub {
		return 0, fmt.Errorf("empty range [%d, %d]", lb, ub)
	}
	width := ub - lb
	if width < 0 || width == math.MaxInt64 {
		return 0, fmt.Errorf("range [%d, %d] is too large", lb, ub)
	}
	return uint64(width) + 1, nil
}

// Uniform draws an integer in [lb, ub], every one with the same probability (pgbench's
// random).
func (s *Stream) Uniform(lb, ub int64) (int64, error) {
	n, err := span(lb, ub)
	if err != nil {
		return 0, err
	}
	return lb + int64(s.Uint64n(n)), nil
}

// Exponential draws an integer in [lb, ub] as pgbench's random_exponential does: value i with
// probability f(i) - f(i+1), f(x) = exp(-parameter·(x-lb)/n) / (1 - exp(-parameter)), n the
// width of the range. parameter must be above 0; the larger, the more the draws crowd at lb.
func (s *Stream) Exponential(lb, ub int64, parameter float64) (int64, error) {
	n, err := span(lb, ub)
	if err != nil {
		return 0, err
	}
	if !(parameter > 0) || math.IsInf(parameter, 1) {
		return 0, fmt.Errorf("exponential parameter must be greater than 0 (not %g)", parameter)
	}
	cut := math.Exp(-parameter)
	uniform := 1 - s.Float64() // (0, 1]
	fraction := -math.Log(cut+(1-cut)*uniform) / parameter
	return lb + scaleIndex(n, fraction), nil
}

// Gaussian draws an integer in [lb, ub] as pgbench's random_gaussian does: a standard normal
// truncated to [-parameter, parameter) mapped onto the range, so value i has probability
// f(i+0.5) - f(i-0.5), f(x) = PHI(2·parameter·(x-mu)/n) / (2·PHI(parameter) - 1), mu the
// middle of the range. parameter must be at least MinGaussianParameter.
func (s *Stream) Gaussian(lb, ub int64, parameter float64) (int64, error) {
	n, err := span(lb, ub)
	if err != nil {
		return 0, err
	}
	if !(parameter >= MinGaussianParameter) || math.IsInf(parameter, 1) {
		return 0, fmt.Errorf("gaussian parameter must be at least %g (not %g)", MinGaussianParameter, parameter)
	}
	var z float64
	for {
		// Box-Muller, one output per pair as pgbench: both uniforms in (0, 1].
		u1 := 1 - s.Float64()
		u2 := 1 - s.Float64()
		z = math.Sqrt(-2*math.Log(u1)) * math.Sin(2*math.Pi*u2)
		if z >= -parameter && z < parameter {
			break
		}
	}
	return lb + scaleIndex(n, (z+parameter)/(2*parameter)), nil
}

// scaleIndex maps fraction in [0, 1) onto [0, n), guarding against a product that rounds up
// to n.
func scaleIndex(n uint64, fraction float64) int64 {
	i := uint64(float64(n) * fraction)
	if i >= n {
		i = n - 1
	}
	return int64(i)
}
