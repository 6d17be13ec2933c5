package judge

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
)

// withConfig is a copy of rep whose runs have set applied to their config (and suite flags
// set in its Suite; a nil value deletes the flag) and whose command line is command.
func withConfig(rep *results.Report, command string, set func(*results.RunConfig), suite map[string]any) *results.Report {
	out := *rep
	out.Environment.Command = command
	out.Runs = nil
	for _, r := range rep.Runs {
		r.Config.Suite = maps.Clone(r.Config.Suite)
		for k, v := range suite {
			if v == nil {
				delete(r.Config.Suite, k)
			} else {
				r.Config.Suite[k] = v
			}
		}
		if set != nil {
			set(&r.Config)
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
	old := withConfig(resultstest.SingleReport(), bin, nil, nil)
	tests := []struct {
		name    string
		new     *results.Report
		pairs   int
		explain string // in the new sync group's match (reason or notes)
	}{
		{"a new suite flag left at its default",
			withConfig(resultstest.SingleReport(), bin, nil, map[string]any{"flush_coalesce": true}), 2,
			"flush_coalesce true in new is its default; absent in old"},
		{"a new suite flag set on the command line",
			withConfig(resultstest.SingleReport(), bin+" --flush-coalesce=false", nil, map[string]any{"flush_coalesce": false}), 0,
			"flush_coalesce false here (set on the new command line), absent there"},
		{"a suite flag the new binary dropped",
			withConfig(resultstest.SingleReport(), bin, nil, map[string]any{"pool_size": nil}), 2,
			"pool_size 32 in old is its default; absent in new"},
		{"no command line recorded",
			withConfig(resultstest.SingleReport(), "", nil, map[string]any{"flush_coalesce": false}), 2,
			"flush_coalesce false in new taken as its default (no command line recorded)"},
		{"non-shaping settings differ",
			withConfig(resultstest.SingleReport(), bin+" --pg-download-version 17 --seed 9 -o /elsewhere.json", func(c *results.RunConfig) {
				c.PgDownloadVersion, c.PgDownloadCache, c.Seed = 17, "/root/.cache", 9
				c.Schema, c.PostgresURL, c.Repeat = "hotspot_x", "postgres://u:xxxxx@db/x", 1
			}, nil), 2,
			"paired with old sync"},
		{"a shaping setting differs",
			withConfig(resultstest.SingleReport(), bin+" --flush-interval-ms 10", func(c *results.RunConfig) { c.FlushIntervalMs = 10 }, nil), 0,
			"unpaired: the old sync runs differ in flush_interval_ms 10 here, 50 there"},
		{"an engine setting left out means its off value",
			withConfig(resultstest.SingleReport(), bin, func(c *results.RunConfig) { c.MaxTries, c.RetryBackoffMs = 1, 20 }, nil), 2,
			"paired with old sync"},
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
	new := withConfig(resultstest.SingleReport(), "", func(c *results.RunConfig) { c.FlushBatchSize = 10 }, nil)
	for i := range old.Runs {
		old.Runs[i].Config.FlushBatchSize = 1000
	}
	if _, err := Compare(old, new, DefaultOptions()); err != ErrNoMatch {
		t.Fatalf("different batch sizes paired without --across: %v", err)
	}
	opt := DefaultOptions()
	// The flag's name and the config key are the same setting.
	for _, name := range []string{"flush-batch-size", "flush_batch_size"} {
		opt.Across = []string{name}
		c := mustCompareOpt(t, old, new, opt)
		if len(c.Pairs) != 2 {
			t.Fatalf("--across %s: %d pairs, want 2", name, len(c.Pairs))
		}
		if n := matchOf(c, "old", "async-compact").Notes; len(n) != 1 || n[0] != "flush_batch_size 1000 here, 10 there (--across)" {
			t.Errorf("notes = %q", n)
		}
	}
	// --across does not loosen the other keys.
	new.Runs[1].Config.HotKeys = 8
	c := mustCompareOpt(t, old, new, opt)
	if want := "hot_keys 1 here, 8 there"; len(c.Pairs) != 1 || !strings.Contains(matchOf(c, "old", "async-compact").Reason, want) {
		t.Errorf("hot_keys difference ignored, want %q:\n%s", want, renderComparison(t, c))
	}
	// A duration's flag names its _ms key.
	opt.Across = []string{"flush-batch-size", "hot-keys", "duration"}
	c = mustCompareOpt(t, old, new, opt)
	if len(c.Pairs) != 2 || !slices.Equal(c.Options.Across, opt.Across) {
		t.Errorf("--across %q: %d pairs, across %q", opt.Across, len(c.Pairs), c.Options.Across)
	}
	opt.Across = []string{"flush-batch-size"}
	// Two new groups that both pair under --across: each old group takes one, the other is
	// left unpaired and says why.
	twice := withConfig(resultstest.SingleReport(), "", func(c *results.RunConfig) { c.FlushBatchSize = 10 }, nil)
	more := withConfig(resultstest.SingleReport(), "", func(c *results.RunConfig) { c.FlushBatchSize = 100 }, nil)
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
		r := withConfig(resultstest.SingleReport(), "", nil, nil)
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
	new := withConfig(resultstest.SingleReport(), "", nil, nil)
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
