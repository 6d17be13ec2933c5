package keydist

import (
	"math"
	"testing"

	"github.com/aclements/go-moremath/mathx"
)

// significance is the p-value below which a goodness-of-fit test fails. The draws come from
// fixed seeds, so a run is reproducible; at this level a correct sampler fails on one seed in
// a million, while the wrong samplers of these tests fall far below it.
const significance = 1e-6

// chiSquaredPValue is the probability that a correct sampler gives a chi-squared statistic at
// least this large, for observed counts against expected ones (len-1 degrees of freedom).
func chiSquaredPValue(observed, expected []float64) float64 {
	p, _ := chiSquaredTest(observed, expected)
	return p
}

// chiSquaredTest is chiSquaredPValue with the statistic itself.
func chiSquaredTest(observed, expected []float64) (p, stat float64) {
	stat = chiSquared(observed, expected)
	return mathx.GammaIncComp(float64(len(observed)-1)/2, stat/2), stat
}

func chiSquared(observed, expected []float64) float64 {
	stat := 0.0
	for i := range observed {
		d := observed[i] - expected[i]
		stat += d * d / expected[i]
	}
	return stat
}

// zipfBuckets are the buckets of a zipfian goodness-of-fit test over [1, n]: the top 20 ranks
// one by one, where an approximation like Gray's or an off-by-one shows, then decades of
// ranks, then the tail.
func zipfBuckets(n int64) [][2]int64 {
	var b [][2]int64
	for k := int64(1); k <= 20 && k <= n; k++ {
		b = append(b, [2]int64{k, k})
	}
	for lo, hi := int64(21), int64(100); lo <= n; lo, hi = hi+1, hi*10 {
		b = append(b, [2]int64{lo, min(hi, n)})
	}
	return b
}

// zipfFit draws draws ranks with draw and returns the p-value of their fit to the exact
// zipfian law over [1, n] with exponent s, the normaliser summed rank by rank, and the
// chi-squared statistic.
func zipfFit(t *testing.T, n int64, s float64, draws int, draw func(*Stream) int64) (p, stat float64) {
	t.Helper()
	weights := make([]float64, n+1)
	norm := 0.0
	for k := n; k >= 1; k-- {
		weights[k] = math.Pow(float64(k), -s)
		norm += weights[k]
	}
	buckets := zipfBuckets(n)
	expected := make([]float64, len(buckets))
	for i, b := range buckets {
		for k := b[0]; k <= b[1]; k++ {
			expected[i] += weights[k] / norm * float64(draws)
		}
	}
	index := make([]int, n+1)
	for i, b := range buckets {
		for k := b[0]; k <= b[1]; k++ {
			index[k] = i
		}
	}
	observed := make([]float64, len(buckets))
	st := NewStream(20260101, int64(s*1000))
	for i := 0; i < draws; i++ {
		k := draw(&st)
		if k < 1 || k > n {
			t.Fatalf("draw %d: rank %d outside [1, %d]", i, k, n)
		}
		observed[index[k]]++
	}
	observed, expected = mergeSparse(observed, expected)
	return chiSquaredTest(observed, expected)
}

// mergeSparse merges the buckets at either end into their neighbours while they expect fewer
// than 5 draws, below which the chi-squared approximation does not hold.
func mergeSparse(observed, expected []float64) ([]float64, []float64) {
	for n := len(expected); n > 1 && expected[n-1] < 5; n-- {
		observed[n-2] += observed[n-1]
		expected[n-2] += expected[n-1]
		observed, expected = observed[:n-1], expected[:n-1]
	}
	for len(expected) > 1 && expected[0] < 5 {
		observed[1] += observed[0]
		expected[1] += expected[0]
		observed, expected = observed[1:], expected[1:]
	}
	return observed, expected
}

func TestZipfMatchesTheExactLaw(t *testing.T) {
	const n = 10000
	draws := 2_000_000
	if testing.Short() {
		draws = 500_000
	}
	for _, s := range []float64{0.99, 1.2, 0.5, 1.0, 0.01, 3} {
		z, err := NewZipf(n, s)
		if err != nil {
			t.Fatal(err)
		}
		p, stat := zipfFit(t, n, s, draws, z.Draw)
		if p < significance {
			t.Errorf("random_zipfian(1, %d, %g), %d draws: chi-squared %.1f, p = %.3g against the exact law", n, s, draws, stat, p)
		}
		t.Logf("random_zipfian(1, %d, %g), %d draws: chi-squared %.1f, p = %.3g", n, s, draws, stat, p)
	}
}

// The fit test has power: samplers that are slightly wrong fail it.
func TestZipfFitRejectsWrongSamplers(t *testing.T) {
	const n, s = 10000, 0.99
	const draws = 1_000_000
	steeper, err := NewZipf(n, s+0.05)
	if err != nil {
		t.Fatal(err)
	}
	right, err := NewZipf(n, s)
	if err != nil {
		t.Fatal(err)
	}
	gray := newGrayZipf(n, s)
	for name, draw := range map[string]func(*Stream) int64{
		"exponent s+0.05":                         steeper.Draw,
		"Gray's approximation (YCSB's generator)": gray.draw,
		"off by one (rank 1 never drawn)": func(st *Stream) int64 {
			k := right.Draw(st) + 1
			return min(k, n)
		},
	} {
		p, stat := zipfFit(t, n, s, draws, draw)
		if p >= significance {
			t.Errorf("%s passed the fit to zipfian(%d, %g): chi-squared %.1f, p = %.3g", name, n, s, stat, p)
		}
		t.Logf("%s against zipfian(%d, %g), %d draws: chi-squared %.1f, p = %.3g", name, n, s, draws, stat, p)
	}
}

// grayZipf is the approximate zipfian of Gray et al., "Quickly generating billion-record
// synthetic databases" (1994), as YCSB draws it: exact for ranks 1 and 2, a continuous
// approximation beyond.
type grayZipf struct {
	n                  int64
	theta, alpha, zeta float64
	eta                float64
}

func newGrayZipf(n int64, theta float64) grayZipf {
	zeta := 0.0
	for k := n; k >= 1; k-- {
		zeta += math.Pow(float64(k), -theta)
	}
	zeta2 := 1 + math.Pow(2, -theta)
	return grayZipf{n: n, theta: theta, alpha: 1 / (1 - theta), zeta: zeta,
		eta: (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zeta)}
}

func (g grayZipf) draw(st *Stream) int64 {
	u := st.Float64()
	uz := u * g.zeta
	if uz < 1 {
		return 1
	}
	if uz < 1+math.Pow(0.5, g.theta) {
		return 2
	}
	k := 1 + int64(float64(g.n)*math.Pow(g.eta*u-g.eta+1, g.alpha))
	return min(k, g.n)
}

// The quick acceptance (the squeeze) is only valid if, for every rank k ≥ 2, the inverse
// within squeeze below k lies in k's accepted part; checked over the ranks whose weight k^-s
// float64 can still tell apart from H (beyond, a rank's probability is below 1e-12 and the
// exact test itself is rounding), with a tolerance for the rounding of H and its inverse at k.
func TestZipfSqueezeNeverAcceptsOutsideTheExactRegion(t *testing.T) {
	for _, s := range []float64{0.001, 0.01, 0.5, 0.99, 0.999999, 1, 1.000001, 1.2, 2, 10, 100, 1000} {
		z, err := NewZipf(1<<40, s)
		if err != nil {
			t.Fatal(err)
		}
		for k := 2.0; k < 1<<40 && z.h(k) > 1e-10; k = math.Max(k+1, k*1.01) {
			lowestAccepted := z.hIntegralInverse(z.hIntegral(k+0.5) - z.h(k))
			if k-lowestAccepted < z.squeeze-1e-6-1e-14*k {
				t.Fatalf("s %g rank %g: accepted part starts %g below the rank, squeeze %g", s, k, k-lowestAccepted, z.squeeze)
			}
		}
	}
}

func TestZipfNormalizerAgreesWithTheSum(t *testing.T) {
	for _, s := range []float64{0.5, 0.99, 1, 1.2} {
		const n = 1_000_000
		sum := 0.0
		for k := n; k >= 1; k-- {
			sum += math.Pow(float64(k), -s)
		}
		if got := zipfNormalizer(n, s); math.Abs(got-sum) > 1e-12*sum {
			t.Errorf("zipfNormalizer(%d, %g) = %.17g, summed %.17g", n, s, got, sum)
		}
	}
}

func TestNewZipfRefusesBadParameters(t *testing.T) {
	for _, c := range []struct {
		n int64
		s float64
	}{{0, 1}, {10, 0}, {10, -1}, {10, 1000.5}, {10, math.NaN()}, {10, math.Inf(1)}} {
		if _, err := NewZipf(c.n, c.s); err == nil {
			t.Errorf("NewZipf(%d, %g) accepted", c.n, c.s)
		}
	}
	z, err := NewZipf(1, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStream(1, 1)
	if k := z.Draw(&st); k != 1 {
		t.Errorf("zipfian over one rank drew %d", k)
	}
}

// exponentialLaw is pgbench's law for random_exponential over n values: f(i) - f(i+1).
func exponentialLaw(n int, parameter float64) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = (math.Exp(-parameter*float64(i)/float64(n)) - math.Exp(-parameter*float64(i+1)/float64(n))) / (1 - math.Exp(-parameter))
	}
	return p
}

// gaussianLaw is pgbench's law for random_gaussian over n values: f(i+0.5) - f(i-0.5).
func gaussianLaw(n int, parameter float64) []float64 {
	phi := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	mu := float64(n-1) / 2
	f := func(x float64) float64 { return phi(2*parameter*(x-mu)/float64(n)) / (2*phi(parameter) - 1) }
	p := make([]float64, n)
	for i := range p {
		p[i] = f(float64(i)+0.5) - f(float64(i)-0.5)
	}
	return p
}

// lawFit draws draws values in [0, n) and returns the p-value of their fit to law.
func lawFit(t *testing.T, law []float64, draws int, draw func(*Stream) (int64, error)) float64 {
	t.Helper()
	observed := make([]float64, len(law))
	expected := make([]float64, len(law))
	for i, p := range law {
		expected[i] = p * float64(draws)
	}
	st := NewStream(77, int64(len(law)))
	for i := 0; i < draws; i++ {
		v, err := draw(&st)
		if err != nil {
			t.Fatal(err)
		}
		if v < 0 || v >= int64(len(law)) {
			t.Fatalf("draw %d: %d outside [0, %d)", i, v, len(law))
		}
		observed[v]++
	}
	return chiSquaredPValue(mergeSparse(observed, expected))
}

func TestExponentialMatchesPgbenchsLaw(t *testing.T) {
	const n, draws = 100, 1_000_000
	for _, parameter := range []float64{0.5, 5, 20} {
		if p := lawFit(t, exponentialLaw(n, parameter), draws, func(st *Stream) (int64, error) {
			return st.Exponential(0, n-1, parameter)
		}); p < significance {
			t.Errorf("random_exponential(0, %d, %g): p = %.3g", n-1, parameter, p)
		}
	}
	// Power: a parameter 5% off fails.
	if p := lawFit(t, exponentialLaw(n, 5), draws, func(st *Stream) (int64, error) {
		return st.Exponential(0, n-1, 5*1.05)
	}); p >= significance {
		t.Errorf("random_exponential with parameter 5.25 passed the fit to 5: p = %.3g", p)
	}
}

func TestGaussianMatchesPgbenchsLaw(t *testing.T) {
	const n, draws = 100, 1_000_000
	for _, parameter := range []float64{2, 2.5, 5} {
		if p := lawFit(t, gaussianLaw(n, parameter), draws, func(st *Stream) (int64, error) {
			return st.Gaussian(0, n-1, parameter)
		}); p < significance {
			t.Errorf("random_gaussian(0, %d, %g): p = %.3g", n-1, parameter, p)
		}
	}
	if p := lawFit(t, gaussianLaw(n, 2.5), draws, func(st *Stream) (int64, error) {
		return st.Gaussian(0, n-1, 2.5*1.05)
	}); p >= significance {
		t.Errorf("random_gaussian with parameter 2.625 passed the fit to 2.5: p = %.3g", p)
	}
}

func TestUniformCoversTheRangeEvenly(t *testing.T) {
	const lb, ub, draws = -3, 6, 500_000
	law := make([]float64, ub-lb+1)
	for i := range law {
		law[i] = 1 / float64(len(law))
	}
	if p := lawFit(t, law, draws, func(st *Stream) (int64, error) {
		v, err := st.Uniform(lb, ub)
		return v - lb, err
	}); p < significance {
		t.Errorf("random(%d, %d): p = %.3g", lb, ub, p)
	}
}

func TestRangesAndParametersAreChecked(t *testing.T) {
	st := NewStream(1, 1)
	for name, call := range map[string]func() (int64, error){
		"empty range":                func() (int64, error) { return st.Uniform(5, 4) },
		"range too large":            func() (int64, error) { return st.Uniform(math.MinInt64, math.MaxInt64) },
		"range too large by one":     func() (int64, error) { return st.Uniform(0, math.MaxInt64) },
		"exponential parameter 0":    func() (int64, error) { return st.Exponential(1, 10, 0) },
		"exponential parameter NaN":  func() (int64, error) { return st.Exponential(1, 10, math.NaN()) },
		"gaussian parameter below 2": func() (int64, error) { return st.Gaussian(1, 10, 1.99) },
	} {
		if v, err := call(); err == nil {
			t.Errorf("%s: drew %d, want an error", name, v)
		}
	}
	if _, err := st.Uniform(0, math.MaxInt64-1); err != nil {
		t.Errorf("random over the widest allowed range: %v", err)
	}
	if v, err := st.Uniform(7, 7); err != nil || v != 7 {
		t.Errorf("random(7, 7) = %d, %v", v, err)
	}
}
