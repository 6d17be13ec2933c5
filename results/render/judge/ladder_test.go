package judge

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestCompareRateLadders(t *testing.T) {
	old, new := resultstest.RateLadderReport(), resultstest.RateLadderReport()
	lower := results.Number(200)
	new.Ladders[0].Found = &lower
	c, err := Compare(old, new, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 7 {
		t.Errorf("%d pairs, want the 7 (mode, rate) runs paired by rate", len(c.Pairs))
	}
	for _, p := range c.Pairs {
		if !pairHas(p, results.MetricAchievedRPS) || !pairHas(p, results.MetricServiceP99Ms) {
			t.Errorf("pair %s %s lacks achieved rps or service p99", p.Mode, p.Load)
		}
	}
	if len(c.Ladders) != 2 || c.Ladders[0].Axis != "rate" || c.Ladders[0].Old.Num != 400 || c.Ladders[0].New.Num != 200 {
		t.Errorf("ladders %+v", c.Ladders)
	}
	var b bytes.Buffer
	if err := RenderComparison(&b, c, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "sync rate ladder, max rate at p99 ≤ 200 ms: 400/s → 200/s") {
		t.Errorf("comparison does not show the ladder's max rate:\n%s", b.String())
	}
	// A rate is a shaping key: 400/s does not pair with 800/s.
	other := resultstest.RateLadderReport()
	for i := range other.Runs {
		other.Runs[i].Config.Rate *= 2
	}
	c, _ = Compare(old, other, DefaultOptions())
	for _, p := range c.Pairs {
		if !strings.Contains(p.Config, "rate") {
			t.Errorf("pair %s %s has no rate in its config %q", p.Mode, p.Load, p.Config)
		}
	}
	// Doubled, sync's 100, 200, 400, 800 become 200, 400, 800, 1,600: three rates on both
	// sides; async-compact's 1,000, 4,000, 16,000 become 2,000, 8,000, 32,000: none.
	if len(c.Pairs) != 3 {
		t.Errorf("%d pairs across doubled rates, want 3 (sync at 200/s, 400/s and 800/s)", len(c.Pairs))
	}
}

func pairHas(p Pair, metric string) bool {
	for _, d := range p.Metrics {
		if d.Metric == metric {
			return true
		}
	}
	return false
}
