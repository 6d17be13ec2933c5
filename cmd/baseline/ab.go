package main

// baseline ab: two builds of one suite, run interleaved on one machine, judged per metric by
// package results/verdict. This file owns the command line and the loop of invocations;
// ab_build.go resolves and builds the two sides.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/results/render/plot"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

const abUsage = `Usage: baseline ab A B [flags] [-- SUITE-FLAGS...]

Runs two builds of one suite, A and B, interleaved (A B B A A B B A ...) so that drift and
warm caches fall on both alike, each run a fresh invocation (its own temporary PostgreSQL
unless SUITE-FLAGS name --postgres-url), --runs invocations a side, every report kept in
--dir. It adds --calibrate=false unless told otherwise: runs on one machine, interleaved,
need no calibration. Then, per mode and metric, it judges B against A: median A, median B, the ratio B/A
with its 95% confidence interval, the rank test's p-value, and a verdict:

  worse / better  the whole interval lies beyond ±--min-effect in the bad / good direction
                  (and p < 0.05);
  same            the whole interval lies within ±--min-effect;
  inconclusive    neither: the runs cannot tell; it says how many runs a side would likely
                  settle it. Inconclusive exits 0: nothing was shown to be worse.

Metrics: throughput (completed requests per second, drain included: the persisted rate),
p95, p99, persist-lag p99 (queue modes), statements, commits and WAL bytes per request, max
lock waiters on each hot table that had any; throughput is better higher, the rest lower.
Verification failed, or requests lost or duplicated, in a run of B and none of A is worse.

Method: Mann-Whitney U test (golang.org/x/perf/benchmath, as benchstat) for p; the ratio is
the Hodges-Lehmann estimate on log values with its distribution-free (Moses) 95% interval
from the exact U distribution. The number of runs is fixed before the first one (no stopping
when it turns significant); the verdicts printed while it runs are for watching only.

A and B are each a suite binary (a path) or a git revision of --repo, which baseline ab
builds itself (go build ./cmd/SUITE in a temporary git worktree, removed afterwards, also on
failure or Ctrl-C); a revision needs --suite. Both sides run with SUITE-FLAGS, then their
own --a-args / --b-args; baseline ab adds --output.

Examples:
  # this change against main, built from the repository in the current directory
  baseline ab main HEAD --suite usage_counter_hotspot_baseline -- \
      --requests 20000 --concurrency 1000 --modes sync,async-compact
  # two settings of one binary
  baseline ab ./counter ./counter --b-args '--flush-batch-size 100' -- --modes async-compact
  # A against A: how noisy is this machine?
  baseline ab ./counter ./counter --runs 8 --json aa.json --plot aa.html

Exit codes: 0 nothing worse (inconclusive included), 1 something worse (or a run failed
without a report), 2 bad input (not a suite, two different suites, a revision that does not
build, --runs below 4, ...: one line, before any run), 130/143 interrupted by SIGINT/SIGTERM
(the runs so far are kept and judged).

Flags:
`

// abDefaultRuns is --runs' default: the counter suite at 20000 × 1000 with sync and
// async-compact is about 25 s an invocation on a quiet machine of the class the baselines were
// recorded on (sync at ~840 rps is most of it), so 12 invocations take 5–6 minutes. When the
// verdict is inconclusive, the output says how many runs a side would likely settle it.
const abDefaultRuns = 6

// abMaxRuns bounds --runs: the exact U distribution (and patience) end there.
const abMaxRuns = 50

// abFlagsOwned are suite flags baseline ab sets or forbids itself.
var abFlagsOwned = map[string]string{
	"output": "baseline ab writes each run's report into --dir itself",
	"repeat": "baseline ab repeats by fresh invocations: use --runs",
	"help":   "",
}

type abOptions struct {
	a, b          string // as given: a binary or a revision
	suite         string
	repo          string
	runs          int
	minEffect     float64
	aArgs, bArgs  []string
	suiteArgs     []string
	dir, json     string
	plot          string
	stdout, errw  io.Writer
	preflightWait time.Duration
}

func runAB(args []string, stdout, stderr io.Writer) int {
	c := newCommand("ab", abUsage, stdout, stderr)
	o := abOptions{stdout: stdout, errw: stderr, preflightWait: 30 * time.Second}
	c.flags.IntVarP(&o.runs, "runs", "n", abDefaultRuns, fmt.Sprintf("invocations a side (at least %d, at most %d)", verdict.MinRuns, abMaxRuns))
	effect := c.flags.String("min-effect", judge.FormatLimit(verdict.DefaultMinEffect), "the smallest change that matters: worse/better need the whole 95% interval beyond it, same within it")
	aArgs := c.flags.String("a-args", "", "suite flags for A only, after SUITE-FLAGS (split on spaces)")
	bArgs := c.flags.String("b-args", "", "suite flags for B only, after SUITE-FLAGS (split on spaces)")
	c.flags.StringVar(&o.suite, "suite", "", "the suite to build from a git revision (its cmd/ directory name, e.g. usage_counter_hotspot_baseline)")
	c.flags.StringVar(&o.repo, "repo", ".", "the git repository revisions are built from")
	c.flags.StringVar(&o.dir, "dir", "", "directory for every run's report and log (default ./ab-SUITE-TIME; must be new or empty)")
	c.flags.StringVar(&o.json, "json", "", "also write the A/B as JSON here: every run's figures, the method, the verdicts (always written to DIR/ab.json)")
	c.flags.StringVar(&o.plot, "plot", "", "also write an HTML page of both sides' runs per metric here (baseline plot DIR/ab.json does the same)")
	if code, done := c.parse(args); done {
		return code
	}
	pos := c.flags.Args()
	if dash := c.flags.ArgsLenAtDash(); dash >= 0 {
		pos, o.suiteArgs = pos[:dash], pos[dash:]
	}
	if len(pos) != 2 {
		return c.usageError(fmt.Sprintf("want A and B (binaries or git revisions) before --, got %d argument(s)", len(pos)))
	}
	o.a, o.b = pos[0], pos[1]
	o.aArgs, o.bArgs = strings.Fields(*aArgs), strings.Fields(*bArgs)
	if o.runs < verdict.MinRuns || o.runs > abMaxRuns {
		return c.usageError(fmt.Sprintf("--runs %d: want %d to %d (no 95%% interval exists below %d runs a side)", o.runs, verdict.MinRuns, abMaxRuns, verdict.MinRuns))
	}
	v, err := judge.ParseLimit(*effect)
	if err != nil || v < 0 || v >= 1 {
		return c.usageError(fmt.Sprintf("--min-effect %q: want a percentage below 100%%, such as 5%%", *effect))
	}
	o.minEffect = v
	for _, list := range []struct {
		name string
		args []string
	}{{"SUITE-FLAGS", o.suiteArgs}, {"--a-args", o.aArgs}, {"--b-args", o.bArgs}} {
		if err := checkSuiteArgs(list.args); err != nil {
			return c.usageError(fmt.Sprintf("%s: %v", list.name, err))
		}
	}
	for _, f := range []struct{ flag, path string }{{"--json", o.json}, {"--plot", o.plot}} {
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(f.path)); err != nil || !st.IsDir() {
			return c.usageError(fmt.Sprintf("%s %s: no such directory %s", f.flag, f.path, filepath.Dir(f.path)))
		}
	}
	return abMain(c, o)
}

// namesFlag reports whether any of the argument lists names --name.
func namesFlag(name string, lists ...[]string) bool {
	for _, args := range lists {
		for _, a := range args {
			if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
				return true
			}
		}
	}
	return false
}

// checkSuiteArgs rejects the flags baseline ab owns.
func checkSuiteArgs(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if why, owned := abFlagsOwned[name]; owned || a == "-o" || a == "-h" {
			if why == "" {
				why = "baseline ab runs the suite itself"
			}
			return fmt.Errorf("%s: %s", a, why)
		}
	}
	return nil
}

// abSignals is the interrupt state of an A/B: the first SIGINT or SIGTERM is forwarded to the
// running invocation (which drains, writes its partial report and stops its servers) or
// cancels the build; no further invocation starts. A second is forwarded too (the suite then
// aborts its drain).
type abSignals struct {
	mu      sync.Mutex
	got     os.Signal
	child   *os.Process
	cancels []func()
}

func (s *abSignals) watch() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.mu.Lock()
				if s.got == nil {
					s.got = sig
				}
				if s.child != nil {
					_ = s.child.Signal(sig)
				}
				for _, cancel := range s.cancels {
					cancel()
				}
				s.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

func (s *abSignals) interrupted() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

func (s *abSignals) setChild(p *os.Process) {
	s.mu.Lock()
	s.child = p
	got := s.got
	s.mu.Unlock()
	if p != nil && got != nil { // the signal came between the check and the start
		_ = p.Signal(got)
	}
}

func (s *abSignals) onInterrupt(cancel func()) {
	s.mu.Lock()
	s.cancels = append(s.cancels, cancel)
	got := s.got
	s.mu.Unlock()
	if got != nil {
		cancel()
	}
}

func signalExit(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return 143
	}
	return 130
}

func abMain(c *command, o abOptions) int {
	sigs := &abSignals{}
	defer sigs.watch()()
	say := func(format string, a ...any) { fmt.Fprintf(o.errw, "baseline ab: "+format+"\n", a...) }

	sides, cleanup, err := resolveSides(o, sigs, say) // ab_build.go
	defer cleanup()
	if sig := sigs.interrupted(); sig != nil {
		say("interrupted (%s) before the first run", sig)
		return signalExit(sig)
	}
	if err != nil {
		return c.fail(err)
	}
	suite := sides[0].suite
	// Interleaved runs on one machine need no calibration (it is what lets reports of two
	// machines compare): spare each invocation its seconds unless told otherwise.
	if sides[0].hasFlag("calibrate") && sides[1].hasFlag("calibrate") && !namesFlag("calibrate", o.suiteArgs, o.aArgs, o.bArgs) {
		o.suiteArgs = append([]string{"--calibrate=false"}, o.suiteArgs...)
	}
	if o.dir == "" {
		o.dir = fmt.Sprintf("ab-%s-%s", suite, time.Now().Format("20060102-150405"))
	}
	if err := makeEmptyDir(o.dir); err != nil {
		return c.fail(fmt.Errorf("--dir %s: %w", o.dir, err))
	}
	ab := judge.NewAB(suite, sides[0].ABSide, sides[1].ABSide, o.suiteArgs, o.runs, o.minEffect)
	ab.Dir = o.dir
	say("%d runs (%d a side, interleaved A B B A …) of %s into %s", 2*o.runs, o.runs, suite, o.dir)
	code := abLoop(ab, sides, o, sigs, say)
	ab.FinishedAt = time.Now().UTC()
	if werr := writeABOutputs(ab, o); werr != nil {
		say("%s", oneLine(werr.Error()))
		if code == exitOK {
			code = exitUsage
		}
	}
	if code >= 0 {
		return code
	}
	if err := judge.RenderAB(o.stdout, ab); err != nil {
		return c.fail(err)
	}
	if sig := sigs.interrupted(); sig != nil {
		say("interrupted (%s) after %d of %d runs: the verdict above is of those", sig, len(ab.Runs), 2*o.runs)
		return signalExit(sig)
	}
	return ab.ExitCode
}

// abLoop runs every invocation in ab.Order and records it. It returns -1 when the A/B is to
// be judged (all runs done, or interrupted), or the exit code of a failure that ends it.
func abLoop(ab *judge.AB, sides [2]abSide, o abOptions, sigs *abSignals, say func(string, ...any)) int {
	var first *results.Report // the first run's, whose database every other's must be of
	for i, sideName := range ab.Order {
		if sigs.interrupted() != nil {
			return -1
		}
		side := sides[0]
		if sideName == "B" {
			side = sides[1]
		}
		run, rep, err := abInvoke(i+1, side, sideName, o, sigs)
		if err != nil {
			say("%s", oneLine(err.Error()))
			return run.ExitCode
		}
		if sigs.interrupted() != nil && rep == nil {
			return -1
		}
		if rep.Suite != ab.Suite {
			say("run %d (%s): the report is of suite %q, not %q", i+1, sideName, rep.Suite, ab.Suite)
			return exitUsage
		}
		if first == nil {
			first = rep
		} else if err := judge.SameDatabase(first, rep); err != nil {
			say("run %d (%s): %s; an A/B compares two builds on one kind of database", i+1, sideName, err)
			return exitUsage
		}
		ab.Add(run)
		say("run %d/%d %s %s · %s · %s", i+1, len(ab.Order), sideName, time.Duration(run.WallMs*float64(time.Millisecond)).Round(100*time.Millisecond),
			run.Summary(), ab.Progress())
	}
	return -1
}

// abInvoke runs one invocation of side and reads its report. A failure that ends the A/B comes
// back as err with run.ExitCode set to the exit code baseline ab should return.
func abInvoke(index int, side abSide, name string, o abOptions, sigs *abSignals) (judge.ABRun, *results.Report, error) {
	base := filepath.Join(o.dir, fmt.Sprintf("run-%02d-%s", index, name))
	run := judge.ABRun{Index: index, Side: name, Report: base + ".json", Log: base + ".log"}
	args := append(append(append([]string{}, o.suiteArgs...), side.Args...), "--output", run.Report)
	logf, err := os.Create(run.Log)
	if err != nil {
		run.ExitCode = exitUsage
		return run, nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# %s %s\n", side.binary, strings.Join(args, " "))
	cmd := exec.Command(side.binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	setOwnProcessGroup(cmd) // ab_unix.go: Ctrl-C reaches the suite once, through us
	start := time.Now()
	if err := cmd.Start(); err != nil {
		run.ExitCode = exitUsage
		return run, nil, fmt.Errorf("run %d (%s): %w", index, name, err)
	}
	sigs.setChild(cmd.Process)
	werr := cmd.Wait()
	sigs.setChild(nil)
	run.WallMs = float64(time.Since(start)) / float64(time.Millisecond)
	run.ExitCode = cmd.ProcessState.ExitCode()
	var exit *exec.ExitError
	if werr != nil && !errors.As(werr, &exit) {
		run.ExitCode = exitRegression
		return run, nil, fmt.Errorf("run %d (%s): %w", index, name, werr)
	}
	if run.ExitCode == exitUsage {
		data, _ := os.ReadFile(run.Log)
		log := string(data)
		if crash := crashLine(log); crash != "" { // a Go program that panics exits 2 too
			run.ExitCode = exitRegression
			return run, nil, fmt.Errorf("run %d (%s) crashed (exit 2): %s; its output: %s", index, name, crash, run.Log)
		}
		return run, nil, fmt.Errorf("run %d (%s): the suite refused its arguments: %s", index, name, lastLine(log, side.binary))
	}
	rep, rerr := results.ReadFile(run.Report)
	if rerr != nil {
		if sigs.interrupted() != nil {
			return run, nil, nil
		}
		run.ExitCode = exitRegression
		return run, nil, fmt.Errorf("run %d (%s) exited %d without a report (%v); its output: %s", index, name, cmd.ProcessState.ExitCode(), rerr, run.Log)
	}
	if rep.Interrupted || run.ExitCode == 130 || run.ExitCode == 143 {
		if sigs.interrupted() != nil {
			return run, nil, nil // a partial run: not comparable, left out
		}
		run.ExitCode = exitRegression
		return run, nil, fmt.Errorf("run %d (%s) was interrupted by a signal baseline ab did not get; its output: %s", index, name, run.Log)
	}
	if rep.Error != "" || len(rep.Runs) == 0 {
		why := rep.Error
		if why == "" {
			why = "its report holds no run"
		}
		run.ExitCode = exitRegression
		return run, nil, fmt.Errorf("run %d (%s) broke (exit %d): %s; its output: %s", index, name, cmd.ProcessState.ExitCode(), why, run.Log)
	}
	run.Groups = judge.ABRunGroups(rep)
	return run, rep, nil
}

const exitRegression = 1

// lastLine is the suite's error line in a log: the last line that names the binary, else the
// last non-empty line.
func lastLine(log, binary string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	name := filepath.Base(binary) + ":"
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i], name) {
			return strings.TrimSpace(strings.TrimPrefix(lines[i], name))
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// crashLine is the line a Go program's crash begins with in a log ("panic: ...", "fatal
// error: ..."), or "" when there is none.
func crashLine(log string) string {
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func makeEmptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return errors.New("not empty (baseline ab keeps every run's report there; name a new one)")
	}
	return nil
}

func writeABOutputs(ab *judge.AB, o abOptions) error {
	paths := []string{filepath.Join(o.dir, "ab.json")}
	if o.json != "" {
		paths = append(paths, o.json)
	}
	for _, p := range paths {
		if err := judge.WriteABFile(p, ab); err != nil {
			return err
		}
	}
	if o.plot == "" {
		return nil
	}
	return results.WriteFile(o.plot, func(w io.Writer) error {
		return plot.PlotPage(plot.Page{AB: []*judge.AB{ab}}, w)
	})
}

// readABs splits paths into A/B files, read, and the rest (reports, in order).
func readABs(paths []string) (rest []string, abs []*judge.AB, err error) {
	for _, p := range paths {
		ab, ok, err := judge.ReadAB(p)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, nil, err
		case ok:
			abs = append(abs, ab)
		default:
			rest = append(rest, p) // a report, or a missing file readReports names
		}
	}
	return rest, abs, nil
}
