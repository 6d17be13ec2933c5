package render

import (
	"maps"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/results/resultstest"
)

// withConfig is a copy of rep whose runs have cfg applied (a nil value deletes the key) and
// whose command line is command.
func withConfig(rep *results.Report, command string, cfg map[string]any) *results.Report {
	out := *rep
	out.Environment.Command = command
	out.Runs = nil
	for _, r := range rep.Runs {
		r.Config = maps.Clone(r.Config)
		for k, v := range cfg {
			if v == nil {
				delete(r.Config, k)
			} else {
				r.Config[k] = v
			}
		}
		out.Runs = append(out.Runs, r)
	}
	return &out
}

func matchOf(c Comparison, side, mode string) Match {
	for _, m := range c.Matches {
		if m.Side == side && m.Mode == mode {
			return m
		}
	}
	return Match{}
}

func TestMatcherOneSidedKeys(t *testing.T) {
	const bin = "usage_counter_hotspot_baseline --requests 100000 --concurrency 64"
	old := withConfig(resultstest.SingleReport(), bin, nil)
	tests := []struct {
		name    string
		new     *results.Report
		pairs   int
		explain string // in the new sync group's match (reason or notes)
	}{
		{"a new flag left at its default",
			withConfig(resultstest.SingleReport(), bin, map[string]any{"flush-coalesce": true}), 2,
			"flush-coalesce true in new is its default; absent in old"},
		{"a new flag set on the command line",
			withConfig(resultstest.SingleReport(), bin+" --flush-coalesce=false", map[string]any{"flush-coalesce": false}), 0,
			"flush-coalesce false here (set on the new command line), absent there"},
		{"a flag the new binary dropped",
			withConfig(resultstest.SingleReport(), bin, map[string]any{"pool-size": nil}), 2,
			"pool-size 32 in old is its default; absent in new"},
		{"no command line recorded",
			withConfig(resultstest.SingleReport(), "", map[string]any{"flush-coalesce": false}), 2,
			"flush-coalesce false in new taken as its default (no command line recorded)"},
		{"non-shaping keys differ or appear",
			withConfig(resultstest.SingleReport(), bin+" --pg-download-version 17 --seed 9 -o /elsewhere.json", map[string]any{
				"pg-download-version": 17, "pg-download-cache": "/root/.cache", "seed": 9, "output": "/elsewhere.json",
				"schema": "hotspot_x", "postgres-url": "postgres://u:xxxxx@db/x", "repeat": 1, "calibrate": true}), 2,
			"paired with old sync"},
		{"a shaping key differs",
			withConfig(resultstest.SingleReport(), bin+" --flush-interval-ms 10", map[string]any{"flush-interval-ms": 10}), 0,
			"unpaired: the old sync runs differ in flush-interval-ms 10 here, 50 there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Compare(old, tt.new, DefaultOptions())
			if len(c.Pairs) != tt.pairs {
				t.Errorf("%d pairs, want %d:\n%s", len(c.Pairs), tt.pairs, renderComparison(t, c))
			}
			m := matchOf(c, "new", "sync")
			text := m.Reason + "\n" + strings.Join(m.Notes, "\n")
			if !strings.Contains(text, tt.explain) {
				t.Errorf("new sync match = %q, want %q", text, tt.explain)
			}
			if tt.pairs == 0 && (c.ExitCode() != ExitNotComparable || !strings.Contains(renderComparison(t, c), "verdict: NOTHING COMPARABLE")) {
				t.Errorf("nothing paired: exit %d, verdict %q", c.ExitCode(), c.Verdict())
			}
		})
	}
}

func TestMatcherAcross(t *testing.T) {
	old := resultstest.SingleReport()
	new := withConfig(resultstest.SingleReport(), "", map[string]any{"flush-batch-size": 10, "concurrency": 64})
	for i := range old.Runs {
		old.Runs[i].Config["flush-batch-size"] = 1000
	}
	if _, err := Compare(old, new, DefaultOptions()); err != ErrNoMatch {
		t.Fatalf("different batch sizes paired without --across: %v", err)
	}
	opt := DefaultOptions()
	opt.Across = []string{"flush-batch-size"}
	c := mustCompareOpt(t, old, new, opt)
	if len(c.Pairs) != 2 {
		t.Fatalf("--across flush-batch-size: %d pairs, want 2", len(c.Pairs))
	}
	if n := matchOf(c, "old", "async-compact").Notes; len(n) != 1 || n[0] != "flush-batch-size 1000 here, 10 there (--across)" {
		t.Errorf("notes = %q", n)
	}
	// --across does not loosen the other keys.
	new.Runs[1].Config["hot-keys"] = 8
	new.Environment.Command = "usage_counter_hotspot_baseline --flush-batch-size 10 --hot-keys 8"
	c = mustCompareOpt(t, old, new, opt)
	if want := "hot-keys 8 there (set on the new command line), absent here"; len(c.Pairs) != 1 || !strings.Contains(matchOf(c, "old", "async-compact").Reason, want) {
		t.Errorf("hot-keys difference ignored, want %q:\n%s", want, renderComparison(t, c))
	}
	// Two new groups that both pair under --across: each old group takes one, the other is
	// left unpaired and says why.
	twice := withConfig(resultstest.SingleReport(), "", map[string]any{"flush-batch-size": 10})
	more := withConfig(resultstest.SingleReport(), "", map[string]any{"flush-batch-size": 100})
	twice.Runs = append(twice.Runs, more.Runs[0])
	c = mustCompareOpt(t, old, twice, opt)
	if len(c.Pairs) != 2 || len(c.UnmatchedNew) != 1 || !strings.Contains(c.UnmatchedNew[0].Hint, "already paired") {
		t.Errorf("ambiguous --across:\n%s", renderComparison(t, c))
	}
	opt.Across = []string{"flush-batch-sise"}
	if _, err := Compare(old, new, opt); err == nil || !strings.Contains(err.Error(), "--across flush-batch-sise") {
		t.Errorf("unknown --across key: %v", err)
	}
}

// A report whose runs are 3× slower but whose stored summaries are unchanged is judged on its
// runs.
func TestCompareIgnoresStoredSummaries(t *testing.T) {
	old := resultstest.RepeatedReport()
	slow := resultstest.Degraded(old)
	slow.Summaries = old.Summaries
	c := mustCompare(t, old, slow, DefaultThresholds())
	if c.Passed() || c.Regressions != 2 {
		t.Errorf("3× slower runs under unchanged summaries passed:\n%s", renderComparison(t, c))
	}
}

func TestCompareCostPerRequest(t *testing.T) {
	old := resultstest.SingleReport()
	costly := func(stmts, commits, wal float64) *results.Report {
		r := withConfig(resultstest.SingleReport(), "", nil)
		db := *r.Runs[1].Database
		db.PerRequest.Statements, db.PerRequest.Commits, db.PerRequest.WALBytes = stmts, commits, wal
		r.Runs[1].Database = &db
		r.Runs[1].Load.ThroughputRPS *= 1.5 // faster: the cost check must not care
		return r
	}
	tests := []struct {
		name    string
		new     *results.Report
		reasons []string
	}{
		{"unchanged", costly(0.005, 0.004, 297), nil},
		// +60% statements and +50% commits, but below the absolute floors of 0.01/request.
		{"tiny denominators", costly(0.008, 0.006, 297), nil},
		{"WAL within 15%", costly(0.005, 0.004, 340), nil},
		{"small batches", costly(0.11, 0.11, 392),
			[]string{"statements/request rose 2100.0% (limit 15%)", "commits/request rose 2650.0% (limit 15%)", "WAL bytes/request rose 32.0% (limit 15%)"}},
	}
	for _, tt := range tests {
		c := mustCompare(t, old, tt.new, DefaultThresholds())
		got := c.Pairs[1].Reasons
		if strings.Join(got, "\n") != strings.Join(tt.reasons, "\n") {
			t.Errorf("%s: reasons %q, want %q", tt.name, got, tt.reasons)
		}
	}
	// Off disables it; a shared server's database-wide figures are shown, not judged.
	th := DefaultThresholds()
	th.MaxCostIncrease = Off
	if c := mustCompare(t, old, costly(0.11, 0.11, 392), th); !c.Passed() {
		t.Errorf("--max-cost-increase off still failed:\n%s", renderComparison(t, c))
	}
	shared := costly(0.11, 0.11, 392)
	shared.Runs[1].Database.Shared = true
	c := mustCompare(t, old, shared, DefaultThresholds())
	if !c.Passed() || !strings.Contains(renderComparison(t, c), "not judged: database-wide on a shared server") {
		t.Errorf("shared server figures judged:\n%s", renderComparison(t, c))
	}
}

func TestCompareLostAndDuplicated(t *testing.T) {
	old := resultstest.SingleReport()
	new := withConfig(resultstest.SingleReport(), "", nil)
	rc := *new.Runs[1].Reconciliation
	rc.Lost, rc.Duplicated = 3, 1
	new.Runs[1].Reconciliation = &rc
	th := DefaultThresholds()
	th.MaxThroughputDrop, th.MaxP95Rise, th.MaxCostIncrease, th.NoNewWaiters = Off, Off, Off, false
	c := mustCompare(t, old, new, th)
	if got := c.Pairs[1].Reasons; len(got) != 2 || got[0] != "lost requests: 3 (0 in old)" || got[1] != "duplicated requests: 1 (0 in old)" {
		t.Errorf("reasons = %q", got)
	}
}

func TestCompareMachineTiers(t *testing.T) {
	old := resultstest.SingleReport()
	// The same build on a machine a third as fast: throughput ⅓, latency 3×, efficiency equal.
	slowMachine := resultstest.Degraded(old)
	slowMachine.Environment.Calibration = resultstest.Calibration(1.0 / 3)

	tests := []struct {
		name    string
		old     *results.Report
		new     *results.Report
		opt     func(*Options)
		basis   string
		passed  bool
		verdict string
	}{
		{"same machine, calibrations agree", old, resultstest.Degraded(old), nil, BasisDirect, false, "REGRESSION (2 of 2 pairs)"},
		{"other machine, same efficiency", old, slowMachine, nil, BasisEfficiency, true, "PASS"},
		{"other machine, efficiency down", old, func() *results.Report {
			r := resultstest.Degraded(slowMachine)
			for i := range r.Runs {
				r.Runs[i].Efficiency = old.Runs[i].Efficiency / 3
			}
			return r
		}(), nil, BasisEfficiency, false, "REGRESSION (2 of 2 pairs)"},
		{"old report without calibration", func() *results.Report { r := *old; r.Environment.Calibration = nil; return &r }(), slowMachine, nil,
			BasisNone, true, "PASS (machine-independent checks only: throughput cannot be judged across machines)"},
		{"calibration skipped", old, func() *results.Report {
			r := *resultstest.Degraded(old)
			r.Environment.Calibration = &results.Calibration{Skipped: true}
			return &r
		}(), nil, BasisNone, true, "PASS (machine-independent checks only: throughput cannot be judged across machines)"},
		{"--same-machine without calibration", func() *results.Report { r := *old; r.Environment.Calibration = nil; return &r }(), resultstest.Degraded(old),
			func(o *Options) { o.SameMachine = true }, BasisDirect, false, "REGRESSION (2 of 2 pairs)"},
	}
	for _, tt := range tests {
		opt := DefaultOptions()
		if tt.opt != nil {
			tt.opt(&opt)
		}
		c := mustCompareOpt(t, tt.old, tt.new, opt)
		if c.Machines.Basis != tt.basis || c.Passed() != tt.passed || c.Verdict() != tt.verdict {
			t.Errorf("%s: basis %s passed %v verdict %q, want %s %v %q\n%s", tt.name, c.Machines.Basis, c.Passed(), c.Verdict(),
				tt.basis, tt.passed, tt.verdict, renderComparison(t, c))
		}
		wantExit := ExitOK
		if !tt.passed {
			wantExit = ExitRegression
		}
		if c.ExitCode() != wantExit {
			t.Errorf("%s: exit %d, want %d", tt.name, c.ExitCode(), wantExit)
		}
	}
}

func TestCalibrationsAgree(t *testing.T) {
	base := *resultstest.Calibration(1)
	tests := []struct {
		name  string
		other results.Calibration
		agree bool
	}{
		{"itself", base, true},
		{"5% faster", *resultstest.Calibration(1.05), true},
		// pool: 2,104 (2,050–2,180) vs 2,525 (2,460–2,616): 2,525 > 2,180 × 1.1 = 2,398.
		{"20% faster", *resultstest.Calibration(1.2), false},
		{"the issue's two machines", *resultstest.Calibration(774.0 / 2104), false},
		{"other pool size", func() results.Calibration { c := base; c.PoolConns = 32; return c }(), false},
		{"nothing in common", results.Calibration{PoolConns: 64, BatchedWriteConns: 2}, false},
	}
	for _, tt := range tests {
		got, why := CalibrationsAgree(base, tt.other, DefaultCalibrationTolerance)
		if got != tt.agree || why == "" {
			t.Errorf("%s: agree %v (%s), want %v", tt.name, got, why, tt.agree)
		}
	}
}
