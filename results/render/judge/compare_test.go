package judge

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
)

// withThresholds is the default options with th.
func withThresholds(th Thresholds) Options {
	o := DefaultOptions()
	o.Thresholds = th
	return o
}

func mustCompare(t *testing.T, old, new *results.Report, th Thresholds) Comparison {
	t.Helper()
	return mustCompareOpt(t, old, new, withThresholds(th))
}

func mustCompareOpt(t *testing.T, old, new *results.Report, opt Options) Comparison {
	t.Helper()
	c, err := Compare(old, new, opt)
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	return c
}

func renderComparison(t *testing.T, c Comparison) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderComparison(&buf, c, false); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestCompareSelfPasses(t *testing.T) {
	strict := Thresholds{MaxThroughputDrop: 0, MaxP95Rise: 0, MaxP99Rise: 0, NoNewWaiters: true, RequireVerified: true}
	for name, rep := range map[string]*results.Report{"single": resultstest.SingleReport(), "repeated": resultstest.RepeatedReport(), "ladder": resultstest.LadderReport()} {
		for _, th := range []Thresholds{DefaultThresholds(), strict} {
			c := mustCompare(t, rep, rep, th)
			if !c.Passed() || c.Regressions != 0 {
				t.Errorf("%s: self-compare failed:\n%s", name, renderComparison(t, c))
			}
			if len(c.UnmatchedOld)+len(c.UnmatchedNew) != 0 {
				t.Errorf("%s: self-compare has unmatched runs: %+v %+v", name, c.UnmatchedOld, c.UnmatchedNew)
			}
			want := len(rep.Runs)
			if rep.Summaries != nil {
				want = len(rep.Summaries)
			}
			if len(c.Pairs) != want {
				t.Errorf("%s: %d pairs, want %d", name, len(c.Pairs), want)
			}
		}
	}
}

// A report read back from JSON (config numbers become float64) matches the one built in memory.
func TestCompareAfterJSONRoundTrip(t *testing.T) {
	rep := resultstest.RepeatedReport()
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rep.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCompare(t, rep, back, DefaultThresholds())
	if !c.Passed() || len(c.Pairs) != 2 || len(c.UnmatchedNew) != 0 {
		t.Errorf("round trip does not compare equal:\n%s", renderComparison(t, c))
	}
}

func TestCompareDegradedFails(t *testing.T) {
	for name, rep := range map[string]*results.Report{"single": resultstest.SingleReport(), "repeated": resultstest.RepeatedReport()} {
		c := mustCompare(t, rep, resultstest.Degraded(rep), DefaultThresholds())
		if c.Passed() || c.Regressions != len(c.Pairs) {
			t.Errorf("%s: ⅓ throughput and 3× p95 passed:\n%s", name, renderComparison(t, c))
			continue
		}
		p := c.Pairs[0]
		if p.Verdict != VerdictRegression || len(p.Reasons) != 2 {
			t.Errorf("%s: verdict %s reasons %q, want throughput and p95", name, p.Verdict, p.Reasons)
		}
		tput := p.Metrics[0]
		if tput.Metric != results.MetricThroughputRPS || !tput.Regressed || tput.Ratio == nil || *tput.Ratio > 0.34 || *tput.Ratio < 0.33 {
			t.Errorf("%s: throughput delta = %+v", name, tput)
		}
		out := renderComparison(t, c)
		for _, want := range []string{"verdict: REGRESSION", "throughput dropped 66.7% (limit 10%)", "p95 rose 200.0% (limit 20%)", "FAIL drop ≤ 10%"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, out)
			}
		}
	}
}

func TestCompareThresholdEdges(t *testing.T) {
	old := resultstest.SingleReport()
	slower := resultstest.SingleReport()
	for i := range slower.Runs {
		slower.Runs[i].Load.ThroughputRPS *= 0.90 // exactly the 10% limit
		slower.Runs[i].Load.LatencyMs.P95 *= 1.19
		slower.Runs[i].Load.LatencyMs.P99 *= 3
	}
	if c := mustCompare(t, old, slower, DefaultThresholds()); !c.Passed() {
		t.Errorf("a drop at the limit and p99 (off by default) should pass:\n%s", renderComparison(t, c))
	}
	th := DefaultThresholds()
	th.MaxP99Rise = 0.5
	if c := mustCompare(t, old, slower, th); c.Passed() {
		t.Errorf("p99 3× with --max-p99-rise 50%% should fail")
	}
	th = DefaultThresholds()
	th.MaxThroughputDrop = Off
	th.MaxP95Rise = Off
	if c := mustCompare(t, old, resultstest.Degraded(old), th); !c.Passed() {
		t.Errorf("with every limit off nothing can regress:\n%s", renderComparison(t, c))
	}
}

// TestCompareClientCPU: a rise of the client's CPU per request beyond --max-client-cpu-rise and
// its floor is named as a regression; one within either is shown; a report without the figure
// (written before it) is not judged.
func TestCompareClientCPU(t *testing.T) {
	withCPU := func(sync, compact float64) *results.Report {
		rep := resultstest.SingleReport()
		for i, us := range []float64{sync, compact} {
			rep.Runs[i].Generator = &results.Generator{WindowMs: 1000, Requests: 1000, Client: results.CPUUse{PerRequestUs: us}}
		}
		return rep
	}
	old := withCPU(200, 4)
	c := mustCompare(t, old, withCPU(300, 8), DefaultThresholds()) // sync +50%; async-compact ×2 but 4 µs
	out := renderComparison(t, c)
	if c.Regressions != 1 || c.Pairs[0].Verdict != VerdictRegression || c.Pairs[1].Verdict != VerdictOK {
		t.Errorf("sync +50%% (100 µs) should regress, async-compact +4 µs not:\n%s", out)
	}
	for _, want := range []string{"client CPU/request rose 50.0% (limit 25%)", "client CPU µs/request", "client CPU/request rise ≤ 25%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if c := mustCompare(t, old, withCPU(240, 4), DefaultThresholds()); !c.Passed() {
		t.Errorf("+20%% regressed:\n%s", renderComparison(t, c))
	}
	if c := mustCompare(t, resultstest.SingleReport(), withCPU(900, 90), DefaultThresholds()); !c.Passed() {
		t.Errorf("a figure the old report did not record was judged:\n%s", renderComparison(t, c))
	}
}

func TestCompareDifferentSuites(t *testing.T) {
	other := resultstest.SingleReport()
	other.Suite = "ledger_balance_hotspot_baseline"
	if _, err := Compare(resultstest.SingleReport(), other, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "different suites") {
		t.Errorf("err = %v, want different suites", err)
	}
}

// Runs on different kinds of database do not pair: one line says why; a report that names no
// kind is PostgreSQL's.
func TestCompareDifferentDatabases(t *testing.T) {
	old, other := resultstest.SingleReport(), resultstest.SingleReport()
	old.Environment.DatabaseKind = ""
	other.Environment.DatabaseKind = "mariadb"
	_, err := Compare(old, other, DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "different kinds of database, PostgreSQL and MariaDB") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line saying the kinds differ", err)
	}
	other.Environment.DatabaseKind = "postgres"
	if _, err := Compare(old, other, DefaultOptions()); err != nil {
		t.Errorf("postgres and a report naming no kind: %v", err)
	}
}

func TestCompareNoNewWaiters(t *testing.T) {
	old := resultstest.SingleReport()
	new := resultstest.SingleReport()
	new.Runs[1].LockMonitor.MaxWaitersByRelation["api_keys"] = 2 // async-compact had none
	new.Runs[1].LockMonitor.MaxLockWaiters = 2
	new.Runs[0].LockMonitor.MaxWaitersByRelation["api_keys"] = 20 // sync had some already

	th := DefaultThresholds()
	th.NoNewWaiters = false
	if c := mustCompare(t, old, new, th); !c.Passed() {
		t.Errorf("new waiters with --no-new-waiters=false should pass:\n%s", renderComparison(t, c))
	}
	th.NoNewWaiters = true
	c := mustCompare(t, old, new, th)
	if c.Regressions != 1 || c.Pairs[0].Verdict != VerdictOK || c.Pairs[1].Verdict != VerdictRegression {
		t.Fatalf("want only async-compact to regress:\n%s", renderComparison(t, c))
	}
	if r := c.Pairs[1].Reasons; len(r) != 1 || r[0] != "new lock waiters on api_keys: 0 → 2" {
		t.Errorf("reasons = %q", r)
	}

	// Waiters on a lock no table accounts for count too.
	new = resultstest.SingleReport()
	new.Runs[1].LockMonitor.MaxLockWaiters = 3
	c = mustCompare(t, old, new, th)
	if c.Passed() || !strings.Contains(strings.Join(c.Pairs[1].Reasons, ";"), "new lock waiters: 0 → 3") {
		t.Errorf("untabled waiters not flagged:\n%s", renderComparison(t, c))
	}
}

func TestCompareVerified(t *testing.T) {
	old := resultstest.SingleReport()
	new := resultstest.SingleReport()
	new.Runs[0].Verification.Passed = false
	c := mustCompare(t, old, new, DefaultThresholds())
	if c.Passed() || c.Pairs[0].Reasons[0] != "verification failed in the new report (passed in the old)" {
		t.Errorf("a run that stopped verifying passed:\n%s", renderComparison(t, c))
	}
	// Failing on both sides (a fault run that loses writes by design) is no regression...
	old.Runs[0].Verification.Passed = false
	if c := mustCompare(t, old, new, DefaultThresholds()); !c.Passed() {
		t.Errorf("unverified on both sides should pass by default:\n%s", renderComparison(t, c))
	}
	// ...unless --require-verified.
	th := DefaultThresholds()
	th.RequireVerified = true
	c = mustCompare(t, old, new, th)
	if c.Passed() || c.Pairs[0].Reasons[0] != "verification failed in the new report" {
		t.Errorf("unverified run passed --require-verified:\n%s", renderComparison(t, c))
	}
}

func TestCompareUnmatched(t *testing.T) {
	old := resultstest.SingleReport()
	new := resultstest.SingleReport()
	new.Runs[1].Config.Requests = 200000 // async-compact now runs a different load
	outbox := resultstest.SyncSpec()
	outbox.Mode = "outbox"
	new.Runs = append(new.Runs, resultstest.MakeRun(outbox))
	new.Runs[0].Config.Seed = 7 // not part of the match
	new.Runs[0].Config.Schema = "hotspot_b"
	new.Runs[0].Config.PgBinDir = "/usr/lib/postgresql/17/bin"

	c := mustCompare(t, old, new, DefaultThresholds())
	if len(c.Pairs) != 1 || c.Pairs[0].Mode != "sync" {
		t.Fatalf("pairs = %+v, want sync only", c.Pairs)
	}
	if len(c.UnmatchedOld) != 1 || c.UnmatchedOld[0].Mode != "async-compact" {
		t.Errorf("unmatched old = %+v", c.UnmatchedOld)
	}
	if len(c.UnmatchedNew) != 2 {
		t.Errorf("unmatched new = %+v, want async-compact and outbox", c.UnmatchedNew)
	}
	hint := c.UnmatchedOld[0].Hint
	if !strings.Contains(hint, "requests 100000 here, 200000 there") {
		t.Errorf("hint = %q", hint)
	}
	out := renderComparison(t, c)
	for _, want := range []string{"only in old: async-compact", "only in new: outbox", "1 matched, 1 only in old, 2 only in new"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	other := resultstest.SingleReport()
	for i := range other.Runs {
		other.Runs[i].Config.Concurrency = 7
	}
	c, err := Compare(old, other, DefaultOptions())
	if !errors.Is(err, ErrNoMatch) || len(c.UnmatchedOld) != 2 {
		t.Errorf("nothing matching: err %v, unmatched %d", err, len(c.UnmatchedOld))
	}
	if c.ExitCode() != ExitNotComparable || strings.Contains(renderComparison(t, c), "PASS") {
		t.Errorf("nothing matching: exit %d, verdict %q", c.ExitCode(), c.Verdict())
	}
}

func TestCompareNoiseBands(t *testing.T) {
	old := resultstest.RepeatedReport()
	new := resultstest.RepeatedReport()
	// The median drops 12%, but the bands still overlap: the verdict follows the median.
	for i, rps := range []float64{130000, 134000, 149000} {
		new.Runs[i].Load.ThroughputRPS = rps
	}
	new.Summaries = results.Summarize(new.Runs)
	c := mustCompare(t, old, new, DefaultThresholds())
	ac := c.Pairs[0]
	if ac.Mode != "async-compact" || ac.Verdict != VerdictRegression {
		t.Fatalf("pair = %+v", ac)
	}
	if !ac.Metrics[0].BandsOverlap {
		t.Errorf("bands 148,100–155,020 and 130,000–149,000 overlap: %+v", ac.Metrics[0])
	}
	out := renderComparison(t, c)
	if !strings.Contains(out, "noise bands overlap") || !strings.Contains(out, "152,340 (148,100–155,020) → 134,000 (130,000–149,000)") {
		t.Errorf("output does not say the bands overlap:\n%s", out)
	}
	// Single runs have no band to overlap.
	s := mustCompare(t, resultstest.SingleReport(), resultstest.SingleReport(), DefaultThresholds())
	if s.Pairs[0].Metrics[0].BandsOverlap {
		t.Errorf("single runs reported overlapping bands")
	}
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  bool
	}{
		{"10%", 0.10, false}, {"10", 0.10, false}, {"2.5%", 0.025, false}, {"0%", 0, false},
		{"off", Off, false}, {"OFF", Off, false}, {"-5%", 0, true}, {"ten", 0, true}, {"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseLimit(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("ParseLimit(%q) = %v, %v", tt.in, got, err)
		}
	}
	if FormatLimit(0.10) != "10%" || FormatLimit(Off) != "off" {
		t.Errorf("FormatLimit = %q %q", FormatLimit(0.10), FormatLimit(Off))
	}
}
