package advise

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// fig is what a made-up run shows: its latencies in ms, its costs, its waits.
type fig struct {
	p99, lag, wal, redo, sessions, acquire, lockWait, sched float64
	waiters, perRow                                         int64 // perRow 0: not measured
	failed                                                  int64
	unverified                                              bool
	sent                                                    float64 // an open loop's share sent (0: a closed loop)
}

// made is a run of mode at pool showing f.
func made(mode testkit.Mode, pool int, f fig) results.Run {
	r := results.Run{Mode: mode.String(), Config: results.RunConfig{MaxConnections: pool}}
	r.Verification.Passed = !f.unverified
	r.Load.LatencyMs.P99, r.Load.AcquireWaitMs.P99, r.Load.FailedRequests = f.p99, f.acquire, f.failed
	r.Load.ThroughputRPS = 1000
	r.Pool.MaxServerSessions = int64(f.sessions)
	r.LockMonitor.MaxLockWaiters, r.LockMonitor.MaxLockWaitMs = f.waiters, f.lockWait
	r.LockMonitor.MaxWaitersByRelation = map[string]int64{"api_keys": f.waiters}
	if f.perRow > 0 {
		r.LockMonitor.MaxWaitersPerRowByRelation = map[string]int64{"api_keys": f.perRow}
	}
	if mode.Async() {
		r.Queue = &results.Queue{PersistLagMs: results.Latency{P99: f.lag}}
	}
	if f.wal > 0 || f.redo > 0 {
		r.Database = &results.Database{PerRequest: results.PerRequest{WALBytes: f.wal, RedoBytes: f.redo}}
	}
	if f.sent > 0 {
		r.Load.OpenLoop = &results.OpenLoop{SentShare: f.sent, ScheduleLagMs: results.Latency{P99: f.sched}}
	}
	return r
}

// at reads a trial's value on axis a (0 when it has none).
func at(t Trial, a *results.Axis) float64 { return t.At[a.Name].Num }

// closedSpec is a closed loop of 100 workers over modes and space, a full length of 8s and a
// budget that never ends the search.
func closedSpec(modes []testkit.Mode, space map[string][]results.Value, o results.Objectives) Spec {
	return Spec{Modes: modes, Space: space, Objectives: o, Concurrency: 100, Length: 8 * time.Second, Budget: 100 * time.Hour}
}

// The recorded pool ladder with a lag objective besides p99: the outbox records no lag, so its
// first screening rules the mode out; async's lag (1.3 s) prunes its larger pools, the queue's
// workers writing its batches on connections of their own; async-compact holds at 4 and 16.
func TestLagObjective(t *testing.T) {
	spec := Spec{Modes: counters.Modes, Space: pools(4, 16, 64, 128), Objectives: results.Objectives{P99Ms: 100, LagP99Ms: 200},
		Concurrency: 500, Length: 8 * time.Second, Budget: time.Hour}
	a, trials, _ := drive(t, spec, recorded(t, "runs/pool/ladder-direct.json"), 2*time.Second)
	if a.Outcome != results.AdviceAnswer || label(a.Answer.Mode, a.Answer.At) != "async-compact max_connections=4" ||
		label(a.RunnerUp.Mode, a.RunnerUp.At) != "async-compact max_connections=16" {
		t.Fatalf("outcome %s, answer %+v, runner-up %+v", a.Outcome, a.Answer, a.RunnerUp)
	}
	got := statuses(a)
	for k, v := range map[string]string{
		"sync max_connections=4": results.ConfigFailed, "sync max_connections=128": results.ConfigPruned,
		"outbox max_connections=4": results.ConfigFailed, "outbox max_connections=16": results.ConfigPruned,
		"outbox max_connections=128": results.ConfigPruned, "async max_connections=4": results.ConfigFailed,
		"async max_connections=16": results.ConfigPruned, "async max_connections=128": results.ConfigPruned,
		"async-compact max_connections=64": results.ConfigUntried,
	} {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	for _, c := range a.Configurations {
		if c.Mode == "outbox" && c.Status == results.ConfigPruned && !strings.Contains(c.Why, "outbox records no persist lag") {
			t.Errorf("outbox pruned because %q", c.Why)
		}
		if c.Mode == "async" && c.Status == results.ConfigPruned && !strings.Contains(c.Why, "lag p99 1.30 s > 200 ms (6.5×)") {
			t.Errorf("async pruned because %q", c.Why)
		}
	}
	if n := counted(trials); n[results.PhaseScreen] != 5 || n[results.PhaseRung] != 4 {
		t.Errorf("trials by phase %v: want 5 screenings (sync, outbox, async at 4; async-compact at 4 and 16), 4 longer", n)
	}
}

// Every configuration missing the objective: none holds, the closest named with its miss.
func TestNothingHolds(t *testing.T) {
	spec := Spec{Modes: counters.Modes, Space: pools(4, 16, 64, 128), Objectives: results.Objectives{P99Ms: 0.0005},
		Concurrency: 500, Length: 8 * time.Second, Budget: time.Hour}
	a, trials, _ := drive(t, spec, recorded(t, "runs/pool/ladder-direct.json"), 2*time.Second)
	if a.Outcome != results.AdviceNoneHolds || a.Answer != nil || a.Closest == nil {
		t.Fatalf("outcome %s, answer %v, closest %v", a.Outcome, a.Answer, a.Closest)
	}
	// Recorded p99s of 1 µs (async at 4, async-compact at 16 and 128) miss by 2×, the least:
	// the first of them in the order of cost is the closest.
	if label(a.Closest.Mode, a.Closest.At) != "async max_connections=4" || len(a.Closest.Misses) != 1 || a.Closest.Misses[0].Ratio != 2 {
		t.Errorf("closest %+v", a.Closest)
	}
	if n := counted(trials); n[results.PhaseConfirm]+n[results.PhaseHeadroom]+n[results.PhaseRung] != 0 {
		t.Errorf("trials by phase %v: want screenings only", n)
	}
}

// A budget that holds no screening and the confirmation after it: nothing runs, and the
// advice lists the first screenings in the order of cost.
func TestBudgetTooSmallToDecide(t *testing.T) {
	spec := Spec{Modes: counters.Modes, Space: pools(4, 16, 64, 128), Objectives: results.Objectives{P99Ms: 500},
		Concurrency: 500, Length: 8 * time.Second, Budget: 5 * time.Second}
	a, trials, _ := drive(t, spec, recorded(t, "runs/pool/ladder-direct.json"), 2*time.Second)
	if a.Outcome != results.AdviceCannotDecide || len(trials) != 0 || len(a.Next) != Proposals {
		t.Fatalf("outcome %s after %d trials, next %v", a.Outcome, len(trials), a.Next)
	}
	if p := a.Next[0]; p.Mode != "sync" || p.Phase != results.PhaseScreen || p.LengthMs != 2000 || p.At[results.AxisPool.Name].Num != 4 {
		t.Errorf("next %+v: want the screening of sync at pool 4 for 2s", p)
	}
	if a.Next[4].Mode != "outbox" {
		t.Errorf("the fifth proposal is %+v: want the outbox's first screening", a.Next[4])
	}
	for _, c := range a.Configurations {
		if c.Status != results.ConfigUntried || !strings.Contains(c.Why, "budget") {
			t.Errorf("%s at %v: %s, %q", c.Mode, c.At, c.Status, c.Why)
		}
	}

	// 40s holds two screenings (each 2s + 2s, with a confirmation's 3 × 10s kept back) and not
	// the outbox's 4s trial after them: it is the first thing the search would run next.
	spec.Budget = 40 * time.Second
	a, trials, _ = drive(t, spec, recorded(t, "runs/pool/ladder-direct.json"), 2*time.Second)
	if a.Outcome != results.AdviceCannotDecide || len(trials) != 2 || a.Next[0].Mode != "outbox" || a.Next[0].LengthMs != 4000 {
		t.Fatalf("outcome %s after %d trials, next %+v", a.Outcome, len(trials), a.Next)
	}
	if got := statuses(a)["outbox max_connections=4"]; got != results.ConfigUnfinished {
		t.Errorf("the outbox at 4, screened, is %s", got)
	}
}

// A screening that misses by at most NearMiss earns the next rung, and holds there; one that
// misses by more is out at once.
func TestNearMiss(t *testing.T) {
	w := func(tr Trial) results.Run {
		pool := int(at(tr, results.AxisPool))
		switch {
		case pool == 4 && tr.Length == 2*time.Second:
			return made(tr.Mode, pool, fig{p99: 60}) // 1.2×
		case pool == 4:
			return made(tr.Mode, pool, fig{p99: 45})
		case tr.Length == 2*time.Second:
			return made(tr.Mode, pool, fig{p99: 65}) // 1.3×
		}
		return made(tr.Mode, pool, fig{p99: 45})
	}
	spec := closedSpec([]testkit.Mode{testkit.Sync}, pools(4, 8), results.Objectives{P99Ms: 50})
	a, trials, _ := drive(t, spec, w, time.Second)
	if got := statuses(a); got["sync max_connections=4"] != results.ConfigHeld || got["sync max_connections=8"] != results.ConfigFailed {
		t.Fatalf("statuses %v", got)
	}
	if a.RunnerUp != nil || a.Answer == nil || a.Confirmation == nil || len(a.Confirmation.Winner) != 1+ConfirmPairs {
		t.Errorf("answer %v, runner-up %v, confirmation %+v: want the answer alone, repeated", a.Answer, a.RunnerUp, a.Confirmation)
	}
	if trials[0].Length != 2*time.Second || trials[1].Length != 4*time.Second || trials[2].Length != 8*time.Second || trials[3].Length != 2*time.Second {
		t.Errorf("trial lengths %v, %v, %v, %v: want pool 4 at 2s, 4s, 8s, then pool 8 screened", trials[0].Length, trials[1].Length, trials[2].Length, trials[3].Length)
	}
}

// The configurations of one group (the queue's batch here) are all screened, then taken
// further in the order of their screening: less WAL first. The repeats, which find the other
// writes less, make it the answer (the order of cost's WAL, judged).
func TestGroupRankedByWALThenJudged(t *testing.T) {
	space, w := batchesByLog(func(f *fig) *float64 { return &f.wal })
	spec := closedSpec([]testkit.Mode{testkit.AsyncCompact}, space, results.Objectives{P99Ms: 5})
	a, trials, _ := drive(t, spec, w, time.Second)
	if trials[0].Phase != results.PhaseScreen || trials[1].Phase != results.PhaseScreen || at(trials[2], results.AxisBatch) != 1000 {
		t.Fatalf("trials %v %v %v: want both screened, then batch 1000 taken further", trials[0], trials[1], trials[2])
	}
	cf := a.Confirmation
	if a.Answer == nil || at(Trial{At: a.Answer.At}, results.AxisBatch) != 50 || !cf.Swapped || cf.CheaperBy != "less WAL per request" || cf.WithinNoise {
		t.Fatalf("answer %+v, confirmation %+v: want batch 50 by its WAL", a.Answer, cf)
	}
}

// On MySQL and MariaDB the order of cost reads InnoDB's redo where PostgreSQL's WAL would be:
// the same search as TestGroupRankedByWALThenJudged, its figures redo's.
func TestGroupRankedByRedoOnMySQL(t *testing.T) {
	space, w := batchesByLog(func(f *fig) *float64 { return &f.redo })
	spec := closedSpec([]testkit.Mode{testkit.AsyncCompact}, space, results.Objectives{P99Ms: 5})
	a, trials, _ := drive(t, spec, w, time.Second)
	if at(trials[2], results.AxisBatch) != 1000 {
		t.Fatalf("third trial %v: want batch 1000, ranked first by its screening's redo", trials[2])
	}
	cf := a.Confirmation
	if a.Answer == nil || at(Trial{At: a.Answer.At}, results.AxisBatch) != 50 || !cf.Swapped || cf.CheaperBy != "less redo per request" || cf.WithinNoise {
		t.Fatalf("answer %+v, confirmation %+v: want batch 50 by its redo", a.Answer, cf)
	}
}

// batchesByLog is the queue's batch of 50 and 1000, and a world where the log per request that
// log points at (WAL, redo) ranks batch 1000 first in its screening and batch 50 lower at length.
func batchesByLog(log func(*fig) *float64) (map[string][]results.Value, world) {
	space := map[string][]results.Value{results.AxisBatch.Name: {results.Number(50), results.Number(1000)}}
	return space, func(tr Trial) results.Run {
		batch := at(tr, results.AxisBatch)
		f := fig{p99: 0.01, lag: 50}
		v := log(&f)
		*v = 300
		switch {
		case tr.Phase == results.PhaseScreen && batch == 1000:
			*v = 250 // the screening ranks batch 1000 first
		case tr.Phase == results.PhaseScreen:
		case batch == 50:
			*v = 200 + float64(len(tr.Phase)) // less at length, a little noise
		}
		return made(tr.Mode, 64, f)
	}
}

// A winner whose repeats miss the objective gives way to the runner-up that held.
func TestWinnerFailsItsConfirmation(t *testing.T) {
	n := 0
	w := func(tr Trial) results.Run {
		pool := int(at(tr, results.AxisPool))
		f := fig{p99: 40}
		if pool == 4 && tr.Phase == results.PhaseConfirm {
			n++
			f.p99 = 60 // pool 4 held once, then misses
		}
		return made(tr.Mode, pool, f)
	}
	spec := closedSpec([]testkit.Mode{testkit.Sync}, pools(4, 8), results.Objectives{P99Ms: 50})
	a, _, _ := drive(t, spec, w, time.Second)
	if n != ConfirmPairs || a.Answer == nil || at(Trial{At: a.Answer.At}, results.AxisPool) != 8 || a.RunnerUp != nil || !a.Confirmation.Swapped {
		t.Fatalf("answer %+v, runner-up %+v, confirmation %+v", a.Answer, a.RunnerUp, a.Confirmation)
	}
	if c := a.Configurations[0]; c.Status != results.ConfigFailed || !strings.Contains(c.Why, "over its 4 runs at that length: p99 60.0 ms > 50.0 ms (1.2×)") {
		t.Errorf("pool 4: %s, %q", c.Status, c.Why)
	}
}

// The pruning rules, each on the figures that trigger it, and none on those that do not.
func TestPruningRules(t *testing.T) {
	slots := func(v ...float64) []results.Value {
		var out []results.Value
		for _, x := range v {
			out = append(out, results.Number(x))
		}
		return out
	}
	space := map[string][]results.Value{results.AxisSlots.Name: slots(1, 16), results.AxisPool.Name: slots(8, 32)}
	cases := []struct {
		name    string
		o       results.Objectives
		first   fig // sync with one slot at pool 8
		pruned  []string
		remains []string
	}{
		{"row lock", results.Objectives{P99Ms: 10}, fig{p99: 100, waiters: 7, perRow: 8},
			[]string{"sync max_connections=32 slots=1"}, []string{"sync max_connections=8 slots=16"}},
		{"pool wait", results.Objectives{P99Ms: 10}, fig{p99: 100, waiters: 1, perRow: 2, acquire: 90},
			nil, []string{"sync max_connections=32 slots=1", "sync max_connections=8 slots=16"}},
		{"no row queue", results.Objectives{P99Ms: 10}, fig{p99: 100, waiters: 0, perRow: 1, acquire: 90},
			[]string{"sync max_connections=8 slots=16"}, []string{"sync max_connections=32 slots=1"}},
		{"sessions", results.Objectives{MaxServerSessions: 5}, fig{p99: 1, sessions: 9},
			[]string{"sync max_connections=32 slots=1"}, []string{"sync max_connections=8 slots=16"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(closedSpec([]testkit.Mode{testkit.Sync}, space, tc.o))
			tr, _ := s.Next(0)
			if at(tr, results.AxisPool) != 8 || at(tr, results.AxisSlots) != 1 {
				t.Fatalf("first trial at %v", tr.At)
			}
			s.Observe(0, made(tr.Mode, 8, tc.first), tr.Length)
			a := s.Advice(nil)
			got := statuses(a)
			for _, k := range tc.pruned {
				if got[k] != results.ConfigPruned {
					t.Errorf("%s: %s, want pruned", k, got[k])
				}
			}
			for _, k := range tc.remains {
				if got[k] == results.ConfigPruned {
					t.Errorf("%s pruned, want it left to run", k)
				}
			}
		})
	}
}

// A configuration whose screening the failing one's dominated on every objective is pruned once
// that one fails a longer trial.
func TestDominatedPruned(t *testing.T) {
	space := map[string][]results.Value{results.AxisBatch.Name: {results.Number(50), results.Number(200), results.Number(1000)}}
	w := func(tr Trial) results.Run {
		f := fig{p99: 0.01, lag: 90, wal: 300}
		switch batch := at(tr, results.AxisBatch); {
		case batch == 50 && tr.Phase == results.PhaseScreen:
			f.lag = 80 // the best screening
		case batch == 50:
			f.lag = 150 // fails longer
		case batch == 200:
			f.lag = 95 // no better than batch 50's screening on the lag, the one objective
		case batch == 1000:
			f.lag, f.wal = 70, 400 // better lag, more WAL: ranked after batch 50, not dominated
		}
		return made(tr.Mode, 64, f)
	}
	spec := closedSpec([]testkit.Mode{testkit.AsyncCompact}, space, results.Objectives{LagP99Ms: 100})
	a, _, _ := drive(t, spec, w, time.Second)
	got := statuses(a)
	if got["async-compact flush_batch_size=50"] != results.ConfigFailed || got["async-compact flush_batch_size=200"] != results.ConfigPruned ||
		got["async-compact flush_batch_size=1000"] != results.ConfigHeld {
		t.Fatalf("statuses %v", got)
	}
	if c := a.Configurations[1]; !strings.Contains(c.Why, "no better than that of async-compact · batch 50") {
		t.Errorf("batch 200 pruned because %q", c.Why)
	}
}

// What a run misses of each objective, and what cannot be shown held.
func TestMisses(t *testing.T) {
	o := results.Objectives{P99Ms: 50, LagP99Ms: 100, MaxServerSessions: 10}
	cases := []struct {
		mode testkit.Mode
		f    fig
		open bool
		want []string // objectives missed, in order
	}{
		{testkit.Sync, fig{p99: 40, sessions: 9}, false, nil},
		{testkit.Sync, fig{p99: 60, sessions: 11}, false, []string{"p99_ms", "max_server_sessions"}},
		{counters.Outbox, fig{p99: 40, sessions: 9}, false, []string{"persist_lag_p99_ms"}}, // not measured
		{testkit.Async, fig{p99: 0.01, lag: 120, sessions: 4}, false, []string{"persist_lag_p99_ms"}},
		{testkit.Async, fig{p99: 0.01, lag: 20}, false, []string{"max_server_sessions"}}, // not measured
		{testkit.Sync, fig{p99: 40, sessions: 9, failed: 3, unverified: true}, false, []string{"verified", "failed_requests"}},
		{testkit.Sync, fig{p99: 40, sessions: 9, sent: 0.9}, true, []string{"sent_share"}},
		{testkit.Sync, fig{p99: 40, sessions: 9, sent: 0.96}, true, nil},
	}
	for i, tc := range cases {
		var got []string
		for _, m := range missesOf(figuresOf(made(tc.mode, 8, tc.f)), tc.mode, o, tc.open) {
			got = append(got, m.Objective)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("case %d (%s %+v): missed %v, want %v", i, tc.mode, tc.f, got, tc.want)
		}
	}
}

// The headroom of an open loop: the rate doubled until a step's screening misses, then the
// step between, each screened; then the knee at the full length. What broke first is read from
// the failing step's figures.
func TestHeadroomOpenLoop(t *testing.T) {
	w := func(tr Trial) results.Run {
		rate := at(tr, results.AxisRate)
		f := fig{p99: 10, sent: 1}
		if rate >= 300 { // the workers cannot keep up: arrivals wait for one
			f.p99, f.sched, f.sent = 400, 380, 0.97
		}
		return made(tr.Mode, 16, f)
	}
	spec := Spec{Modes: []testkit.Mode{testkit.Sync}, Space: pools(16), Objectives: results.Objectives{P99Ms: 50}, Rate: 100,
		Concurrency: 64, Length: 8 * time.Second, Budget: 100 * time.Hour}
	a, _, _ := drive(t, spec, w, time.Second)
	h := a.Headroom
	want := []string{"200 screened held", "400 screened missed", "283 screened held", "283 full held"}
	if got := stepsText(h); !slices.Equal(got, want) || h.Held.Num != 283 || h.Failed.Num != 400 || h.Breaks != results.BreaksClient {
		t.Fatalf("headroom %+v: want steps %v, held 283, failed 400, the client broke; steps %v", h, want, got)
	}
}

// A knee that held its screening but misses at the full length is not the knee: the step below
// it that held is run at the full length, and the failing step is the full-length one.
func TestHeadroomKneeMissesAtFullLength(t *testing.T) {
	const full = 8 * time.Second
	w := func(tr Trial) results.Run {
		rate := at(tr, results.AxisRate)
		f := fig{p99: 10, sent: 1}
		if rate >= 300 || rate >= 250 && tr.Length == full { // the lock's queue builds up over a longer run
			f.p99, f.waiters, f.lockWait = 400, 16, 380
		}
		return made(tr.Mode, 16, f)
	}
	spec := Spec{Modes: []testkit.Mode{testkit.Sync}, Space: pools(16), Objectives: results.Objectives{P99Ms: 50}, Rate: 100,
		Concurrency: 64, Length: full, Budget: 100 * time.Hour}
	a, _, _ := drive(t, spec, w, time.Second)
	h := a.Headroom
	want := []string{"200 screened held", "400 screened missed", "283 screened held", "283 full missed", "200 full held"}
	if got := stepsText(h); !slices.Equal(got, want) || h.Held.Num != 200 || h.Failed.Num != 283 || h.Breaks != results.BreaksRowLock {
		t.Fatalf("headroom %+v: want steps %v, held 200, failed 283, the row lock broke; steps %v", h, want, got)
	}
}

// A budget that holds the ramp's screenings but not its knee's full-length run says so, and
// the knee stays at the load the winner held at the full length.
func TestHeadroomBudgetBeforeTheKnee(t *testing.T) {
	w := func(tr Trial) results.Run { return made(tr.Mode, 16, fig{p99: 10, sent: 1}) }
	spec := Spec{Modes: []testkit.Mode{testkit.Sync}, Space: pools(16), Objectives: results.Objectives{P99Ms: 50}, Rate: 100,
		Concurrency: 64, Length: 8 * time.Second, Budget: 100 * time.Hour}
	s := New(spec)
	a, trials, _ := driveWatched(t, s, w, time.Second, func(tr Trial, elapsed time.Duration) {
		if tr.Phase == results.PhaseHeadroom && len(s.head.steps) == HeadroomSteps {
			s.spec.Budget = elapsed + 5*time.Second // room for a screening, not for the knee
		}
	})
	for _, tr := range trials {
		if tr.Phase == results.PhaseHeadroom && tr.full {
			t.Fatalf("the knee ran at the full length beyond the budget: %+v", tr)
		}
	}
	if h := a.Headroom; h == nil || h.Held.Num != 100 || len(h.Steps) != HeadroomSteps {
		t.Fatalf("headroom %+v: want the %d screenings and the knee at the base, 100/s", h, HeadroomSteps)
	}
	if len(a.Notes) != 1 || !strings.Contains(a.Notes[0], "before its knee ran at the full length: its screenings held up to 1,600") {
		t.Errorf("notes %q", a.Notes)
	}
}

// stepsText is a ramp's steps in words: "283 full held", "400 screened missed".
func stepsText(h *results.Headroom) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, st := range h.Steps {
		s := fmt.Sprintf("%g screened", st.Value.Num)
		if st.Full {
			s = fmt.Sprintf("%g full", st.Value.Num)
		}
		if st.Held {
			out = append(out, s+" held")
		} else {
			out = append(out, s+" missed")
		}
	}
	return out
}

// What broke first, for each kind of failing step.
func TestDiagnose(t *testing.T) {
	o := results.Objectives{P99Ms: 50, LagP99Ms: 100}
	cases := []struct {
		mode testkit.Mode
		f    fig
		want string
	}{
		{testkit.Sync, fig{p99: 300, waiters: 63, lockWait: 250, acquire: 200}, results.BreaksRowLock},
		{testkit.Sync, fig{p99: 300, waiters: 2, acquire: 250}, results.BreaksPool},
		{testkit.Async, fig{p99: 0.01, lag: 400}, results.BreaksPersistLag},
		{testkit.Sync, fig{p99: 300, waiters: 2, acquire: 10, lockWait: 5}, results.BreaksUnclear},
		{testkit.Sync, fig{p99: 40, unverified: true}, results.BreaksVerified},
	}
	for _, tc := range cases {
		r := made(tc.mode, 64, tc.f)
		f := figuresOf(r)
		got, detail := diagnose(trial{figs: f, misses: missesOf(f, tc.mode, o, false)}, figures{lag: 50, p99: 20})
		if got != tc.want || detail == "" {
			t.Errorf("%s %+v: %s (%q), want %s", tc.mode, tc.f, got, detail, tc.want)
		}
	}
}

// A search stopped mid-way (a signal, a broken run) says so, with what it ran.
func TestStopped(t *testing.T) {
	s := New(closedSpec([]testkit.Mode{testkit.Sync}, pools(4, 8), results.Objectives{P99Ms: 50}))
	tr, _ := s.Next(0)
	s.Observe(0, made(tr.Mode, 4, fig{p99: 40}), tr.Length)
	if _, ok := s.Next(time.Minute); !ok {
		t.Fatal("the search ended after one screening")
	}
	s.Stop()
	if _, ok := s.Next(2 * time.Minute); ok {
		t.Fatal("a stopped search proposed a trial")
	}
	a := s.Advice([]results.Run{made(tr.Mode, 4, fig{p99: 40})})
	if a.Outcome != results.AdviceStopped || a.Answer != nil || a.Configurations[0].Status != results.ConfigUnfinished {
		t.Errorf("outcome %s, answer %v, first configuration %+v", a.Outcome, a.Answer, a.Configurations[0])
	}
}

// A stop during the headroom's ramp keeps the confirmed answer.
func TestStoppedDuringTheRamp(t *testing.T) {
	s := New(closedSpec([]testkit.Mode{testkit.Sync}, pools(4), results.Objectives{P99Ms: 50}))
	var runs []results.Run
	for {
		tr, ok := s.Next(0)
		if !ok {
			t.Fatal("the search ended before its ramp")
		}
		if tr.Phase == results.PhaseHeadroom {
			break
		}
		runs = append(runs, made(tr.Mode, 4, fig{p99: 40}))
		s.Observe(len(runs)-1, runs[len(runs)-1], tr.Length)
	}
	s.Stop()
	if a := s.Advice(runs); a.Outcome != results.AdviceAnswer || a.Answer == nil || len(a.Notes) != 1 {
		t.Errorf("outcome %s, answer %v, notes %v", a.Outcome, a.Answer, a.Notes)
	}
}
