package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

// report builds a two-mode report: sync with waiters on api_keys, async-compact without.
// scale multiplies throughput and divides latency (1/3 makes a regressed copy).
func report(suite string, scale float64) *results.Report {
	run := func(mode string, rps, p95 float64, waiters int64, queue bool) results.Run {
		r := results.Run{
			Mode:      mode,
			Config:    map[string]any{"requests": 100000, "concurrency": 64, "output": "x.json"},
			StartedAt: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC),
			Load: results.Load{ThroughputRPS: rps * scale, Concurrency: 64, CompletedRequests: 100000,
				LatencyMs: results.Latency{P50: p95 / 3 / scale, P95: p95 / scale, P99: p95 * 1.5 / scale}},
			Pool: results.Pool{MaxConns: 32, MaxUsageBasisPoints: 10000},
			LockMonitor: results.LockMonitor{MaxLockWaiters: waiters,
				MaxWaitersByRelation: map[string]int64{"api_keys": waiters, "providers": 0}},
			Verification: results.Verification{Passed: true},
		}
		if queue {
			r.Queue = &results.Queue{Backend: "memory", QueueMetrics: results.QueueMetrics{FlushSQLOpsTotal: 1204, CompactedTotal: 98796},
				PersistLagMs: results.Latency{P99: 85.3}}
		}
		return r
	}
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Suite:         suite,
		Environment:   results.Environment{GoVersion: "go1.26.8", PostgresVersion: "17.2", Durability: "on"},
		Runs:          []results.Run{run("sync", 2100, 30.1, 12, false), run("async-compact", 160000, 0.64, 0, true)},
	}
}

type fixture struct {
	dir                                 string
	base, slow, other, broken, ladderly string
}

func writeFixtures(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{dir: dir}
	write := func(name string, r *results.Report) string {
		p := filepath.Join(dir, name)
		if err := r.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.base = write("base.json", report("usage_counter_hotspot_baseline", 1))
	f.slow = write("slow.json", report("usage_counter_hotspot_baseline", 1.0/3))
	f.other = write("other.json", report("ledger_hotspot_baseline", 1))
	f.broken = filepath.Join(dir, "broken.json")
	if err := os.WriteFile(f.broken, []byte(`{"schema_version": 1, "suite": `), 0o644); err != nil {
		t.Fatal(err)
	}
	depth := int64(4096)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := 0; i < 5; i++ {
		s := results.Sample{Run: 1, Mode: "async-compact", ElapsedMs: float64(i * 100), PoolUsageBasisPts: 2500, QueueDepth: &depth}
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(results.SamplesPath(f.base), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunExitCodes(t *testing.T) {
	f := writeFixtures(t)
	html := filepath.Join(f.dir, "report.html")
	tests := []struct {
		name       string
		args       []string
		code       int
		stdoutHas  string
		stderrHas  string
		stderrLine bool // the error is one line
	}{
		{"no command", nil, 2, "", "Usage:", false},
		{"unknown command", []string{"graph"}, 2, "", `unknown command "graph"`, true},
		{"help", []string{"--help"}, 0, "baseline compare OLD NEW", "", false},
		{"help of a command", []string{"help", "plot"}, 0, "Example", "", false},

		{"table", []string{"table", f.base}, 0, " 2,100 | ", "", false},
		{"table csv", []string{"table", "--format", "csv", f.base, f.slow}, 0, `"2,100"`, "", false},
		{"table json", []string{"table", f.base, "-f", "json"}, 0, `"throughput_rps": "160,000"`, "", false},
		{"table bad format", []string{"table", "--format", "xml", f.base}, 2, "", `unknown --format "xml"`, true},
		{"table no file", []string{"table"}, 2, "", "no report file given", true},
		{"table missing file", []string{"table", filepath.Join(f.dir, "nope.json")}, 2, "", "no such file", true},
		{"table broken json", []string{"table", f.broken}, 2, "", "broken.json", true},
		{"table unknown flag", []string{"table", "--colour", f.base}, 2, "", "unknown flag: --colour", true},
		{"table help", []string{"table", "--help"}, 0, "Example", "", false},

		{"compare self", []string{"compare", f.base, f.base}, 0, "verdict: PASS", "", false},
		{"compare self strict", []string{"compare", f.base, f.base, "--no-new-waiters", "--require-verified", "--max-p99-rise", "0%"}, 0, "verdict: PASS", "", false},
		{"compare regression", []string{"compare", f.base, f.slow}, 1, "verdict: REGRESSION (2 of 2 pairs)", "", false},
		{"compare regression tolerated", []string{"compare", f.base, f.slow, "--max-throughput-drop", "off", "--max-p95-rise=off"}, 0, "verdict: PASS", "", false},
		{"compare improvement", []string{"compare", f.slow, f.base}, 0, "verdict: PASS", "", false},
		{"compare json", []string{"compare", "-f", "json", f.base, f.slow}, 1, `"verdict": "regression"`, "", false},
		{"compare different suites", []string{"compare", f.base, f.other}, 2, "", "different suites", true},
		{"compare broken json", []string{"compare", f.base, f.broken}, 2, "", "broken.json", true},
		{"compare one file", []string{"compare", f.base}, 2, "", "want OLD and NEW", true},
		{"compare bad limit", []string{"compare", f.base, f.base, "--max-p95-rise", "lots"}, 2, "", `invalid limit "lots"`, true},
		{"compare help", []string{"compare", "-h"}, 0, "--no-new-waiters", "", false},

		{"plot", []string{"plot", f.base, "--output", html}, 0, "", "wrote " + html, true},
		{"plot to stdout", []string{"plot", f.base, "-o", "-"}, 0, "<!DOCTYPE html>", "", false},
		{"plot without output", []string{"plot", f.base}, 2, "", "--output is required", true},
		{"plot broken", []string{"plot", f.broken, "-o", html}, 2, "", "broken.json", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdoutHas, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderrHas, stderr.String())
			}
			if tt.stderrLine && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", stderr.String())
			}
		})
	}
}

func TestPlotReadsSamplesBesideReport(t *testing.T) {
	f := writeFixtures(t)
	out := filepath.Join(f.dir, "page.html")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"plot", f.base, f.slow, "--output", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`[0.4,4096]`, "monitor samples", `"value":2100,`, `"value":700,`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("page lacks %s", want)
		}
	}
	if bytes.Contains(page, []byte("<script src")) {
		t.Error("page references an external script")
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("page mode = %v, %v", st.Mode(), err)
	}
}
