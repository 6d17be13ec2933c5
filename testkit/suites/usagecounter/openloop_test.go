package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// A rate ladder over sync and async-compact: every run is open-loop at its rate, verifies
// exactly, and reports what its schedule did; each mode's ladder names the highest rate within
// a generous objective, and the summary on stderr says it.
func TestRateLadderRunsOpenLoopAndNamesTheMaxRate(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, New(), "--modes", "sync,async-compact", "--rates", "50,100",
		"--duration", "2s", "--ramp", "500ms", "--slo-p99-ms", "10000", "--concurrency", "20")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(rep.Runs) != 4 {
		t.Fatalf("%d runs, want 2 modes × 2 rates", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		ol := r.Load.OpenLoop
		if ol == nil || r.Rate == 0 || ol.TargetRPS != r.Rate || r.Config["rate"] != r.Rate {
			t.Fatalf("%s: rate %g, open loop %+v, config rate %v", r.Mode, r.Rate, ol, r.Config["rate"])
		}
		// 1.5 s measured after the ramp at 50 or 100/s: Poisson, so within a generous band.
		if want := r.Rate * 1.5; float64(r.Load.CompletedRequests) < want*0.6 || float64(r.Load.CompletedRequests) > want*1.4 {
			t.Errorf("%s at %g/s: %d measured requests, want about %.0f", r.Mode, r.Rate, r.Load.CompletedRequests, want)
		}
		if ol.ServiceMs.Count == 0 || ol.ScheduleLagMs.Count == 0 || ol.ServiceHistogram == "" || ol.Arrivals != "poisson" {
			t.Errorf("%s at %g/s: open loop %+v", r.Mode, r.Rate, ol)
		}
		if r.Load.LatencyMs.P50 < ol.ServiceMs.P50 {
			t.Errorf("%s at %g/s: latency p50 %g below service p50 %g: latency runs from the intended start, which is never later", r.Mode, r.Rate, r.Load.LatencyMs.P50, ol.ServiceMs.P50)
		}
	}
	if len(rep.RateLadders) != 2 {
		t.Fatalf("%d rate ladders, want one per mode", len(rep.RateLadders))
	}
	for _, l := range rep.RateLadders {
		if l.MaxRateAtSLO != 100 || l.SLOP99Ms != 10000 || len(l.Rates) != 2 {
			t.Errorf("%s ladder %+v, want max rate 100 within 10 s", l.Mode, l)
		}
	}
	if !strings.Contains(stderr, "sync rate ladder: max rate at p99 ≤ 10000 ms: 100/s") {
		t.Errorf("stderr does not name the max rate:\n%s", stderr)
	}
}
