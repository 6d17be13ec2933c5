// Command baseline reads the JSON reports hotspotkit binaries write and turns them into tables,
// regression verdicts and plots. It only parses flags and calls package results, which does the
// work, so suites and this tool share one implementation.
//
// Exit codes: 0 ok, 1 regression (compare), 2 bad usage or bad input.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/results/render/plot"
	"github.com/spf13/pflag"
)

const (
	exitOK    = 0
	exitUsage = 2
)

const mainUsage = `baseline: tables, regression gates and plots from hotspotkit reports

Usage:
  baseline table FILE... [--format md|csv|json]
  baseline compare OLD NEW [threshold flags]
  baseline plot FILE... --output report.html
  baseline store --dir DIR FILE...
  baseline merge [-o OUT] REPORT...             # one report from a split run's processes
  baseline ab A B [flags] [-- SUITE-FLAGS...]   # two builds, interleaved runs, statistics
  baseline redis-cluster [flags]                # a Redis Cluster for a split run, until Ctrl-C
  baseline pgbouncer [flags]                    # one PgBouncer for a split run, until Ctrl-C

Run 'baseline COMMAND --help' for the flags and a worked example of each command.
Exit codes: 0 ok, 1 regression (compare) or something worse (ab), 2 bad usage or unreadable input.
`

const tableUsage = `Usage: baseline table FILE... [--format md|csv|json]

Prints one row per run of each report (one per summary, medians with min–max, when the runs
were repeated; one per level for a ladder), in a fixed column order.

Columns: suite · mode · requests × conc · rps · failed · p50 / p95 / p99 ms · lag p99 ms
(queue modes) · max waiters per hot table · pool max % · sql ops / compacted (queue modes) ·
verified · WAL B/req and stmts/req (the database's cost per request) · efficiency (throughput
over the machine's calibrated rate) · max tries (--max-tries). Medians come from the runs. "–"
marks a column that does not apply to the row or that the report predates.

Example (base.json and new.json written by a suite binary with --output):
  baseline table base.json                      # Markdown on stdout
  baseline table base.json new.json -f csv > both.csv

Flags:
`

const compareUsage = `Usage: baseline compare OLD NEW [flags]

Pairs the runs of two reports of the same suite, then judges every pair. Exit 0 when every
pair is within the thresholds, 1 on a regression, 2 on bad input (missing or unreadable file,
not a report, different suites) or when no run pairs; the verdict line always says the same.

Pairing: runs pair when their mode, ladder level and every setting of their config that
shapes the work are equal. Settings that shape nothing (seed, schema, server URLs, where
PostgreSQL binaries come from, --repeat, ...; --explain lists them) never count. A suite's own
flag present on one side only takes its default on the other: one the newer binary added (and
left at its default) does not break an older baseline; one set on its command line does.
--across NAME,... pairs runs that differ only in those settings (a config key or its flag:
flush_batch_size or flush-batch-size), to compare two settings on purpose.

Checks, on medians over each side's runs (never the stored summaries):
  machine-independent, on any two machines: verified, lost = duplicated = 0, statements,
    commits and WAL bytes per request (--max-cost-increase), no new lock waiters;
  machine-dependent: throughput, latency and the client's CPU per request (the kit's own
    processor time, --max-client-cpu-rise) directly when both reports' calibrations agree
    (or --same-machine), throughput as efficiency when they differ, and not at all when a
    report has no calibration ("cannot judge across machines").
  Noise: a pair with 4 or more runs on both sides (--repeat 4) judges the machine-dependent
    metrics by statistics instead of the limits, as baseline ab does: a regression only when
    the 95% interval of new/old lies wholly beyond --min-effect (Mann-Whitney U test, Hodges-
    Lehmann ratio with its distribution-free interval); the limits then only say which metrics
    are checked. With fewer runs the medians meet the limits, and the output says that the
    noise cannot be judged. The machine-independent checks stay as they are.

Examples:
  baseline compare old.json new.json                 # gate a new build against a baseline
  baseline compare a.json b.json --across flush-batch-size --explain
  ...
  async-compact · 20,000 × 1,000 · old n=1, new n=1: REGRESSION
    machine-independent
      statements/request  0.0050 → 0.110  ×22.00  FAIL rise ≤ 15%
  ...
  verdict: REGRESSION (3 of 4 pairs)                   # exit status 1

Flags:
`

const plotUsage = `Usage: baseline plot FILE... --output report.html

Writes one self-contained HTML page (no network needed to view it): the table, throughput and
p50/p95/p99 per mode, each ladder with its knee, and for every run that has monitor samples
(FILE.samples.ndjson next to FILE) lock waiters by table, pool usage and queue depth over time.
A FILE written by baseline ab (its --json, or DIR/ab.json) adds an A/B section: the verdicts,
and per mode and metric both sides' runs as points with their medians and the interval.

Example:
  baseline plot base.json new.json --output report.html && xdg-open report.html

Flags:
`

const storeUsage = `Usage: baseline store --dir DIR FILE...

Files each report (and its FILE.samples.ndjson) as DIR/<machine class>/<suite>.json, the
machine class read from the report's environment (e.g. linux-amd64-2cpu-24gib), so that
baselines of comparable machines sit together. 'make baseline' uses it.

Example:
  baseline store --dir records/baselines /tmp/counter.json /tmp/settlement.json

Flags:
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func runStore(args []string, stdout, stderr io.Writer) int {
	c := newCommand("store", storeUsage, stdout, stderr)
	dir := c.flags.String("dir", "records/baselines", "directory to file the reports under")
	if code, done := c.parse(args); done {
		return code
	}
	if c.flags.NArg() == 0 {
		return c.usageError("no report file given")
	}
	for _, p := range c.flags.Args() {
		dest, err := results.Store(*dir, p)
		if err != nil {
			return c.fail(err)
		}
		fmt.Fprintln(stdout, dest)
	}
	return exitOK
}

// run is the whole command, testable: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "table":
		return runTable(rest, stdout, stderr)
	case "compare":
		return runCompare(rest, stdout, stderr)
	case "plot":
		return runPlot(rest, stdout, stderr)
	case "store":
		return runStore(rest, stdout, stderr)
	case "merge":
		return runMerge(rest, stdout, stderr) // merge.go
	case "ab":
		return runAB(rest, stdout, stderr) // ab.go
	case "redis-cluster":
		return runRedisCluster(rest, stdout, stderr) // rediscluster.go
	case "pgbouncer":
		return runPgBouncer(rest, stdout, stderr) // pgbouncer.go
	case "help", "-h", "--help":
		if len(rest) > 0 {
			return run([]string{rest[0], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "baseline: unknown command %q (want table, compare, plot, store, merge, ab, redis-cluster or pgbouncer; see baseline --help)\n", cmd)
	return exitUsage
}

// command is one subcommand's flags and how it reports errors.
type command struct {
	name   string
	usage  string
	flags  *pflag.FlagSet
	stdout io.Writer
	stderr io.Writer
}

func newCommand(name, usage string, stdout, stderr io.Writer) *command {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return &command{name: name, usage: usage, flags: fs, stdout: stdout, stderr: stderr}
}

// parse parses args; done is true (with the exit code) when --help was asked or parsing failed.
func (c *command) parse(args []string) (code int, done bool) {
	err := c.flags.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprint(c.stdout, c.usage+c.flags.FlagUsages())
		return exitOK, true
	}
	if err != nil {
		return c.usageError(err.Error()), true
	}
	return 0, false
}

func (c *command) usageError(msg string) int {
	fmt.Fprintf(c.stderr, "baseline %s: %s (see baseline %s --help)\n", c.name, msg, c.name)
	return exitUsage
}

func (c *command) fail(err error) int {
	fmt.Fprintf(c.stderr, "baseline %s: %s\n", c.name, oneLine(err.Error()))
	return exitUsage
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func readReports(paths []string) ([]*results.Report, error) {
	out := make([]*results.Report, 0, len(paths))
	for _, p := range paths {
		r, err := results.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func runTable(args []string, stdout, stderr io.Writer) int {
	c := newCommand("table", tableUsage, stdout, stderr)
	format := c.flags.StringP("format", "f", "md", "output format: md, csv or json")
	if code, done := c.parse(args); done {
		return code
	}
	write := map[string]func(io.Writer, render.TableData) error{
		"md": render.RenderMarkdown, "markdown": render.RenderMarkdown,
		"csv": render.RenderCSV, "json": render.RenderJSON,
	}[*format]
	if write == nil {
		return c.usageError(fmt.Sprintf("unknown --format %q: want md, csv or json", *format))
	}
	if c.flags.NArg() == 0 {
		return c.usageError("no report file given")
	}
	reports, err := readReports(c.flags.Args())
	if err != nil {
		return c.fail(err)
	}
	if err := write(stdout, render.Table(reports)); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// limitFlag is a threshold flag: a percentage ("10%", "10") or "off".
type limitFlag struct{ v *float64 }

func (l limitFlag) String() string { return judge.FormatLimit(*l.v) }
func (l limitFlag) Type() string   { return "percent" }
func (l limitFlag) Set(s string) error {
	v, err := judge.ParseLimit(s)
	if err != nil {
		return err
	}
	*l.v = v
	return nil
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	c := newCommand("compare", compareUsage, stdout, stderr)
	opt := judge.DefaultOptions()
	th := &opt.Thresholds
	c.flags.Var(limitFlag{&th.MaxThroughputDrop}, "max-throughput-drop", "fail when median throughput (efficiency across machines) drops by more than this")
	c.flags.Var(limitFlag{&th.MaxP95Rise}, "max-p95-rise", "fail when median p95 latency rises by more than this")
	c.flags.Var(limitFlag{&th.MaxP99Rise}, "max-p99-rise", "fail when median p99 latency rises by more than this")
	c.flags.Var(limitFlag{&th.MaxPersistLagRise}, "max-persist-lag-rise", "fail when the median persist-lag p99 of a queue mode rises by more than this")
	c.flags.Var(limitFlag{&th.MaxClientCPURise}, "max-client-cpu-rise", "fail when the median client CPU per request (the kit's own processor time) rises by more than this (and by more than 5 µs)")
	c.flags.Var(limitFlag{&th.MaxCostIncrease}, "max-cost-increase", "fail when statements, commits or WAL bytes per request rise by more than this (and by more than a small absolute floor)")
	c.flags.BoolVar(&th.NoNewWaiters, "no-new-waiters", th.NoNewWaiters, "fail when a hot table that had no lock waiters now has some (--no-new-waiters=false to allow)")
	c.flags.BoolVar(&th.RequireVerified, "require-verified", false, "fail when a run of NEW did not pass verification even if OLD did not either")
	c.flags.Var(limitFlag{&th.MinEffect}, "min-effect", "with 4 or more runs on both sides: the smallest change the statistics count as a regression")
	c.flags.StringSliceVar(&opt.Across, "across", nil, "config settings the paired runs may differ in, by key or flag, e.g. flush-batch-size (to compare two settings on purpose)")
	c.flags.BoolVar(&opt.SameMachine, "same-machine", false, "both reports ran on one machine: compare throughput and latency directly even without calibration")
	c.flags.Var(limitFlag{&opt.CalibrationTolerance}, "calibration-tolerance", "how far beyond each other's min–max band two calibrations may lie and still agree")
	explain := c.flags.Bool("explain", false, "print for every run group of both reports the pair chosen, or why none was")
	format := c.flags.StringP("format", "f", "text", "output format: text or json")
	if code, done := c.parse(args); done {
		return code
	}
	if *format != "text" && *format != "json" {
		return c.usageError(fmt.Sprintf("unknown --format %q: want text or json", *format))
	}
	if opt.CalibrationTolerance < 0 {
		return c.usageError("--calibration-tolerance cannot be off")
	}
	if th.MinEffect < 0 || th.MinEffect >= 1 {
		return c.usageError("--min-effect: want a percentage below 100%, such as 5%")
	}
	for _, k := range opt.Across {
		if k == "mode" || k == "" {
			return c.usageError(fmt.Sprintf("--across %q: name config settings such as flush-batch-size (modes always pair with their own mode)", k))
		}
	}
	if c.flags.NArg() != 2 {
		return c.usageError(fmt.Sprintf("want OLD and NEW report files, got %d argument(s)", c.flags.NArg()))
	}
	reports, err := readReports(c.flags.Args())
	if err != nil {
		return c.fail(err)
	}
	cmp, err := judge.Compare(reports[0], reports[1], opt)
	if err != nil && !errors.Is(err, judge.ErrNoMatch) {
		return c.fail(err)
	}
	if *format == "json" {
		out := struct {
			judge.Comparison
			Verdict  string `json:"verdict"`
			ExitCode int    `json:"exit_code"`
		}{cmp, cmp.Verdict(), cmp.ExitCode()}
		if rerr := writeJSON(stdout, out); rerr != nil {
			return c.fail(rerr)
		}
	} else if rerr := judge.RenderComparison(stdout, cmp, *explain); rerr != nil {
		return c.fail(rerr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "baseline compare: %s\n", oneLine(err.Error()))
	}
	return cmp.ExitCode()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func runPlot(args []string, stdout, stderr io.Writer) int {
	c := newCommand("plot", plotUsage, stdout, stderr)
	output := c.flags.StringP("output", "o", "", "HTML file to write (- for standard output)")
	if code, done := c.parse(args); done {
		return code
	}
	if c.flags.NArg() == 0 {
		return c.usageError("no report file given")
	}
	if *output == "" {
		return c.usageError("--output is required")
	}
	paths, abs, err := readABs(c.flags.Args()) // ab.go: A/B files (baseline ab --json) draw a section each
	if err != nil {
		return c.fail(err)
	}
	reports, err := readReports(paths)
	if err != nil {
		return c.fail(err)
	}
	samples := make(map[string][]results.Sample)
	for i, p := range paths {
		path, ok := samplesFile(p, reports[i])
		if !ok {
			continue
		}
		s, err := results.ReadSamples(path)
		if err != nil {
			return c.fail(err)
		}
		samples[plot.SamplesKey(i)] = s
	}
	page := plot.Page{Reports: reports, Samples: samples, AB: abs}
	if *output == "-" {
		if err := plot.PlotPage(page, stdout); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	if err := results.WriteFile(*output, func(w io.Writer) error { return plot.PlotPage(page, w) }); err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(stderr, "baseline plot: wrote %s\n", *output)
	return exitOK
}

// samplesFile finds the samples of the report read from path: path.samples.ndjson, else the
// report's SamplesFile looked up in the report's directory.
func samplesFile(path string, r *results.Report) (string, bool) {
	candidates := []string{results.SamplesPath(path)}
	if r.SamplesFile != "" {
		candidates = append(candidates, filepath.Join(filepath.Dir(path), filepath.Base(r.SamplesFile)))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}
