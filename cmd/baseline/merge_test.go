package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// splitFixture writes the reports of a split run: two producers of 1,000 requests each (the
// second with a slow tail), a consumer and the verifying consumer.
func splitFixture(t *testing.T) (dir string, producers, consumers []string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name string, p resultstest.SplitProcess) string {
		path := filepath.Join(dir, name)
		if err := resultstest.SplitReport(p).WriteFile(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var fast, slow, lags []time.Duration
	for i := range 1000 {
		fast = append(fast, time.Millisecond+time.Duration(i)*time.Microsecond)
		slow = append(slow, 2*time.Millisecond+time.Duration(i%10)*time.Millisecond*time.Duration(i/950*40))
		lags = append(lags, time.Duration(i)*time.Millisecond)
	}
	producers = []string{
		write("producer-0.json", resultstest.SplitProcess{Role: "producer", ProducerID: 0, Host: "a", Latencies: fast, Window: time.Second, Intake: time.Second}),
		write("producer-1.json", resultstest.SplitProcess{Role: "producer", ProducerID: 1, Host: "b", Latencies: slow, From: 200 * time.Millisecond, Window: time.Second, Intake: time.Second}),
	}
	consumers = []string{
		write("c1.json", resultstest.SplitProcess{Role: "consumer", Host: "c", Lags: lags[:500], Window: 1500 * time.Millisecond}),
		write("c2.json", resultstest.SplitProcess{Role: "consumer", Verify: true, Host: "d", Lags: lags[500:], Window: 1500 * time.Millisecond, Total: 2000}),
	}
	return dir, producers, consumers
}

// The merged report of a split run tables, compares (--explain included) and plots like any.
func TestMergedReportReadsLikeAny(t *testing.T) {
	dir, producers, consumers := splitFixture(t)
	merged := filepath.Join(dir, "run.json")
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"merge", "-o", merged}, append(producers, consumers...)...), &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr.String())
	}
	if want := "baseline merge: wrote " + merged + " (4 processes, 1 runs)\n"; stderr.String() != want {
		t.Errorf("merge said %q, want %q", stderr.String(), want)
	}
	rep, err := results.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Runs[0]; r.Load.CompletedRequests != 2000 || !r.Verification.Passed || len(rep.Processes) != 4 || !rep.Environment.Merged {
		t.Fatalf("merged: %d requests, verified %v, %d processes", r.Load.CompletedRequests, r.Verification.Passed, len(rep.Processes))
	}
	p99 := rep.Runs[0].Load.LatencyMs.P99
	html := filepath.Join(dir, "run.html")
	for _, tc := range []struct {
		args      []string
		code      int
		stdoutHas []string
	}{
		{[]string{"table", merged}, 0, []string{"| async-compact", "2,000 × 100", "✓"}},
		{[]string{"table", "-f", "json", merged, producers[0]}, 0, []string{`"p99_ms"`}},
		{[]string{"compare", merged, merged}, 0, []string{"verdict: PASS"}},
		{[]string{"compare", "--explain", merged, merged}, 0, []string{"async-compact · 2,000 × 100", "verdict: PASS"}},
		// A process's report is not the run: it does not pair with the merged one.
		{[]string{"compare", "--explain", producers[0], merged}, 2, []string{`role "producer" here, "merged" there`, "NOTHING COMPARABLE"}},
		{[]string{"plot", merged, "-o", html}, 0, nil},
		{[]string{"plot", merged, "-o", "-"}, 0, []string{"<!DOCTYPE html>", "async-compact"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, stdout.String(), stderr.String())
		}
		for _, s := range tc.stdoutHas {
			if !strings.Contains(stdout.String(), s) {
				t.Errorf("%v: stdout lacks %q:\n%s", tc.args, s, stdout.String())
			}
		}
	}
	t.Logf("merged p99 %.3f ms", p99)
}

func TestMergeExitCodes(t *testing.T) {
	dir, producers, consumers := splitFixture(t)
	f := writeFixtures(t)
	out := filepath.Join(dir, "out.json")
	settlement := filepath.Join(dir, "settlement.json")
	other := resultstest.SplitReport(resultstest.SplitProcess{Role: "producer", ProducerID: 1})
	other.Suite = "usage_settlement_hotspot_baseline"
	if err := other.WriteFile(settlement); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"help", []string{"merge", "--help"}, 0, "Example", ""},
		{"to stdout, producers only", append([]string{"merge"}, producers...), 0, `"processes": [`,
			"baseline merge: note: no verifying consumer's report (--verify) among them: the merged runs are not verified\n"},
		{"no file", []string{"merge"}, 2, "", "no report file given"},
		{"one file", []string{"merge", "-o", out, producers[0]}, 2, "", "at least two processes"},
		{"two suites", []string{"merge", "-o", out, producers[0], settlement}, 2, "", "settlement.json of usage_settlement_hotspot_baseline: not one run"},
		{"not split", []string{"merge", "-o", out, producers[0], f.base}, 2, "", "is not a report of a split run"},
		{"the same producer twice", []string{"merge", "-o", out, producers[0], producers[0]}, 2, "", "are both producer 0"},
		{"the same consumer twice", []string{"merge", "-o", out, producers[0], consumers[0], consumers[0]}, 2, "", "the same process's report"},
		{"consumers only", append([]string{"merge", "-o", out}, consumers...), 2, "", "no producer's report"},
		{"missing file", []string{"merge", "-o", out, producers[0], filepath.Join(dir, "nope.json")}, 2, "", "no such file"},
		{"not a report", []string{"merge", "-o", out, producers[0], f.notReport}, 2, "", "not a hotspotkit report"},
		{"unknown flag", []string{"merge", "--average", producers[0], producers[1]}, 2, "", "unknown flag: --average"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdoutHas) || !strings.Contains(stderr.String(), tc.stderrHas) {
				t.Errorf("stdout lacks %q or stderr %q:\n%s\n%s", tc.stdoutHas, tc.stderrHas, stdout.String(), stderr.String())
			}
			if tc.code == 2 && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("the error is not one line:\n%s", stderr.String())
			}
		})
	}
}
