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
			Config:    results.RunConfig{Requests: 100000, Concurrency: 64, FlushBatchSize: 1000},
			StartedAt: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC),
			Load: results.Load{ThroughputRPS: rps * scale, Concurrency: 64, CompletedRequests: 100000,
				LatencyMs: results.Latency{P50: p95 / 3 / scale, P95: p95 / scale, P99: p95 * 1.5 / scale}},
			Pool: results.Pool{MaxConns: 32, MaxUsageBasisPoints: 10000},
			LockMonitor: results.LockMonitor{MaxLockWaiters: waiters,
				MaxWaitersByRelation: map[string]int64{"api_keys": waiters, "providers": 0}},
			Verification: results.Verification{Passed: true},
		}
		// The database's cost per request: sync ~5 statements and one commit, async-compact
		// far below one of either.
		per := results.PerRequest{WALBytes: 945, Commits: 1.05, Statements: 5, RowVersions: 6}
		if queue {
			r.Queue = &results.Queue{Backend: "memory", QueueMetrics: results.QueueMetrics{FlushSQLOpsTotal: 1204, CompactedTotal: 98796},
				PersistLagMs: results.Latency{P99: 85.3}}
			per = results.PerRequest{WALBytes: 254, Commits: 0.0036, Statements: 0.005, RowVersions: 1.01}
		}
		r.Database = &results.Database{WALSource: "pg_stat_wal", Statements: &results.Statements{}, PerRequest: per}
		return r
	}
	cal := results.Spread{Median: 2104, Min: 2050, Max: 2180}
	return &results.Report{
		SchemaVersion: results.SchemaVersion,
		Suite:         suite,
		Environment: results.Environment{GoVersion: "go1.26.8", DatabaseKind: "postgres", DatabaseVersion: "17.2", Durability: "on",
			Command:     suite + " --requests 100000 --concurrency 64 --output x.json",
			Calibration: &results.Calibration{HotRowUpdateRPSPool: cal, PoolConns: 64, BatchedWriteRowsPerSec: results.Spread{Median: 450000, Min: 440000, Max: 460000}, BatchedWriteConns: 2}},
		Runs: []results.Run{run("sync", 2100, 30.1, 12, false), run("async-compact", 160000, 0.64, 0, true)},
	}
}

// smallBatches is r run with --flush-batch-size 10: the same throughput (machine noise could
// hide anything), but async-compact makes 22× the statements, 30× the commits and 1.5× the WAL
// per request.
func smallBatches(r *results.Report) *results.Report {
	out := *r
	out.Environment.Command += " --flush-batch-size 10"
	out.Runs = nil
	for _, run := range r.Runs {
		run.Config.FlushBatchSize = 10
		if run.Queue != nil {
			db := *run.Database
			db.PerRequest = results.PerRequest{WALBytes: 392, Commits: 0.11, Statements: 0.11, RowVersions: 1.1}
			run.Database = &db
		}
		out.Runs = append(out.Runs, run)
	}
	return &out
}

// repeated is r with each run repeated 4 times (the --repeat 4 of one invocation), the
// throughput of repetition i jittered by a few percent.
func repeated(r *results.Report) *results.Report {
	out := *r
	out.Runs = nil
	for i, jitter := range []float64{1, 1.02, 0.99, 1.01} {
		for _, run := range r.Runs {
			run.Repetition = i + 1
			run.Load.ThroughputRPS *= jitter
			out.Runs = append(out.Runs, run)
		}
	}
	return &out
}

type fixture struct {
	dir                               string
	base, slow, other, broken, batch  string
	notReport, array, elsewhere, bare string
	// repeated and repeatedSlow hold 4 runs a mode; repeatedSlow's at 80% throughput.
	repeated, repeatedSlow string
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
	f.batch = write("batch10.json", smallBatches(report("usage_counter_hotspot_baseline", 1)))
	f.repeated = write("repeated.json", repeated(report("usage_counter_hotspot_baseline", 1)))
	f.repeatedSlow = write("repeated-slow.json", repeated(report("usage_counter_hotspot_baseline", 0.8)))
	// elsewhere: the same binary on a machine a third as fast; bare: an old report without
	// calibration or database figures.
	elsewhere := report("usage_counter_hotspot_baseline", 1.0/3)
	c := *elsewhere.Environment.Calibration
	c.HotRowUpdateRPSPool = results.Spread{Median: 701, Min: 683, Max: 727}
	c.BatchedWriteRowsPerSec = results.Spread{Median: 150000, Min: 146000, Max: 153000}
	elsewhere.Environment.Calibration = &c
	for i := range elsewhere.Runs {
		elsewhere.Runs[i].Efficiency = 1
	}
	base := report("usage_counter_hotspot_baseline", 1)
	for i := range base.Runs {
		base.Runs[i].Efficiency = 1
	}
	f.base = write("base.json", base)
	f.elsewhere = write("elsewhere.json", elsewhere)
	bare := report("usage_counter_hotspot_baseline", 1.0/3)
	bare.Environment.Calibration, bare.Environment.Command = nil, ""
	for i := range bare.Runs {
		bare.Runs[i].Database = nil
	}
	f.bare = write("bare.json", bare)
	f.notReport = filepath.Join(dir, "package.json")
	if err := os.WriteFile(f.notReport, []byte(`{"name": "left-pad", "version": "1.3.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.array = filepath.Join(dir, "array.json")
	if err := os.WriteFile(f.array, []byte(`[1, 2, 3]`), 0o644); err != nil {
		t.Fatal(err)
	}
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
		{"compare missing file", []string{"compare", f.base, filepath.Join(f.dir, "nope.json")}, 2, "", "no such file", true},
		{"compare not a report", []string{"compare", f.notReport, f.base}, 2, "", "not a hotspotkit report", true},
		{"compare not an object", []string{"compare", f.base, f.array}, 2, "", "array.json", true},
		{"compare nothing pairs", []string{"compare", f.base, f.batch}, 2, "verdict: NOTHING COMPARABLE", "no run of the new report pairs", true},
		{"compare explain unpaired", []string{"compare", "--explain", f.base, f.batch}, 2,
			"old async-compact · 100,000 × 64 (n=1): unpaired: the new async-compact runs differ in flush_batch_size 1000 here, 10 there", "", false},
		{"compare across batch size", []string{"compare", "--across", "flush-batch-size", f.base, f.batch}, 1,
			"✗ statements/request rose 2100.0% (limit 15%)\n  ✗ commits/request rose", "", false},
		{"compare across names WAL", []string{"compare", "--across", "flush-batch-size", f.base, f.batch}, 1,
			"✗ WAL bytes/request rose 54.3% (limit 15%)", "", false},
		{"compare across unknown key", []string{"compare", "--across", "flush-batch-sise", f.base, f.batch}, 2, "", "--across flush-batch-sise: no run", true},
		{"compare across mode", []string{"compare", "--across", "mode", f.base, f.batch}, 2, "", "--across \"mode\"", true},
		{"compare other machine", []string{"compare", f.base, f.elsewhere}, 0, "machines: calibrations differ", "", false},
		{"compare other machine efficiency", []string{"compare", f.base, f.elsewhere}, 0, "not judged: machines differ", "", false},
		{"compare old report", []string{"compare", f.bare, f.base}, 0, "verdict: PASS (machine-independent checks only: throughput cannot be judged across machines)", "", false},
		{"compare old report same machine", []string{"compare", "--same-machine", f.base, f.bare}, 1, "throughput dropped 66.7%", "", false},
		{"compare bad tolerance", []string{"compare", "--calibration-tolerance", "off", f.base, f.base}, 2, "", "cannot be off", true},
		{"compare broken json", []string{"compare", f.base, f.broken}, 2, "", "broken.json", true},
		{"compare one file", []string{"compare", f.base}, 2, "", "want OLD and NEW", true},
		{"compare bad limit", []string{"compare", f.base, f.base, "--max-p95-rise", "lots"}, 2, "", `invalid limit "lots"`, true},
		{"compare help", []string{"compare", "-h"}, 0, "--no-new-waiters", "", false},
		{"compare one run a side", []string{"compare", f.base, f.slow}, 1, "the noise cannot be judged", "", false},
		{"compare repeated self", []string{"compare", f.repeated, f.repeated}, 0, "judged by statistics (≥ 4 runs a side)", "", false},
		{"compare repeated slower", []string{"compare", f.repeated, f.repeatedSlow}, 1, "worse beyond 5%", "", false},
		{"compare repeated slower, large effect", []string{"compare", "--min-effect", "30%", f.repeated, f.repeatedSlow}, 0, "verdict: PASS", "", false},
		{"compare bad min effect", []string{"compare", "--min-effect", "100%", f.repeated, f.repeatedSlow}, 2, "", "--min-effect", true},

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

func TestRedisClusterBadUsage(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"redis-cluster", "extra"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "unexpected arguments") {
		t.Errorf("redis-cluster extra: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"redis-cluster", "--masters", "0"}, &out, &errb); code != exitUsage || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("redis-cluster --masters 0: exit %d, %q (want one line, exit 2)", code, errb.String())
	}
}
