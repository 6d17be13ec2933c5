package advise

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// The search's decisions on recorded figures: a world answers each trial with a run (a
// committed report's, or one made from figures), and the search is driven as the engine drives
// it, with no database and no clock.

// world answers a trial with its run.
type world func(t Trial) results.Run

// drive runs the search over w, each trial taking its length and overhead more; it returns the
// advice, the trials in the order they ran and their runs.
func drive(t *testing.T, spec Spec, w world, overhead time.Duration) (*results.Advice, []Trial, []results.Run) {
	t.Helper()
	return driveWatched(t, New(spec), w, overhead, nil)
}

// driveWatched is drive on a search of the caller's, with watch (when not nil) called after
// each trial is observed, with the time elapsed.
func driveWatched(t *testing.T, s *Search, w world, overhead time.Duration, watch func(Trial, time.Duration)) (*results.Advice, []Trial, []results.Run) {
	t.Helper()
	var trials []Trial
	var runs []results.Run
	elapsed := time.Duration(0)
	for {
		tr, ok := s.Next(elapsed)
		if !ok {
			break
		}
		if len(trials) > 500 {
			t.Fatal("the search did not end after 500 trials")
		}
		run := w(tr)
		took := tr.Length + overhead
		elapsed += took
		trials = append(trials, tr)
		runs = append(runs, run)
		s.Observe(len(runs)-1, run, took)
		if watch != nil {
			watch(tr, elapsed)
		}
	}
	a := s.Advice(runs)
	a.UsedMs = results.Milliseconds(elapsed)
	return a, trials, runs
}

// recorded is the world of a committed pool ladder: a trial of a mode at a pool size gets the
// run recorded there, whatever its length (a ladder's runs all had one); a headroom step at a
// concurrency k times the recorded one gets it with its latencies and waits k times longer (a
// queue that grows with the load, as a row lock's does).
func recorded(t *testing.T, rels ...string) world {
	var runs []results.Run
	for _, rel := range rels {
		rep, err := results.ReadFile(recordstest.Path(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, rep.Runs...)
	}
	return func(tr Trial) results.Run {
		for _, r := range runs {
			if r.Mode != tr.Mode.String() || r.Config.MaxConnections != int(tr.At[results.AxisPool.Name].Num) ||
				results.AxisSlots.Of(r.Config) != valueOf(tr.At, results.AxisSlots) {
				continue
			}
			if c, ok := tr.At[results.AxisConcurrency.Name]; ok {
				k := c.Num / float64(r.Config.Concurrency)
				r.Config.Concurrency = int(c.Num)
				r.Load.LatencyMs.P99 *= k
				r.Load.AcquireWaitMs.P99 *= k
				if q := r.Queue; q != nil {
					qq := *q
					qq.PersistLagMs.P99 *= k
					r.Queue = &qq
				}
			}
			return r
		}
		t.Fatalf("no recorded run of %s at %v", tr.Mode, tr.At)
		return results.Run{}
	}
}

// pools is a pool axis of sizes.
func pools(sizes ...float64) map[string][]results.Value {
	var vs []results.Value
	for _, s := range sizes {
		vs = append(vs, results.Number(s))
	}
	return map[string][]results.Value{results.AxisPool.Name: vs}
}

// statuses is each configuration's status, by its label.
func statuses(a *results.Advice) map[string]string {
	out := map[string]string{}
	for _, c := range a.Configurations {
		out[label(c.Mode, c.At)] = c.Status
	}
	return out
}

func label(mode string, at results.Position) string {
	s := mode
	for _, k := range slices.Sorted(maps.Keys(at)) {
		s += fmt.Sprintf(" %s=%s", k, at[k])
	}
	return s
}

// counted is the trials by phase.
func counted(trials []Trial) map[string]int {
	out := map[string]int{}
	for _, t := range trials {
		out[t.Phase]++
	}
	return out
}

// The counter suite's recorded pool ladder (500 workers; 4, 16, 64, 128 connections), with a
// p99 objective of 500 ms: sync misses at 4 connections with 3 of them queued on the hot row
// (1.7×, beyond a near miss), so its larger pools are pruned unrun; the outbox at 4 holds every
// rung and is the answer, at 16 the runner-up, the queue modes are never run, and the answer is
// what the grid of every recorded run says is the cheapest that holds.
func TestRecordedPoolLadderOutboxHolds(t *testing.T) {
	spec := Spec{Modes: counters.Modes, Space: pools(4, 16, 64, 128), Objectives: results.Objectives{P99Ms: 500},
		Concurrency: 500, Length: 8 * time.Second, Budget: time.Hour}
	a, trials, _ := drive(t, spec, recorded(t, "runs/pool/ladder-direct.json"), 2*time.Second)
	if a.Outcome != results.AdviceAnswer || a.Answer == nil || label(a.Answer.Mode, a.Answer.At) != "outbox max_connections=4" {
		t.Fatalf("outcome %s, answer %+v: want outbox at pool 4", a.Outcome, a.Answer)
	}
	if a.RunnerUp == nil || label(a.RunnerUp.Mode, a.RunnerUp.At) != "outbox max_connections=16" {
		t.Errorf("runner-up %+v, want outbox at pool 16", a.RunnerUp)
	}
	want := map[string]string{
		"sync max_connections=4": results.ConfigFailed, "sync max_connections=16": results.ConfigPruned,
		"sync max_connections=64": results.ConfigPruned, "sync max_connections=128": results.ConfigPruned,
		"outbox max_connections=4": results.ConfigHeld, "outbox max_connections=16": results.ConfigHeld,
		"outbox max_connections=64": results.ConfigUntried, "async max_connections=4": results.ConfigUntried,
		"async-compact max_connections=128": results.ConfigUntried,
	}
	got := statuses(a)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s (%s)", k, got[k], v, a.Configurations[slices.IndexFunc(a.Configurations, func(c results.Configuration) bool { return label(c.Mode, c.At) == k })].Why)
		}
	}
	sync16 := a.Configurations[1]
	if sync16.PrunedBy == nil || *sync16.PrunedBy != 0 || !strings.Contains(sync16.Why, "3 sessions of sync · pool 4 queued on a row lock at once") {
		t.Errorf("sync at 16 pruned by %v: %q", sync16.PrunedBy, sync16.Why)
	}
	if sync4 := a.Configurations[0]; !strings.Contains(sync4.Why, "p99 872 ms > 500 ms (1.7×) at 2s") {
		t.Errorf("sync at 4 failed because %q", sync4.Why)
	}
	// 1 screening of sync, 3 trials each of the outbox at 4 and 16, 3 pairs of repeats, the ramp.
	n := counted(trials)
	if n[results.PhaseScreen] != 3 || n[results.PhaseRung] != 4 || n[results.PhaseConfirm] != 6 {
		t.Errorf("trials by phase %v: want 3 screenings, 4 longer trials, 6 repeats", n)
	}
	// The world repeats its run: no noise, and the runner-up's p99 (348 against 320 ms) is
	// worse by more than the 5% that matters.
	cf := a.Confirmation
	if cf == nil || len(cf.Winner) != 4 || len(cf.RunnerUp) != 4 || cf.WithinNoise || verdictOn(cf.Judgements, results.MetricP99Ms) != "worse" {
		t.Fatalf("confirmation %+v: want 4 runs a side, the runner-up's p99 worse", cf)
	}
	if grid := cheapestThatHolds(t, "runs/pool/ladder-direct.json", spec); grid != "outbox max_connections=4" {
		t.Errorf("the grid's cheapest that holds is %s", grid)
	}
	// The ramp: 1,000 workers double the outbox's p99 (640 ms, a miss), 707 hold it (452 ms); what
	// broke is the pool, whose wait was most of the p99.
	h := a.Headroom
	if h == nil || h.Held == nil || h.Failed == nil || h.Held.Num != 707 || h.Failed.Num != 1000 || h.Breaks != results.BreaksPool {
		t.Fatalf("headroom %+v", h)
	}
	if !strings.Contains(h.BreaksDetail, "pool's 4 connections") {
		t.Errorf("what broke: %q", h.BreaksDetail)
	}
}

// cheapestThatHolds is what a grid of every run of the committed report says: the first run,
// in the search's order of cost, that holds spec's objectives.
func cheapestThatHolds(t *testing.T, rel string, spec Spec) string {
	rep, err := results.ReadFile(recordstest.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range buildSpace(spec.Modes, spec.Space) {
		for _, r := range rep.Runs {
			if r.Mode == c.mode.String() && r.Config.MaxConnections == int(c.at[results.AxisPool.Name].Num) &&
				len(missesOf(figuresOf(r), c.mode, spec.Objectives, false)) == 0 {
				return label(c.mode.String(), c.at)
			}
		}
	}
	return ""
}

var _ = testkit.Sync

// The grid of the same 24 configurations the advisor searched (docs/advisor.md, "Against a
// grid"), as a world: the search names async-compact at pool 16, as it did measuring. The
// grid's own cheapest that held, async with 16 slots at pool 32 (lag p99 280 ms), is pruned
// unrun: its sibling at pool 16, the same configuration for a queue (whose load's pool writes
// nothing), missed the lag by 1.5× (751 ms).
func TestRecordedGrid(t *testing.T) {
	slots := []results.Value{results.Number(1), results.Number(16)}
	space := pools(16, 32, 64)
	space[results.AxisSlots.Name] = slots
	spec := Spec{Modes: counters.Modes, Space: space, Objectives: results.Objectives{P99Ms: 100, LagP99Ms: 500},
		Rate: 2000, Concurrency: 6000, Length: 8 * time.Second, Budget: time.Hour}
	w := recorded(t, "runs/advisor/grid_usage_counter_6000_rate2000_slots1.json", "runs/advisor/grid_usage_counter_6000_rate2000_slots16.json")
	a, trials, _ := drive(t, spec, w, 4*time.Second)
	if a.Outcome != results.AdviceAnswer || label(a.Answer.Mode, a.Answer.At) != "async-compact max_connections=16 slots=1" {
		t.Fatalf("outcome %s, answer %+v", a.Outcome, a.Answer)
	}
	got := statuses(a)
	if got["async max_connections=16 slots=16"] != results.ConfigFailed || got["async max_connections=32 slots=16"] != results.ConfigPruned {
		t.Errorf("async with 16 slots at 16: %s, at 32: %s", got["async max_connections=16 slots=16"], got["async max_connections=32 slots=16"])
	}
	if n := counted(trials); n[results.PhaseScreen]+n[results.PhaseRung] >= 24 {
		t.Errorf("trials by phase %v: the search ran as many trials as the grid", n)
	}

	// The same grid on a quiet machine, where sync with 16 slots held at pool 16 (the grid's
	// cheapest that held, and the advisor's answer there): the search names it.
	w = recorded(t, "runs/advisor/quiet/grid_usage_counter_6000_rate2000_slots1.json", "runs/advisor/quiet/grid_usage_counter_6000_rate2000_slots16.json")
	a, trials, _ = drive(t, spec, w, 4*time.Second)
	if a.Outcome != results.AdviceAnswer || label(a.Answer.Mode, a.Answer.At) != "sync max_connections=16 slots=16" {
		t.Fatalf("quiet grid: outcome %s, answer %+v", a.Outcome, a.Answer)
	}
	if got := statuses(a); got["sync max_connections=32 slots=1"] != results.ConfigPruned {
		t.Errorf("quiet grid: sync at pool 32 %s, want pruned by its pool 16's row lock", got["sync max_connections=32 slots=1"])
	}
	if n := counted(trials); n[results.PhaseScreen]+n[results.PhaseRung] >= 24 {
		t.Errorf("quiet grid: trials by phase %v: the search ran as many trials as the grid", n)
	}
}
