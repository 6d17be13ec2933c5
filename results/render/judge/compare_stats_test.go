package judge

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// repeated is a report of n repetitions of async-compact at the given throughputs.
func repeated(rps ...float64) *results.Report {
	var runs []results.Run
	for i, v := range rps {
		s := resultstest.AsyncCompactSpec()
		s.Rep, s.RPS = i+1, v
		runs = append(runs, resultstest.MakeRun(s))
	}
	return resultstest.NewReport(runs...)
}

func throughputDelta(t *testing.T, c Comparison) MetricDelta {
	t.Helper()
	for _, d := range c.Pairs[0].Metrics {
		if d.Metric == results.MetricThroughputRPS {
			return d
		}
	}
	t.Fatal("no throughput in the pair")
	return MetricDelta{}
}

func TestCompareJudgesRepeatedReportsByStatistics(t *testing.T) {
	old := repeated(150000, 158000, 146000, 153000, 149000)
	for _, c := range []struct {
		name       string
		new        *results.Report
		regression bool
		verdict    verdict.Verdict
	}{
		// 8% lower medians, noisy: the 10% limit on medians would pass it, and so do the statistics
		// (the interval reaches past −5%, so it is not shown to be worse).
		{"8% down, noisy", repeated(133000, 145000, 140000, 147000, 128000), false, verdict.Inconclusive},
		// 15% lower, each side within ±3%: worse.
		{"15% down, tight", repeated(128000, 131000, 126000, 130000, 127500), true, verdict.Worse},
		// A 12% median drop from one outlier is a regression by the rule on medians (limit
		// 10%), but the rank test sees the same distribution.
		{"one outlier", repeated(150500, 131000, 147000, 152000, 134000), false, verdict.Inconclusive},
	} {
		cmp := mustCompareOpt(t, old, c.new, DefaultOptions())
		p := cmp.Pairs[0]
		d := throughputDelta(t, cmp)
		if p.Judgement != JudgedByStatistics || d.Statistics == nil || d.Statistics.Verdict != c.verdict {
			t.Errorf("%s: judgement %s, statistics %+v; want %s", c.name, p.Judgement, d.Statistics, c.verdict)
		}
		if (p.Verdict == VerdictRegression) != c.regression || d.Regressed != c.regression {
			t.Errorf("%s: pair %s, throughput regressed %v; want regression %v\n%s", c.name, p.Verdict, d.Regressed, c.regression, renderComparison(t, cmp))
		}
		if out := renderComparison(t, cmp); !strings.Contains(out, "judged by statistics") || !strings.Contains(out, "95% interval") {
			t.Errorf("%s: the output does not say how it judged:\n%s", c.name, out)
		}
	}
}

// Three repetitions: medians against the limits, and the output says that the noise cannot be
// judged.
func TestCompareFewRepetitionsKeepsMedianRule(t *testing.T) {
	cmp := mustCompareOpt(t, repeated(150000, 158000, 146000), repeated(128000, 131000, 126000), DefaultOptions())
	p := cmp.Pairs[0]
	if p.Judgement != JudgedByMedians || throughputDelta(t, cmp).Statistics != nil || p.Verdict != VerdictRegression {
		t.Errorf("3 runs a side: judgement %s, verdict %s", p.Judgement, p.Verdict)
	}
	if out := renderComparison(t, cmp); !strings.Contains(out, "the noise cannot be judged") {
		t.Errorf("output does not say the noise cannot be judged:\n%s", out)
	}
}

// The machine-independent tier stays deterministic with many repetitions: a cost rise fails
// on the medians and the threshold, whatever the statistics.
func TestCompareStatisticsLeaveCostDeterministic(t *testing.T) {
	old := repeated(150000, 151000, 149000, 150500)
	costly := repeated(150000, 151000, 149000, 150500)
	for i := range costly.Runs {
		costly.Runs[i].Database.PerRequest.Statements *= 22
	}
	cmp := mustCompareOpt(t, old, costly, DefaultOptions())
	for _, d := range cmp.Pairs[0].Metrics {
		if d.Metric == results.MetricStatementsPerRequest && (!d.Regressed || d.Statistics != nil) {
			t.Errorf("statements/request ×22: regressed %v, statistics %v; want a deterministic regression", d.Regressed, d.Statistics)
		}
	}
}
