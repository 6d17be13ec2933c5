package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// A rate ladder over sync and async-compact: every run is open-loop at its rate, verifies
// exactly, and reports what its schedule did; each mode's ladder names the highest rate within
// a generous objective, and the summary on stderr says it.
//
// Whether the machine kept up is not asserted beyond the report's own rule (HeldRate: 95% of
// the arrivals sent): an arrival due in the last 1/rate of the run is left unsent by any stall
// of that length, which a loaded machine has (async-compact at 5/s once sent 9 of 10). At 20
// arrivals or more a run holds its rate with one of them unsent.
func TestRateLadderRunsOpenLoopAndNamesTheMaxRate(t *testing.T) {
	// Rates far below what either mode sustains even on a loaded machine (50 workers for 20
	// requests a second), evenly spaced so that the arrivals are counted exactly.
	rep, stderr := suitetest.Runs(t, New(), 4, "--modes", "sync,async-compact", "--rates", "10,20", "--arrivals", "uniform", // 2 modes × 2 rates
		"--duration", "3s", "--ramp", "1s", "--slo-p99-ms", "10000", "--concurrency", "50")
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		ol, rate := r.Load.OpenLoop, r.Rung()["rate"].Num
		if ol == nil || rate == 0 || ol.TargetRPS != rate || r.Config.Rate != rate {
			t.Fatalf("%s: rate %g, open loop %+v, config rate %v", r.Mode, rate, ol, r.Config.Rate)
		}
		// 2 s measured after the 1 s ramp.
		if want := int64(rate * 2); ol.Scheduled < want-1 || ol.Scheduled > want+1 {
			t.Errorf("%s at %g/s: %d arrivals measured, want %d", r.Mode, rate, ol.Scheduled, want)
		}
		sent := r.Load.CompletedRequests + r.Load.FailedRequests
		if !ol.HeldRate || r.Load.FailedRequests != 0 || ol.Skipped != 0 || sent+ol.Unsent != ol.Scheduled {
			t.Errorf("%s at %g/s: sent %d (share %g) of %d arrivals, %d unsent, %d skipped (held %v), %d failed", r.Mode, rate,
				sent, ol.SentShare, ol.Scheduled, ol.Unsent, ol.Skipped, ol.HeldRate, r.Load.FailedRequests)
		}
		if ol.ServiceMs.Count == 0 || ol.ScheduleLagMs.Count == 0 || ol.ServiceHistogram == "" || ol.Arrivals != "uniform" {
			t.Errorf("%s at %g/s: open loop %+v", r.Mode, rate, ol)
		}
		if r.Load.LatencyMs.P50 < ol.ServiceMs.P50 {
			t.Errorf("%s at %g/s: latency p50 %g below service p50 %g: latency runs from the intended start, which is never later", r.Mode, rate, r.Load.LatencyMs.P50, ol.ServiceMs.P50)
		}
	}
	if len(rep.Ladders) != 2 {
		t.Fatalf("%d ladders, want a rate ladder per mode", len(rep.Ladders))
	}
	for _, l := range rep.Ladders {
		if l.Axis != "rate" || l.Found == nil || l.Found.Num != 20 || l.SLOP99Ms != 10000 || len(l.Levels) != 2 {
			t.Errorf("%s ladder %+v, want max rate 20 within 10 s", l.Mode, l)
		}
	}
	if !strings.Contains(stderr, "; max rate at p99 ≤ 10.0 s (≥ 95% of arrivals sent): 20/s") {
		t.Errorf("stderr does not name the max rate:\n%s", stderr)
	}
}
