package results_test

import (
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestBuildRateLadder(t *testing.T) {
	rep := resultstest.RateLadderReport()
	sync, compact := rep.RateLadders[0], rep.RateLadders[1]
	if sync.MaxRateAtSLO != 400 || compact.MaxRateAtSLO != 16000 {
		t.Fatalf("max rate at SLO: sync %g, async-compact %g; want 400 and 16000", sync.MaxRateAtSLO, compact.MaxRateAtSLO)
	}
	if len(sync.Rates) != 4 || sync.Rates[0].TargetRPS != 100 || sync.Rates[3].MetSLO || !sync.Rates[2].MaxAtSLO {
		t.Errorf("sync steps %+v", sync.Rates)
	}
	if s := sync.Rates[2]; s.AchievedRPS != 396 || s.ServiceP99Ms != 60 || s.P99Ms != 150 {
		t.Errorf("sync 400/s step %+v", s)
	}
	// A rate whose p99 is within the objective but that sent fewer than 95% of its arrivals
	// does not count: the latency of the requests it never sent is not in its p99.
	runs := rep.Runs[:3]
	short := rep.Runs[2]
	short.Load.OpenLoop = &results.OpenLoop{TargetRPS: 400, AchievedRPS: 370, SentShare: 0.925}
	short.Load.ThroughputRPS = 370
	l := results.BuildRateLadder("sync", append(runs[:2:2], short), 200)
	if l.MaxRateAtSLO != 200 {
		t.Errorf("max rate %g, want 200 (400/s sent only 92.5%% of its arrivals)", l.MaxRateAtSLO)
	}
	if l := results.BuildRateLadder("sync", rep.Runs, 0); l.MaxRateAtSLO != 0 || len(l.Rates) != 4 {
		t.Errorf("without an objective: max rate %g over %d steps, want 0 over 4", l.MaxRateAtSLO, len(l.Rates))
	}
}
