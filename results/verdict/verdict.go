// Package verdict judges whether one build is better or worse than another from repeated
// measurements of a metric on both: the p-value of a rank test, a confidence interval for the
// ratio B/A, and a verdict (better, worse, same, inconclusive) against a minimum effect that
// matters. It is pure: numbers in, numbers out, no reports, no I/O. `baseline ab` and
// `baseline compare` (of repeated reports) share it, so both say the same thing about the same
// numbers.
//
// The method (Method says it in one line for outputs):
//
//   - p-value: the two-sided Mann-Whitney U test of golang.org/x/perf/benchmath
//     (AssumeNothing.Compare, the test benchstat uses): exact, ties included, up to 25 runs a
//     side; a normal approximation beyond.
//   - ratio and interval: the Hodges-Lehmann estimate of the shift between log(B) and log(A),
//     the median of the n·m pairwise differences log(b_j) − log(a_i), with its distribution-free
//     (Moses) confidence interval: the k-th smallest and k-th largest of those differences,
//     where k−1 is the largest U with P(U ≤ k−1) ≤ α/2 under the exact null distribution of the
//     Mann-Whitney statistic (stats.UDist of github.com/aclements/go-moremath, benchmath's own
//     implementation of it). Exponentiated, they are the estimate and interval of the ratio
//     B/A. The interval is the set of scale changes the same U test would not reject, so it
//     excludes 1 exactly when the test (without ties) rejects at α; it assumes only that B is
//     A scaled by a factor (a shift of logs), not normality. It is what R's
//     wilcox.test(log(b), log(a), conf.int = TRUE) gives. With 4 runs a side the 95% interval
//     is the range of the 16 pairwise ratios (coverage 97.1%); below 4 no finite 95% interval
//     exists, which is why MinRuns is 4.
//   - A metric with a value ≤ 0 (a count of lock waiters that is often 0) has no log: the same
//     estimator and interval are taken on the differences b_j − a_i, and stated relative to A's
//     median when that is positive.
//   - verdict, with e the minimum effect (default 5%) and the bounds 1/(1+e) and 1+e (so that
//     swapping A and B mirrors the verdict): worse when the whole interval lies beyond the
//     bound in the bad direction and p < α; better likewise in the good direction; same when
//     the whole interval lies within the bounds; inconclusive otherwise.
//
// No early stopping: the caller fixes the number of runs before it starts. Judging an interim
// result is fine for showing progress, never for deciding when to stop.
package verdict

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Direction says which way a metric improves.
type Direction int

const (
	// HigherIsBetter: throughput.
	HigherIsBetter Direction = 1
	// LowerIsBetter: latency, cost per request, lock waiters.
	LowerIsBetter Direction = -1
)

// Verdict is the judgement on one metric.
type Verdict string

const (
	Better       Verdict = "better"
	Worse        Verdict = "worse"
	Same         Verdict = "same"
	Inconclusive Verdict = "inconclusive"
)

const (
	// MinRuns is the fewest runs a side for which a finite 95% interval exists.
	MinRuns = 4
	// DefaultMinEffect is the smallest change that matters unless told otherwise.
	DefaultMinEffect = 0.05
	// Confidence of the interval; Alpha = 1 − Confidence is the test's level.
	Confidence = 0.95
	Alpha      = 1 - Confidence
	// MaxRunsToSettle caps the projection of RunsToSettle.
	MaxRunsToSettle = 200
)

// Method says in one line how Judge decides; outputs print it beside the verdicts.
const Method = "Mann-Whitney U test (two-sided; golang.org/x/perf/benchmath) for p; ratio B/A = Hodges-Lehmann estimate on log values " +
	"with its distribution-free 95% interval (Moses, from the exact U distribution); worse/better only when the whole interval lies beyond " +
	"±min-effect and p < 0.05, same when it lies within ±min-effect, inconclusive otherwise; fixed number of runs, no early stop"

// Scales of a Result.
const (
	// ScaleLog: the ratio and its interval come from log values (every value > 0).
	ScaleLog = "log"
	// ScaleDifference: some value is ≤ 0; the interval is of b − a, stated relative to A's median.
	ScaleDifference = "difference"
)

// Result is the judgement of one metric from runs of A and B.
type Result struct {
	NA      int     `json:"n_a"`
	NB      int     `json:"n_b"`
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// Ratio is the estimate of B/A and [Lo, Hi] its interval; they are meaningful only when
	// HasRatio (a ScaleDifference result whose A median is 0 has none), the interval only when
	// Bounded (it is 0–0 otherwise).
	Ratio    float64 `json:"ratio"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	HasRatio bool    `json:"has_ratio"`
	// Bounded is false when the interval is unbounded (fewer than MinRuns on a side).
	Bounded bool `json:"bounded"`
	// DiffLo and DiffHi bound b − a on ScaleDifference.
	DiffLo float64 `json:"diff_lo,omitempty"`
	DiffHi float64 `json:"diff_hi,omitempty"`
	Scale  string  `json:"scale"`
	// Coverage is the interval's actual confidence (≥ Confidence; the U distribution is discrete).
	Coverage float64 `json:"coverage"`
	// P is the Mann-Whitney test's two-sided p-value.
	P       float64 `json:"p"`
	Verdict Verdict `json:"verdict"`
	// RunsToSettle, for an inconclusive verdict, is how many runs a side would likely settle it
	// (the interval's width shrinking as 1/√n around the same estimate); -1 when that is beyond
	// MaxRunsToSettle; 0 when settled.
	RunsToSettle int `json:"runs_to_settle"`
	// Notes are benchmath's warnings and the method's caveats for this metric.
	Notes []string `json:"notes,omitempty"`
}

// Judge compares the runs b of B with the runs a of A for a metric that improves in
// direction dir, with minEffect the smallest relative change that matters (0.05 is 5%).
func Judge(a, b []float64, dir Direction, minEffect float64) Result {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	r := Result{NA: len(a), NB: len(b), MedianA: median(a), MedianB: median(b), Verdict: Inconclusive}
	if len(a) == 0 || len(b) == 0 {
		r.Notes = append(r.Notes, "no runs on a side")
		r.RunsToSettle = MinRuns
		return r
	}
	r.P = pValue(a, b, &r)
	k, coverage := mosesOrder(len(a), len(b), Alpha)
	r.Coverage = coverage
	r.Bounded = k > 0
	if !r.Bounded {
		r.Notes = append(r.Notes, fmt.Sprintf("no finite %g%% interval below %d runs a side", Confidence*100, MinRuns))
	}
	bound := math.Log1p(minEffect) // on the log scale, ±bound is 1/(1+e) .. 1+e
	var est, lo, hi float64        // the shift and its interval, on the log scale (or relative)
	if positive(a) && positive(b) {
		r.Scale = ScaleLog
		est, lo, hi = shiftInterval(a, b, k, math.Log)
		r.HasRatio = true
		r.Ratio, r.Lo, r.Hi = math.Exp(est), math.Exp(lo), math.Exp(hi)
	} else {
		r.Scale = ScaleDifference
		dEst, dLo, dHi := shiftInterval(a, b, k, func(v float64) float64 { return v })
		r.DiffLo, r.DiffHi = dLo, dHi
		switch {
		case allZero(a) && allZero(b):
			r.HasRatio, r.Ratio, r.Lo, r.Hi = true, 1, 1, 1
		case r.MedianA > 0:
			r.HasRatio = true
			r.Ratio, r.Lo, r.Hi = 1+dEst/r.MedianA, 1+dLo/r.MedianA, 1+dHi/r.MedianA
		default:
			r.Notes = append(r.Notes, "A's median is 0: no ratio; judged on the difference b − a")
		}
		// Relative to A's median, on a log-like scale so that the bounds below read the same.
		est, lo, hi = relLog(r.Ratio, r.HasRatio, dEst), relLog(r.Lo, r.HasRatio, dLo), relLog(r.Hi, r.HasRatio, dHi)
	}
	if !r.Bounded {
		lo, hi = math.Inf(-1), math.Inf(1)
		r.Lo, r.Hi, r.DiffLo, r.DiffHi = 0, 0, 0, 0 // JSON has no infinity; Bounded says it
	}
	up, down := lo > bound, hi < -bound // wholly above 1+e, wholly below 1/(1+e)
	improved := dir == HigherIsBetter && up || dir == LowerIsBetter && down
	regressed := dir == HigherIsBetter && down || dir == LowerIsBetter && up
	significant := r.P < Alpha
	switch {
	case regressed && significant:
		r.Verdict = Worse
	case improved && significant:
		r.Verdict = Better
	case lo >= -bound && hi <= bound:
		r.Verdict = Same
	}
	if r.Verdict == Inconclusive {
		r.RunsToSettle = runsToSettle(est, lo, hi, bound, min(len(a), len(b)))
	}
	return r
}

// relLog maps a ratio onto the log scale the bounds use; without a ratio (A's median 0) a
// positive difference counts as an infinite rise, a negative one as an infinite fall.
func relLog(ratio float64, hasRatio bool, diff float64) float64 {
	if hasRatio {
		if ratio <= 0 {
			return math.Inf(-1)
		}
		return math.Log(ratio)
	}
	switch {
	case diff > 0:
		return math.Inf(1)
	case diff < 0:
		return math.Inf(-1)
	}
	return 0
}

// pValue is benchmath's Mann-Whitney U test of a against b; its warnings become notes.
func pValue(a, b []float64, r *Result) float64 {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = Alpha
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &th), benchmath.NewSample(b, &th))
	if allEqual(a, b) { // benchmath warns that the test is meaningless: nothing differs
		return c.P
	}
	for _, w := range c.Warnings {
		r.Notes = append(r.Notes, w.Error())
	}
	return c.P
}

// mosesOrder is k of the Moses interval for sample sizes n and m at level alpha: the
// interval runs from the k-th smallest to the k-th largest of the n·m pairwise differences.
// k−1 is the largest u with P(U ≤ u) ≤ alpha/2 under the exact null distribution of U (no
// ties), so the interval's coverage is 1 − 2·P(U ≤ k−1). k is 0 when no u qualifies (too few
// runs: the interval is unbounded). Beyond 50 a side the normal approximation with continuity
// correction gives k.
func mosesOrder(n, m int, alpha float64) (k int, coverage float64) {
	key := orderKey{n, m, alpha}
	if v, ok := orders.Load(key); ok {
		o := v.(order)
		return o.k, o.coverage
	}
	k, coverage = computeMosesOrder(n, m, alpha)
	orders.Store(key, order{k, coverage})
	return k, coverage
}

type orderKey struct {
	n, m  int
	alpha float64
}

type order struct {
	k        int
	coverage float64
}

// orders caches mosesOrder: the exact U distribution costs O(n²m²) to compute.
var orders sync.Map

func computeMosesOrder(n, m int, alpha float64) (k int, coverage float64) {
	nm := n * m
	if n > 50 || m > 50 {
		z := stats.StdNormal.InvCDF(1 - alpha/2)
		k = int(math.Floor(float64(nm)/2 - z*math.Sqrt(float64(nm*(n+m+1))/12) + 0.5))
		return max(k, 0), 1 - alpha
	}
	dist := stats.UDist{N1: n, N2: m}
	cdf := 0.0
	for u := 0; u < nm/2; u++ {
		c := dist.CDF(float64(u))
		if c > alpha/2 {
			break
		}
		k, cdf = u+1, c
	}
	if k == 0 {
		return 0, 1
	}
	return k, 1 - 2*cdf
}

// shiftInterval is the Hodges-Lehmann estimate of the shift from a to b after transform f
// (the median of the pairwise differences f(b_j) − f(a_i)) and the k-th smallest and k-th
// largest of those differences (infinite when k is 0).
func shiftInterval(a, b []float64, k int, f func(float64) float64) (est, lo, hi float64) {
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, f(y)-f(x))
		}
	}
	slices.Sort(d)
	est = median(d)
	if k == 0 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, d[k-1], d[len(d)-k]
}

// runsToSettle projects how many runs a side would likely turn an inconclusive interval into a
// verdict, assuming the estimate stays where it is and the interval narrows as 1/√n: to lie
// wholly beyond the bound on the estimate's side (when the estimate is beyond it), or wholly
// within ±bound (when it is within).
func runsToSettle(est, lo, hi, bound float64, n int) int {
	if n < MinRuns || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return MinRuns
	}
	var have, need float64
	switch {
	case est > bound:
		have, need = est-lo, est-bound
	case est < -bound:
		have, need = hi-est, -bound-est
	default:
		have, need = max(hi-est, est-lo), bound-math.Abs(est)
	}
	if need <= 0 {
		return -1
	}
	runs := math.Ceil(float64(n) * (have / need) * (have / need))
	if runs > MaxRunsToSettle || math.IsNaN(runs) {
		return -1
	}
	return max(int(runs), n+1)
}

func median(s []float64) float64 {
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func positive(s []float64) bool {
	for _, v := range s {
		if !(v > 0) {
			return false
		}
	}
	return true
}

func allZero(s []float64) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

func allEqual(a, b []float64) bool {
	v := a[0]
	for _, s := range [][]float64{a, b} {
		for _, x := range s {
			if x != v {
				return false
			}
		}
	}
	return true
}
