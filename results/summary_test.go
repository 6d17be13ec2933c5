package results_test

import (
	"math"
	"slices"
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

	// Levels are separate groups.
	lad := results.Summarize(resultstest.LadderReport().Runs)
	if len(lad) != 5 || lad[2].Level != 32 {
		t.Errorf("ladder summaries = %d, third level %d", len(lad), lad[2].Level)
	}
}

func TestFindKnee(t *testing.T) {
	lv := func(c int, rps, p95 float64) results.ConcurrencyLevel {
		return results.ConcurrencyLevel{Concurrency: c, LevelFigures: results.LevelFigures{ThroughputRPS: rps, P95Ms: p95}}
	}
	type lvs = []results.ConcurrencyLevel
	tests := []struct {
		name   string
		levels []results.ConcurrencyLevel
		want   int
	}{
		{"clear knee", lvs{lv(8, 900, 9.5), lv(16, 1700, 10.2),
			lv(32, 2100, 16), lv(64, 2150, 30.1),
			lv(128, 2120, 61)}, 32},
		{"unsorted input", lvs{lv(64, 2150, 30.1), lv(8, 900, 9.5),
			lv(32, 2100, 16), lv(16, 1700, 10.2)}, 32},
		{"none: still scaling", lvs{lv(8, 20000, 0.5), lv(16, 39000, 0.55),
			lv(32, 76000, 0.6), lv(64, 150000, 0.7)}, 0},
		{"noisy flat: p95 jitters, never rises 5%", lvs{lv(8, 2000, 10.0), lv(16, 2040, 10.3),
			lv(32, 1990, 9.9), lv(64, 2030, 10.2)}, 0},
		{"throughput drops at saturation", lvs{lv(4, 1000, 4), lv(8, 1900, 4.2),
			lv(16, 1500, 11)}, 8},
		{"gain of exactly 5% is not flat", lvs{lv(8, 1000, 4), lv(16, 1050, 8)}, 0},
		{"small gain, p95 up 4%: noise", lvs{lv(8, 1000, 10), lv(16, 1010, 10.4)}, 0},
		{"one level", lvs{lv(8, 1000, 4)}, 0},
		{"empty", nil, 0},
		{"zero throughput level skipped", lvs{lv(8, 0, 4), lv(16, 0, 9)}, 0},
	}
	for _, tt := range tests {
		if got := results.FindKnee(tt.levels); got != tt.want {
			t.Errorf("%s: results.FindKnee = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestBuildLadder(t *testing.T) {
	var runs []results.Run
	for rep := 1; rep <= 2; rep++ {
		for _, l := range []struct {
			c        int
			rps, p95 float64
		}{{16, 1700, 10}, {8, 900, 9}, {32, 2100, 16}, {64, 2150, 30}} {
			s := resultstest.SyncSpec()
			s.Rep, s.Level, s.RPS, s.P95 = rep, l.c, l.rps+float64(rep-1)*20, l.p95
			runs = append(runs, resultstest.MakeRun(s))
		}
	}
	other := resultstest.AsyncCompactSpec()
	other.Level = 32
	runs = append(runs, resultstest.MakeRun(other), resultstest.MakeRun(resultstest.SyncSpec())) // another mode, and a run outside the ladder

	l := results.BuildLadder("sync", runs)
	if l.Mode != "sync" || len(l.Levels) != 4 {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []int{8, 16, 32, 64} {
		if l.Levels[i].Concurrency != want {
			t.Errorf("level %d concurrency = %d, want %d", i, l.Levels[i].Concurrency, want)
		}
	}
	if got := l.Levels[0].ThroughputRPS; got != 910 {
		t.Errorf("level 8 throughput = %v, want median of 900 and 920", got)
	}
	if l.KneeConcurrency != 32 {
		t.Errorf("knee = %d, want 32", l.KneeConcurrency)
	}
	for _, lv := range l.Levels {
		if lv.Knee != (lv.Concurrency == 32) {
			t.Errorf("level %d knee mark = %v", lv.Concurrency, lv.Knee)
		}
	}
	if none := results.BuildLadder("outbox", runs); len(none.Levels) != 0 || none.KneeConcurrency != 0 {
		t.Errorf("ladder of a mode without runs = %+v", none)
	}
}

func TestBuildSlotLadder(t *testing.T) {
	runs := resultstest.SlotRuns()
	l := results.BuildSlotLadder("sync", runs)
	if l.Mode != "sync" || len(l.Levels) != 4 {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []int{1, 4, 16, 64} {
		if lv := l.Levels[i]; lv.Slots != want || lv.TotalReadP99Ms != float64(want)/10 {
			t.Errorf("level %d = %+v, want %d slots read in %v ms", i, lv, want, float64(want)/10)
		}
	}
	if lv := l.Levels[0]; lv.MaxWaiters != 63 || lv.MaxWaitersPerRow != 63 {
		t.Errorf("one slot: waiters %v, per row %v, want 63 and 63", lv.MaxWaiters, lv.MaxWaitersPerRow)
	}
	if lv := l.Levels[2]; lv.MaxWaiters != 48 || lv.MaxWaitersPerRow != 3 {
		t.Errorf("16 slots: waiters %v, per row %v, want 48 and 3", lv.MaxWaiters, lv.MaxWaitersPerRow)
	}
	if l.KneeSlots != 16 || !l.Levels[2].Knee {
		t.Errorf("knee = %d (marks %+v), want 16: 64 slots add < 5%% over 16", l.KneeSlots, l.Levels)
	}
}

// An RTT ladder has one level per round trip, in increasing order, whatever the runs' order,
// with the lock waits beside throughput.
func TestBuildRTTLadder(t *testing.T) {
	var runs []results.Run
	for _, l := range []struct {
		rtt, rps, wait float64
		waiters        int64
	}{{1, 110, 40, 60}, {0, 300, 12, 63}, {0.2, 180, 20, 62}} {
		r := resultstest.MakeRun(resultstest.SyncSpec())
		r.RTTMs, r.Load.ThroughputRPS, r.LockMonitor.MaxLockWaitMs = l.rtt, l.rps, l.wait
		r.LockMonitor.MaxWaitersByRelation = map[string]int64{"api_keys": l.waiters}
		runs = append(runs, r)
	}
	l := results.BuildRTTLadder("sync", runs)
	if l.Mode != "sync" || len(l.Levels) != 3 {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []struct{ rtt, rps, wait, waiters float64 }{{0, 300, 12, 63}, {0.2, 180, 20, 62}, {1, 110, 40, 60}} {
		if lv := l.Levels[i]; lv.RTTMs != want.rtt || lv.ThroughputRPS != want.rps || lv.MaxLockWaitMs != want.wait || lv.MaxWaiters != want.waiters {
			t.Errorf("level %d = %+v, want %+v", i, lv, want)
		}
	}
}

// A pool ladder has one level per pool size, with the pool wait and the lock waits beside
// throughput, and names the size of highest throughput within the objective; without one, the
// size of highest throughput, saying so; an unverified size is never named.
func TestBuildPoolLadder(t *testing.T) {
	rep := resultstest.PoolLadderReport(40)
	sync := rep.PoolLadders[0]
	if sync.Mode != "sync" || len(sync.Levels) != 3 || sync.BestBy != results.PoolBestBySLO {
		t.Fatalf("ladder = %+v", sync)
	}
	for i, want := range []struct {
		pool            int
		rps, wait, lock float64
		met             bool
	}{{4, 1500, 30, 3, true}, {16, 2100, 9, 15, true}, {64, 2000, 0.4, 63, false}} {
		lv := sync.Levels[i]
		if lv.Pool != want.pool || lv.ThroughputRPS != want.rps || lv.AcquireWaitP99Ms != want.wait ||
			lv.MaxLockWaiters != want.lock || lv.MaxLockWaitMs != 2*want.lock || lv.MetSLO != want.met || !lv.Verified {
			t.Errorf("level %d = %+v, want %+v", i, lv, want)
		}
	}
	if sync.BestPool != 16 || !sync.Levels[1].Best || sync.Levels[2].Best {
		t.Errorf("best pool %d (levels %+v), want 16", sync.BestPool, sync.Levels)
	}

	// A tighter objective moves the best size down; one nothing meets names none.
	if l := results.BuildPoolLadder("sync", rep.Runs, 36); l.BestPool != 4 {
		t.Errorf("p99 ≤ 36 ms: best pool %d, want 4", l.BestPool)
	}
	if l := results.BuildPoolLadder("sync", rep.Runs, 10); l.BestPool != 0 || slices.ContainsFunc(l.Levels, func(lv results.PoolLevel) bool { return lv.Best }) {
		t.Errorf("p99 ≤ 10 ms: best pool %d, want none", l.BestPool)
	}
	// Without an objective: the highest throughput, stated as such.
	if l := results.BuildPoolLadder("async-compact", rep.Runs, 0); l.BestPool != 64 || l.BestBy != results.PoolBestByThroughput {
		t.Errorf("no objective: best pool %d by %q, want 64 by throughput", l.BestPool, l.BestBy)
	}
	// An unverified size is never the best.
	rep.Runs[4].Verification.Passed = false // async-compact at 16
	rep.Runs[5].Verification.Passed = false // async-compact at 64
	if l := results.BuildPoolLadder("async-compact", rep.Runs, 0); l.BestPool != 4 || l.Levels[2].Verified {
		t.Errorf("best pool %d with 16 and 64 unverified, want 4", l.BestPool)
	}
	// Repetitions of one size are one level (their medians), kept apart from the other sizes.
	if sums := results.Summarize(append(rep.Runs, rep.Runs...)); len(sums) != 6 || sums[0].PoolSize != 4 || sums[0].Repetitions != 2 {
		t.Errorf("summaries %+v: want one per mode and pool size", sums)
	}
}
