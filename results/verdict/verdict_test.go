package verdict

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The order k−1 of the Moses interval is the two-sided 5% critical value of the Mann-Whitney U
// statistic (reject when U ≤ it), as the published tables print it and as R computes it:
// max(u[pwilcox(u, n, m) <= 0.025]).
func TestMosesOrderMatchesCriticalValueTable(t *testing.T) {
	table := map[[2]int]int{
		{4, 4}: 0, {5, 5}: 2, {6, 6}: 5, {7, 7}: 8, {8, 8}: 13, {9, 9}: 17, {10, 10}: 23,
		{12, 12}: 37, {4, 8}: 4, {5, 7}: 5, {6, 10}: 11, {8, 12}: 22,
	}
	for nm, crit := range table {
		k, coverage := mosesOrder(nm[0], nm[1], Alpha)
		if k-1 != crit {
			t.Errorf("n=%d m=%d: k−1 = %d, want the critical value %d", nm[0], nm[1], k-1, crit)
		}
		if coverage < Confidence || coverage >= 1 {
			t.Errorf("n=%d m=%d: coverage %g, want ≥ %g", nm[0], nm[1], coverage, Confidence)
		}
	}
	if k, _ := mosesOrder(3, 3, Alpha); k != 0 {
		t.Errorf("3 runs a side: k = %d, want 0 (no finite 95%% interval)", k)
	}
	if k, cov := mosesOrder(4, 4, Alpha); k != 1 || math.Abs(cov-(1-2.0/70)) > 1e-12 {
		t.Errorf("4 runs a side: k = %d, coverage %g; want 1 and 1 − 2/70 (the range of the 16 ratios)", k, cov)
	}
}

// Known data without ties: estimate, interval and p-value as R gives them for
// wilcox.test(log(b), log(a), conf.int = TRUE, exact = TRUE), exponentiated.
func TestJudgeMatchesR(t *testing.T) {
	for _, c := range []struct {
		name             string
		a, b             []float64
		ratio, lo, hi, p float64
		dir              Direction
		want             Verdict
	}{
		{"4 a side, doubled", []float64{100, 110, 120, 130}, []float64{200, 220, 240, 260},
			2, 1.538461538461538, 2.6, 0.02857142857142857, HigherIsBetter, Better},
		{"6 a side, 12% up", []float64{10.1, 9.7, 10.4, 9.9, 10.8, 10.0}, []float64{11.2, 10.9, 11.8, 10.6, 11.5, 12.1},
			1.1201851699, 1.0495049505, 1.1919191919, 0.0043290043, LowerIsBetter, Inconclusive}, // lo 1.0495 < 1.05
		{"8 a side, 7% down but the interval reaches 0.986", []float64{71.2, 68.4, 74.9, 70.3, 79.3, 67.0, 73.1, 69.8},
			[]float64{66.1, 63.0, 70.2, 61.7, 68.8, 64.9, 72.4, 65.5},
			0.9290848321, 0.8776671408, 0.9859550562, 0.0206682207, HigherIsBetter, Inconclusive},
		{"5 and 7, no change", []float64{812, 845, 790, 870, 801}, []float64{799, 823, 861, 777, 840, 808, 852},
			0.9975031211, 0.9459770115, 1.0603448276, 1, LowerIsBetter, Inconclusive},
		{"8 a side, 21% up", []float64{1836, 1710, 1920, 1655, 2010, 1788, 1744, 1902},
			[]float64{2230, 2105, 2390, 1980, 2460, 2150, 2075, 2301},
			1.2116133457, 1.1197916667, 1.3040935673, 0.0003108003, LowerIsBetter, Worse},
	} {
		r := Judge(c.a, c.b, c.dir, DefaultMinEffect)
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"ratio", r.Ratio, c.ratio}, {"lo", r.Lo, c.lo}, {"hi", r.Hi, c.hi}, {"p", r.P, c.p}} {
			if math.Abs(f.got-f.want) > 1e-8 {
				t.Errorf("%s: %s = %.10f, R says %.10f", c.name, f.name, f.got, f.want)
			}
		}
		if r.Verdict != c.want || r.Scale != ScaleLog || !r.HasRatio || !r.Bounded {
			t.Errorf("%s: %+v, want verdict %s on the log scale", c.name, r, c.want)
		}
		if (r.Verdict == Inconclusive) != (r.RunsToSettle != 0) {
			t.Errorf("%s: verdict %s with RunsToSettle %d", c.name, r.Verdict, r.RunsToSettle)
		}
	}
}

func TestJudgeVerdicts(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1}
	scaled := func(f float64) []float64 {
		out := make([]float64, len(base))
		for i, v := range base {
			out[i] = v * f
		}
		return out
	}
	for _, c := range []struct {
		name string
		a, b []float64
		dir  Direction
		want Verdict
	}{
		{"throughput 20% down", base, scaled(0.8), HigherIsBetter, Worse},
		{"throughput 20% up", base, scaled(1.2), HigherIsBetter, Better},
		{"latency 20% up", base, scaled(1.2), LowerIsBetter, Worse},
		{"latency 20% down", base, scaled(0.8), LowerIsBetter, Better},
		{"1% apart, tight", base, scaled(1.01), LowerIsBetter, Same},
		{"identical", base, base, HigherIsBetter, Same},
		{"3% up, tight: significant but smaller than the effect", base, scaled(1.03), LowerIsBetter, Same},
		{"3 runs a side", base[:3], scaled(1.5)[:3], LowerIsBetter, Inconclusive},
		{"constant equal (5 statements a request)", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, LowerIsBetter, Same},
		{"constant, 10× the statements", []float64{0.005, 0.005, 0.005, 0.005}, []float64{0.05, 0.05, 0.05, 0.05}, LowerIsBetter, Worse},
		{"waiters all 0", []float64{0, 0, 0, 0}, []float64{0, 0, 0, 0}, LowerIsBetter, Same},
		{"waiters 0 → 3", []float64{0, 0, 0, 0}, []float64{3, 3, 4, 3}, LowerIsBetter, Worse},
		{"waiters sometimes 1", []float64{0, 1, 0, 0, 1}, []float64{1, 0, 0, 1, 0}, LowerIsBetter, Inconclusive},
		{"waiters 63 vs 63 with a 0", []float64{63, 63, 63, 0}, []float64{63, 63, 63, 63}, LowerIsBetter, Inconclusive},
	} {
		r := Judge(c.a, c.b, c.dir, DefaultMinEffect)
		if r.Verdict != c.want {
			t.Errorf("%s: verdict %s, want %s (%+v)", c.name, r.Verdict, c.want, r)
		}
	}
}

// Swapping A and B mirrors the interval (1/hi, 1/lo) and the verdict.
func TestJudgeMirrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mirror := map[Verdict]Verdict{Better: Worse, Worse: Better, Same: Same, Inconclusive: Inconclusive}
	for i := 0; i < 200; i++ {
		a, b := lognormal(rng, 6, 1, 0.08), lognormal(rng, 7, 1+0.3*rng.Float64()-0.15, 0.08)
		ab, ba := Judge(a, b, HigherIsBetter, 0.05), Judge(b, a, HigherIsBetter, 0.05)
		if ba.Verdict != mirror[ab.Verdict] || math.Abs(ab.Lo*ba.Hi-1) > 1e-9 || math.Abs(ab.Hi*ba.Lo-1) > 1e-9 || math.Abs(ab.P-ba.P) > 1e-9 {
			t.Fatalf("A/B %+v does not mirror B/A %+v", ab, ba)
		}
	}
}

// On simulated log-normal runs (8 a side, 8% noise, a true ratio of 1.1) the 95% interval
// holds the true ratio in at least 94% of 2,000 draws (the exact coverage for 8 a side is
// 95.0%); A against A is called worse or better in about 5% of draws with no minimum effect
// (at most 6%: 2 standard errors above 5%) and in at most 1% with the default 5%.
func TestJudgeCoverageAndFalseVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const draws = 2000
	covered, falseCalls, falseCallsAtEffect := 0, 0, 0
	for i := 0; i < draws; i++ {
		a, b := lognormal(rng, 8, 1, 0.08), lognormal(rng, 8, 1.1, 0.08)
		if r := Judge(a, b, HigherIsBetter, 0.05); r.Lo <= 1.1 && 1.1 <= r.Hi {
			covered++
		}
		again := lognormal(rng, 8, 1, 0.08)
		if r := Judge(a, again, HigherIsBetter, 0); r.Verdict == Worse || r.Verdict == Better {
			falseCalls++
		}
		if r := Judge(a, again, HigherIsBetter, DefaultMinEffect); r.Verdict == Worse || r.Verdict == Better {
			falseCallsAtEffect++
		}
	}
	if share := float64(covered) / draws; share < 0.94 {
		t.Errorf("the interval held the true ratio in %.1f%% of draws, want ≥ 94%%", share*100)
	}
	if share := float64(falseCalls) / draws; share > 0.06 {
		t.Errorf("A against A (min effect 0) was called better or worse in %.1f%% of draws, want ≤ 6%%", share*100)
	}
	if share := float64(falseCallsAtEffect) / draws; share > 0.01 {
		t.Errorf("A against A (min effect 5%%) was called better or worse in %.1f%% of draws, want ≤ 1%%", share*100)
	}
}

// RunsToSettle is a projection that mostly comes true: where it says a verdict of 8 runs a
// side would settle within 24, drawing that many runs of the same distributions settles it in
// most draws.
func TestRunsToSettleProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tried, settled := 0, 0
	for i := 0; i < 300 && tried < 40; i++ {
		r := Judge(lognormal(rng, 8, 1, 0.06), lognormal(rng, 8, 1.12, 0.06), HigherIsBetter, 0.05)
		if r.Verdict != Inconclusive {
			continue
		}
		if r.RunsToSettle <= 8 && r.RunsToSettle != -1 {
			t.Fatalf("inconclusive at 8 runs but RunsToSettle %d", r.RunsToSettle)
		}
		if r.RunsToSettle < 0 || r.RunsToSettle > 24 {
			continue
		}
		tried++
		n := r.RunsToSettle
		if again := Judge(lognormal(rng, n, 1, 0.06), lognormal(rng, n, 1.12, 0.06), HigherIsBetter, 0.05); again.Verdict != Inconclusive {
			settled++
		}
	}
	if tried < 10 || float64(settled) < 0.5*float64(tried) {
		t.Errorf("the projection settled %d of %d verdicts, want most", settled, tried)
	}
}

func TestJudgeWithoutRuns(t *testing.T) {
	r := Judge(nil, []float64{1, 2, 3, 4}, HigherIsBetter, 0.05)
	if r.Verdict != Inconclusive || r.RunsToSettle != MinRuns {
		t.Errorf("no runs of A: %+v", r)
	}
}

func lognormal(rng *rand.Rand, n int, scale, sigma float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1000 * scale * math.Exp(sigma*rng.NormFloat64())
	}
	return out
}
