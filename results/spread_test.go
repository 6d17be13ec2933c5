package results_test

import (
	"math"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestSummarizeMedians(t *testing.T) {
	run := func(mode string, rps, p95 float64, passed bool) results.Run {
		s := resultstest.SyncSpec()
		s.Mode, s.RPS, s.P95, s.Verified = mode, rps, p95, passed
		return resultstest.MakeRun(s)
	}
	tests := []struct {
		name         string
		rps          []float64
		wantMed      float64
		wantMin, max float64
	}{
		{"one", []float64{2100}, 2100, 2100, 2100},
		{"odd", []float64{300, 100, 200}, 200, 100, 300},
		{"even", []float64{400, 100, 300, 200}, 250, 100, 400},
		{"even two", []float64{10, 20}, 15, 10, 20},
	}
	for _, tt := range tests {
		var runs []results.Run
		for _, v := range tt.rps {
			runs = append(runs, run("sync", v, v/100, true))
		}
		sums := results.Summarize(runs)
		if len(sums) != 1 {
			t.Fatalf("%s: %d summaries, want 1", tt.name, len(sums))
		}
		s := sums[0]
		got := s.Metrics[results.MetricThroughputRPS]
		if got.Median != tt.wantMed || got.Min != tt.wantMin || got.Max != tt.max {
			t.Errorf("%s: throughput = %+v, want median %v min %v max %v", tt.name, got, tt.wantMed, tt.wantMin, tt.max)
		}
		if p95 := s.Metrics[results.MetricP95Ms]; math.Abs(p95.Median-tt.wantMed/100) > 1e-9 {
			t.Errorf("%s: p95 median = %v, want %v", tt.name, p95.Median, tt.wantMed/100)
		}
		if s.Repetitions != len(tt.rps) || !s.Verified {
			t.Errorf("%s: repetitions %d verified %v", tt.name, s.Repetitions, s.Verified)
		}
	}
}

func TestSummarizeGroupsAndMetrics(t *testing.T) {
	rep := resultstest.RepeatedReport()
	rep.Runs[3].Verification.Passed = false // sync repetition 1
	sums := results.Summarize(rep.Runs)
	if len(sums) != 2 || sums[0].Mode != "async-compact" || sums[1].Mode != "sync" {
		t.Fatalf("summaries = %+v, want async-compact then sync", sums)
	}
	ac, sync := sums[0], sums[1]
	if !ac.Verified || sync.Verified {
		t.Errorf("verified: async-compact %v (want true), sync %v (want false)", ac.Verified, sync.Verified)
	}
	for _, k := range []string{results.MetricThroughputRPS, results.MetricP50Ms, results.MetricP95Ms, results.MetricP99Ms, results.MetricMaxLockWaiters, results.MetricFailedRequests} {
		if _, ok := sync.Metrics[k]; !ok {
			t.Errorf("sync summary lacks %s", k)
		}
	}
	if _, ok := sync.Metrics[results.MetricPersistLagP99Ms]; ok {
		t.Errorf("sync summary has a persist lag without a queue")
	}
	if lag := ac.Metrics[results.MetricPersistLagP99Ms]; lag.Median != 85.3 {
		t.Errorf("async-compact persist lag = %+v", lag)
	}
	if w := sync.Metrics[results.MetricMaxWaitersPrefix+"api_keys"]; w.Median != 12 {
		t.Errorf("sync api_keys waiters = %+v", w)
	}
	if w := sync.Metrics[results.MetricMaxLockWaiters]; w.Median != 15 {
		t.Errorf("sync max lock waiters = %+v", w)
	}

	// Levels are separate groups, each at its rung.
	lad := results.Summarize(resultstest.LadderReport().Runs)
	if len(lad) != 5 || lad[2].At["concurrency"] != results.Number(32) {
		t.Errorf("ladder summaries = %d, third at %v", len(lad), lad[2].At)
	}
}

// SummarizeOver groups by any axes, stepped or not: a search over several axes compares its
// runs by the ones it chose. A text axis value (a database's kind) groups as a number does.
func TestSummarizeOver(t *testing.T) {
	var runs []results.Run
	for _, l := range []struct {
		pool, slots int
		rps         float64
	}{{16, 1, 100}, {16, 4, 300}, {64, 1, 200}, {16, 4, 500}} {
		r := resultstest.MakeRun(resultstest.SyncSpec())
		r.Config.MaxConnections, r.Config.Slots, r.Load.ThroughputRPS = l.pool, l.slots, l.rps
		runs = append(runs, r)
	}
	sums := results.SummarizeOver(runs, []*results.Axis{results.AxisPool, results.AxisSlots})
	if len(sums) != 3 || sums[1].Repetitions != 2 || sums[1].Metrics[results.MetricThroughputRPS].Median != 400 {
		t.Fatalf("summaries over pool × slots: %+v", sums)
	}
	if at := sums[1].At; at["max_connections"] != results.Number(16) || at["slots"] != results.Number(4) || !at.Holds(runs[3]) || at.Holds(runs[0]) {
		t.Errorf("the second group stands at %v", at)
	}
	if bySlots := results.SummarizeOver(runs, []*results.Axis{results.AxisSlots}); len(bySlots) != 2 {
		t.Errorf("over slots alone: %d groups, want 2", len(bySlots))
	}
	if one := results.Summarize(runs); len(one) != 1 || one[0].At != nil {
		t.Errorf("Summarize groups by the axes stepped over, none here: %+v", one)
	}
}
