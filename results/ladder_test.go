package results_test

import (
	"slices"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestFindKnee(t *testing.T) {
	lv := func(c int, rps, p95 float64) results.Level {
		return results.Level{Value: results.Number(float64(c)), Figures: map[string]float64{results.MetricThroughputRPS: rps, results.MetricP95Ms: p95}}
	}
	type lvs = []results.Level
	tests := []struct {
		name   string
		levels []results.Level
		want   int // the knee's concurrency, 0: none
	}{
		{"clear knee", lvs{lv(8, 900, 9.5), lv(16, 1700, 10.2),
			lv(32, 2100, 16), lv(64, 2150, 30.1),
			lv(128, 2120, 61)}, 32},
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
		got := 0
		if i := results.FindKnee(tt.levels); i >= 0 {
			got = int(tt.levels[i].Value.Num)
		}
		if got != tt.want {
			t.Errorf("%s: results.FindKnee names %d, want %d", tt.name, got, tt.want)
		}
	}
}

// figure is a level's figure, and 0 for one it lacks.
func figure(lv results.Level, key string) float64 { return lv.Figures[key] }

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

	l := results.BuildLadder(results.AxisConcurrency, "sync", runs)
	if l.Axis != "concurrency" || l.Mode != "sync" || l.Rule != "knee" || len(l.Levels) != 4 {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []float64{8, 16, 32, 64} {
		if l.Levels[i].Value != results.Number(want) || !l.Levels[i].Verified {
			t.Errorf("level %d = %+v, want %v, verified", i, l.Levels[i], want)
		}
	}
	if got := figure(l.Levels[0], results.MetricThroughputRPS); got != 910 {
		t.Errorf("level 8 throughput = %v, want median of 900 and 920", got)
	}
	if l.Found == nil || *l.Found != results.Number(32) {
		t.Errorf("knee = %v, want 32", l.Found)
	}
	for _, lv := range l.Levels {
		if lv.Found != (lv.Value.Num == 32) {
			t.Errorf("level %v found mark = %v", lv.Value, lv.Found)
		}
	}
	if none := results.BuildLadder(results.AxisConcurrency, "outbox", runs); len(none.Levels) != 0 || none.Found != nil {
		t.Errorf("ladder of a mode without runs = %+v", none)
	}
	if ls := results.BuildLadders(runs); len(ls) != 2 || ls[0].Mode != "sync" || ls[1].Mode != "async-compact" {
		t.Errorf("BuildLadders: %+v, want sync's then async-compact's concurrency ladder", ls)
	}
}

func TestBuildSlotLadder(t *testing.T) {
	runs := resultstest.SlotRuns()
	l := results.BuildLadder(results.AxisSlots, "sync", runs)
	if l.Mode != "sync" || len(l.Levels) != 4 || l.Rule != "stops_paying" {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []float64{1, 4, 16, 64} {
		if lv := l.Levels[i]; lv.Value.Num != want || figure(lv, results.MetricTotalReadP99Ms) != want/10 {
			t.Errorf("level %d = %+v, want %v slots read in %v ms", i, lv, want, want/10)
		}
	}
	if lv := l.Levels[0]; figure(lv, results.ColumnMaxWaiters) != 63 || figure(lv, results.ColumnMaxWaitersPerRow) != 63 {
		t.Errorf("one slot: %+v, want 63 waiters and 63 per row", lv.Figures)
	}
	if lv := l.Levels[2]; figure(lv, results.ColumnMaxWaiters) != 48 || figure(lv, results.ColumnMaxWaitersPerRow) != 3 {
		t.Errorf("16 slots: %+v, want 48 waiters and 3 per row", lv.Figures)
	}
	if l.Found == nil || l.Found.Num != 16 || !l.Levels[2].Found {
		t.Errorf("knee = %v (levels %+v), want 16: 64 slots add < 5%% over 16", l.Found, l.Levels)
	}
	if _, ok := l.Levels[0].Figures[results.MetricPersistLagP99Ms]; ok {
		t.Error("a sync level has a persist lag")
	}
}

// An RTT ladder has one level per round trip, in increasing order, whatever the runs' order,
// with the lock waits beside throughput, and no rule.
func TestBuildRTTLadder(t *testing.T) {
	var runs []results.Run
	for _, l := range []struct {
		rtt, rps, wait float64
		waiters        int64
	}{{1, 110, 40, 60}, {0, 300, 12, 63}, {0.2, 180, 20, 62}} {
		r := resultstest.MakeRun(resultstest.SyncSpec())
		resultstest.OnLadder(&r, results.AxisRTT, l.rtt, 0, 0.2, 1)
		r.Load.ThroughputRPS, r.LockMonitor.MaxLockWaitMs = l.rps, l.wait
		r.LockMonitor.MaxWaitersByRelation = map[string]int64{"api_keys": l.waiters}
		runs = append(runs, r)
	}
	l := results.BuildLadder(results.AxisRTT, "sync", runs)
	if l.Mode != "sync" || len(l.Levels) != 3 || l.Rule != "" || l.Found != nil {
		t.Fatalf("ladder = %+v", l)
	}
	for i, want := range []struct{ rtt, rps, wait, waiters float64 }{{0, 300, 12, 63}, {0.2, 180, 20, 62}, {1, 110, 40, 60}} {
		lv := l.Levels[i]
		if lv.Value.Num != want.rtt || figure(lv, results.MetricThroughputRPS) != want.rps || figure(lv, results.MetricMaxLockWaitMs) != want.wait ||
			figure(lv, results.ColumnMaxWaiters) != want.waiters {
			t.Errorf("level %d = %+v, want %+v", i, lv, want)
		}
	}
}

// withSLO is runs judged by the objective sloP99Ms (--slo-p99-ms, as each run records it).
func withSLO(runs []results.Run, sloP99Ms float64) []results.Run {
	out := slices.Clone(runs)
	for i := range out {
		out[i].Config.SLOP99Ms = sloP99Ms
	}
	return out
}

// A pool ladder has one level per pool size, with the pool wait and the lock waits beside
// throughput, and names the size of highest throughput within the objective; without one, the
// size of highest throughput, saying so; an unverified size is never named.
func TestBuildPoolLadder(t *testing.T) {
	rep := resultstest.PoolLadderReport(40)
	sync := rep.Ladders[0]
	if sync.Axis != "max_connections" || sync.Mode != "sync" || len(sync.Levels) != 3 || sync.FoundBy != results.BestBySLO || sync.SLOP99Ms != 40 {
		t.Fatalf("ladder = %+v", sync)
	}
	for i, want := range []struct {
		pool            float64
		rps, wait, lock float64
		met             bool
	}{{4, 1500, 30, 3, true}, {16, 2100, 9, 15, true}, {64, 2000, 0.4, 63, false}} {
		lv := sync.Levels[i]
		if lv.Value.Num != want.pool || figure(lv, results.MetricThroughputRPS) != want.rps || figure(lv, results.MetricAcquireWaitP99Ms) != want.wait ||
			figure(lv, results.MetricMaxLockWaiters) != want.lock || figure(lv, results.MetricMaxLockWaitMs) != 2*want.lock || lv.MetSLO != want.met || !lv.Verified {
			t.Errorf("level %d = %+v, want %+v", i, lv, want)
		}
	}
	if sync.Found == nil || sync.Found.Num != 16 || !sync.Levels[1].Found || sync.Levels[2].Found {
		t.Errorf("best pool %v (levels %+v), want 16", sync.Found, sync.Levels)
	}
	best := func(mode string, runs []results.Run) float64 {
		if l := results.BuildLadder(results.AxisPool, mode, runs); l.Found != nil {
			return l.Found.Num
		}
		return 0
	}

	// A tighter objective moves the best size down; one nothing meets names none.
	if b := best("sync", withSLO(rep.Runs, 36)); b != 4 {
		t.Errorf("p99 ≤ 36 ms: best pool %v, want 4", b)
	}
	if l := results.BuildLadder(results.AxisPool, "sync", withSLO(rep.Runs, 10)); l.Found != nil || slices.ContainsFunc(l.Levels, func(lv results.Level) bool { return lv.Found }) {
		t.Errorf("p99 ≤ 10 ms: best pool %v, want none", l.Found)
	}
	// Without an objective: the highest throughput, stated as such.
	if l := results.BuildLadder(results.AxisPool, "async-compact", withSLO(rep.Runs, 0)); l.Found == nil || l.Found.Num != 64 || l.FoundBy != results.BestByThroughput {
		t.Errorf("no objective: best pool %v by %q, want 64 by throughput", l.Found, l.FoundBy)
	}
	// An unverified size is never the best.
	runs := withSLO(rep.Runs, 0)
	runs[4].Verification.Passed = false // async-compact at 16
	runs[5].Verification.Passed = false // async-compact at 64
	if l := results.BuildLadder(results.AxisPool, "async-compact", runs); l.Found == nil || l.Found.Num != 4 || l.Levels[2].Verified {
		t.Errorf("best pool %v with 16 and 64 unverified, want 4", l.Found)
	}
	// Repetitions of one size are one level (their medians), kept apart from the other sizes.
	if sums := results.Summarize(append(rep.Runs, rep.Runs...)); len(sums) != 6 || sums[0].At["max_connections"].Num != 4 || sums[0].Repetitions != 2 {
		t.Errorf("summaries %+v: want one per mode and pool size", sums)
	}
}

func TestBuildRateLadder(t *testing.T) {
	rep := resultstest.RateLadderReport()
	sync, compact := rep.Ladders[0], rep.Ladders[1]
	if sync.Axis != "rate" || sync.Found == nil || sync.Found.Num != 400 || compact.Found == nil || compact.Found.Num != 16000 {
		t.Fatalf("max rate at SLO: sync %v, async-compact %v; want 400 and 16000", sync.Found, compact.Found)
	}
	if len(sync.Levels) != 4 || sync.Levels[0].Value.Num != 100 || sync.Levels[3].MetSLO || !sync.Levels[2].Found {
		t.Errorf("sync steps %+v", sync.Levels)
	}
	if s := sync.Levels[2]; figure(s, results.MetricAchievedRPS) != 396 || figure(s, results.MetricServiceP99Ms) != 60 || figure(s, results.MetricP99Ms) != 150 {
		t.Errorf("sync 400/s step %+v", s)
	}
	// A rate whose p99 is within the objective but that sent fewer than 95% of its arrivals
	// does not count: the latency of the requests it never sent is not in its p99.
	short := rep.Runs[2]
	short.Load.OpenLoop = &results.OpenLoop{TargetRPS: 400, AchievedRPS: 370, SentShare: 0.925}
	short.Load.ThroughputRPS = 370
	l := results.BuildLadder(results.AxisRate, "sync", []results.Run{rep.Runs[0], rep.Runs[1], short})
	if l.Found == nil || l.Found.Num != 200 {
		t.Errorf("max rate %v, want 200 (400/s sent only 92.5%% of its arrivals)", l.Found)
	}
	if l := results.BuildLadder(results.AxisRate, "sync", withSLO(rep.Runs, 0)); l.Found != nil || len(l.Levels) != 4 || l.SLOP99Ms != 0 {
		t.Errorf("without an objective: max rate %v over %d steps, want none over 4", l.Found, len(l.Levels))
	}
}
