package judge

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// ABKind marks the JSON file of an A/B (baseline ab --json), so that `baseline plot` tells it
// from a report.
const ABKind = "hotspotkit-ab"

// AB is an A/B of two builds (or two settings) of one suite: every invocation's figures in the
// order they ran, and per run group and metric the statistics of package verdict. It is what
// `baseline ab --json` writes and `baseline plot` reads back.
type AB struct {
	Kind  string `json:"kind"`
	Suite string `json:"suite"`
	A     ABSide `json:"a"`
	B     ABSide `json:"b"`
	// SuiteArgs are the arguments both sides ran with (each side's Args come after them).
	SuiteArgs   []string `json:"suite_args"`
	RunsPerSide int      `json:"runs_per_side"`
	// Order is the side of each invocation: A B B A A B B A ...
	Order      []string  `json:"order"`
	MinEffect  float64   `json:"min_effect"`
	Confidence float64   `json:"confidence"`
	Method     string    `json:"method"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Dir holds every invocation's report and log.
	Dir    string    `json:"dir,omitempty"`
	Runs   []ABRun   `json:"runs"`
	Groups []ABGroup `json:"groups"`
	// Counts of the verdicts over every group's metrics and checks (a failed check is worse).
	Worse        int    `json:"worse"`
	Better       int    `json:"better"`
	Same         int    `json:"same"`
	Inconclusive int    `json:"inconclusive"`
	Verdict      string `json:"verdict"`
	ExitCode     int    `json:"exit_code"`
}

// ABSide is one side of an A/B: the binary that ran, the git revision it was built from (when
// baseline ab built it), and the arguments only this side added.
type ABSide struct {
	Label    string   `json:"label"`
	Binary   string   `json:"binary"`
	Revision string   `json:"revision,omitempty"`
	Args     []string `json:"args,omitempty"`
}

// ABRun is one invocation of a side.
type ABRun struct {
	// Index counts from 1 in the order the invocations ran.
	Index    int          `json:"index"`
	Side     string       `json:"side"`
	Report   string       `json:"report,omitempty"`
	Log      string       `json:"log,omitempty"`
	ExitCode int          `json:"exit_code"`
	WallMs   float64      `json:"wall_ms"`
	Groups   []ABRunGroup `json:"groups"`
}

// Summary is a progress line's figures of the run: each group's throughput.
func (r ABRun) Summary() string {
	var parts []string
	for _, g := range r.Groups {
		mark := ""
		if !g.Verified {
			mark = " (verification FAILED)"
		}
		parts = append(parts, fmt.Sprintf("%s %s rps%s", g.Group, render.FormatRPS(g.Figures[results.MetricThroughputRPS]), mark))
	}
	if len(parts) == 0 {
		return "no runs in the report"
	}
	return strings.Join(parts, ", ")
}

// ABRunGroup is what one invocation measured for one run group (a mode, a ladder level, ...).
type ABRunGroup struct {
	Group    string             `json:"group"`
	Verified bool               `json:"verified"`
	Lost     float64            `json:"lost,omitempty"`
	Dup      float64            `json:"duplicated,omitempty"`
	Figures  map[string]float64 `json:"figures"`
}

// ABGroup is the verdict on one run group: per metric, and the deterministic checks.
type ABGroup struct {
	Group   string     `json:"group"`
	Metrics []ABMetric `json:"metrics"`
	// Checks are the deterministic ones that failed on B and not on A (verification, lost or
	// duplicated requests), one line each; each counts as worse.
	Checks []string `json:"checks,omitempty"`
}

// ABMetric is one metric of a group: both sides' values, in run order, and the judgement.
type ABMetric struct {
	Metric    string    `json:"metric"`
	Direction string    `json:"direction"`
	A         []float64 `json:"a"`
	B         []float64 `json:"b"`
	// RunsA and RunsB are the ABRun.Index each value of A and B came from.
	RunsA []int `json:"runs_a"`
	RunsB []int `json:"runs_b"`
	verdict.Result
}

// abMetrics are the metrics an A/B judges, in the order it shows them, with the way each
// improves; after them come the max waiters of every hot table that had any.
var abMetrics = []abMetricSpec{
	{results.MetricThroughputRPS, verdict.HigherIsBetter},
	{results.MetricP95Ms, verdict.LowerIsBetter},
	{results.MetricP99Ms, verdict.LowerIsBetter},
	{results.MetricPersistLagP99Ms, verdict.LowerIsBetter},
	{results.MetricClientCPUPerRequestUs, verdict.LowerIsBetter},
	{results.MetricStatementsPerRequest, verdict.LowerIsBetter},
	{results.MetricCommitsPerRequest, verdict.LowerIsBetter},
	{results.MetricWALBytesPerRequest, verdict.LowerIsBetter},
	{results.MetricRedoBytesPerRequest, verdict.LowerIsBetter},
}

type abMetricSpec struct {
	metric string
	dir    verdict.Direction
}

// NewAB starts an A/B: the sides, the arguments, the interleaved order of 2·runs invocations
// (A B B A, repeated, so drift and warm caches fall on both sides alike) and the method.
func NewAB(suite string, a, b ABSide, suiteArgs []string, runs int, minEffect float64) *AB {
	ab := &AB{Kind: ABKind, Suite: suite, A: a, B: b, SuiteArgs: suiteArgs, RunsPerSide: runs,
		MinEffect: minEffect, Confidence: verdict.Confidence, Method: verdict.Method, StartedAt: time.Now().UTC()}
	for i := 0; i < 2*runs; i++ {
		side := "A"
		if (i/2%2 == 0) != (i%2 == 0) {
			side = "B"
		}
		ab.Order = append(ab.Order, side)
	}
	ab.Judge()
	return ab
}

// ABRunGroups reads one invocation's report into its figures per run group. Groups are the
// report's runs by mode, ladder level, slot count and rate; a group run more than once in
// one invocation (--repeat) gets the median of its runs.
func ABRunGroups(rep *results.Report) []ABRunGroup {
	var out []ABRunGroup
	index := make(map[string]int)
	values := make(map[string]map[string][]float64)
	for _, r := range rep.Runs {
		g := abGroupName(r)
		i, ok := index[g]
		if !ok {
			i = len(out)
			index[g] = i
			out = append(out, ABRunGroup{Group: g, Verified: true, Figures: map[string]float64{}})
			values[g] = map[string][]float64{}
		}
		out[i].Verified = out[i].Verified && r.Verification.Passed
		for k, s := range results.RunSpreads(r) {
			if k == results.MetricLost || k == results.MetricDuplicated || isABMetric(k) {
				values[g][k] = append(values[g][k], s.Median)
			}
		}
	}
	for i := range out {
		for k, vs := range values[out[i].Group] {
			slices.Sort(vs)
			v := vs[len(vs)/2]
			if len(vs)%2 == 0 {
				v = (vs[len(vs)/2-1] + v) / 2
			}
			switch k {
			case results.MetricLost:
				out[i].Lost = v
			case results.MetricDuplicated:
				out[i].Dup = v
			default:
				out[i].Figures[k] = v
			}
		}
	}
	return out
}

func isABMetric(k string) bool {
	if strings.HasPrefix(k, results.MetricMaxWaitersPrefix) {
		return true
	}
	for _, m := range abMetrics {
		if m.metric == k {
			return true
		}
	}
	return false
}

// abGroupName names a run group: its mode, then what else tells its runs apart.
func abGroupName(r results.Run) string {
	name := modeText(render.ModeLabel(r.Mode, r.Config), r.Level())
	if rate := r.Config.Rate; rate > 0 {
		name += " @ " + render.FormatRPS(rate) + "/s"
	}
	return name
}

// Add records a finished invocation and judges again.
func (ab *AB) Add(run ABRun) {
	ab.Runs = append(ab.Runs, run)
	ab.Judge()
}

// Judge computes, from the runs so far, every group's verdicts, the counts, the verdict line
// and the exit code. Run groups appear in the order the first invocation that had them
// listed them; a metric is judged on the runs that recorded it (a hot table with no waiters in
// a run counts 0 for that run).
func (ab *AB) Judge() {
	ab.Groups, ab.Worse, ab.Better, ab.Same, ab.Inconclusive = nil, 0, 0, 0, 0
	var names []string
	for _, run := range ab.Runs {
		for _, g := range run.Groups {
			if !slices.Contains(names, g.Group) {
				names = append(names, g.Group)
			}
		}
	}
	for _, name := range names {
		g := ab.judgeGroup(name)
		for _, m := range g.Metrics {
			switch m.Verdict {
			case verdict.Worse:
				ab.Worse++
			case verdict.Better:
				ab.Better++
			case verdict.Same:
				ab.Same++
			default:
				ab.Inconclusive++
			}
		}
		ab.Worse += len(g.Checks)
		ab.Groups = append(ab.Groups, g)
	}
	ab.ExitCode, ab.Verdict = ExitOK, ab.verdictLine()
	if ab.Worse > 0 {
		ab.ExitCode = ExitRegression
	}
}

func (ab *AB) judgeGroup(name string) ABGroup {
	type side struct {
		groups                 []ABRunGroup
		runs                   []int // the ABRun.Index of each group
		unverified, lost, dups int
	}
	sides := map[string]*side{"A": {}, "B": {}}
	tables := map[string]bool{}
	for _, run := range ab.Runs {
		for _, g := range run.Groups {
			if g.Group != name {
				continue
			}
			s := sides[run.Side]
			s.groups = append(s.groups, g)
			s.runs = append(s.runs, run.Index)
			if !g.Verified {
				s.unverified++
			}
			if g.Lost > 0 {
				s.lost++
			}
			if g.Dup > 0 {
				s.dups++
			}
			for k, v := range g.Figures {
				if strings.HasPrefix(k, results.MetricMaxWaitersPrefix) && v > 0 {
					tables[k] = true
				}
			}
		}
	}
	a, b := sides["A"], sides["B"]
	out := ABGroup{Group: name}
	metrics := slices.Clone(abMetrics)
	for _, t := range slices.Sorted(maps.Keys(tables)) {
		metrics = append(metrics, abMetricSpec{t, verdict.LowerIsBetter})
	}
	for _, m := range metrics {
		waiters := strings.HasPrefix(m.metric, results.MetricMaxWaitersPrefix)
		pick := func(s *side) (vs []float64, runs []int) {
			for i, g := range s.groups {
				if v, ok := g.Figures[m.metric]; ok || waiters {
					vs, runs = append(vs, v), append(runs, s.runs[i])
				}
			}
			return vs, runs
		}
		av, ar := pick(a)
		bv, br := pick(b)
		if len(av) == 0 && len(bv) == 0 {
			continue
		}
		dir := "lower is better"
		if m.dir == verdict.HigherIsBetter {
			dir = "higher is better"
		}
		out.Metrics = append(out.Metrics, ABMetric{Metric: m.metric, Direction: dir, A: av, B: bv, RunsA: ar, RunsB: br,
			Result: verdict.Judge(av, bv, m.dir, ab.MinEffect)})
	}
	for _, c := range []struct {
		what string
		a, b int
	}{{"verification failed", a.unverified, b.unverified}, {"requests lost", a.lost, b.lost}, {"requests duplicated", a.dups, b.dups}} {
		if c.b > 0 && c.a == 0 {
			out.Checks = append(out.Checks, fmt.Sprintf("%s in %d of %d runs of B (0 of %d of A)", c.what, c.b, len(b.groups), len(a.groups)))
		}
	}
	return out
}

func (ab *AB) verdictLine() string {
	if ab.Worse > 0 {
		var what []string
		for _, g := range ab.Groups {
			for _, m := range g.Metrics {
				if m.Verdict == verdict.Worse {
					label, _ := metricLabel(m.Metric)
					what = append(what, g.Group+" "+strings.TrimSpace(label))
				}
			}
			for range g.Checks {
				what = append(what, g.Group+" checks")
			}
		}
		return fmt.Sprintf("WORSE (%s)", strings.Join(what, ", "))
	}
	return fmt.Sprintf("NOTHING WORSE (%d better, %d same, %d inconclusive)", ab.Better, ab.Same, ab.Inconclusive)
}

// Progress is the verdict so far, for a progress line: counts, with a reminder that the number
// of runs was fixed before the first one.
func (ab *AB) Progress() string {
	na, nb := ab.SideRuns()
	if min(na, nb) < verdict.MinRuns {
		return fmt.Sprintf("verdicts from %d runs a side", verdict.MinRuns)
	}
	return fmt.Sprintf("so far %d worse, %d better, %d same, %d inconclusive (final at %d runs a side)",
		ab.Worse, ab.Better, ab.Same, ab.Inconclusive, ab.RunsPerSide)
}

// SideRuns counts the invocations of each side so far.
func (ab *AB) SideRuns() (a, b int) {
	for _, r := range ab.Runs {
		if r.Side == "A" {
			a++
		} else {
			b++
		}
	}
	return a, b
}

// RenderAB writes an A/B for people: what ran, the method, per group a table of the metrics
// (median A, median B, B/A with its 95% interval, p, verdict; an inconclusive one with the
// runs a side that would likely settle it), the failed checks, and the verdict line, which
// agrees with AB.ExitCode.
func RenderAB(w io.Writer, ab *AB) error {
	var b strings.Builder
	na, nb := ab.SideRuns()
	fmt.Fprintf(&b, "baseline ab %s: %d+%d runs (interleaved A B B A …), min effect %s\n", ab.Suite, na, nb, FormatLimit(ab.MinEffect))
	fmt.Fprintf(&b, "  A: %s\n  B: %s\n", ab.A, ab.B)
	if len(ab.SuiteArgs) > 0 {
		fmt.Fprintf(&b, "  both: %s\n", strings.Join(ab.SuiteArgs, " "))
	}
	fmt.Fprintf(&b, "method: %s\n", ab.Method)
	for _, g := range ab.Groups {
		fmt.Fprintf(&b, "\n%s\n", g.Group)
		var block strings.Builder
		tw := tabwriter.NewWriter(&block, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  metric\tmedian A\tmedian B\tB/A\t95% interval\tp\tverdict")
		for _, m := range g.Metrics {
			c := m.Cells()
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Label, c.MedianA, c.MedianB, c.Ratio, c.Interval, c.P, c.Verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSuffix(block.String(), "\n"), "\n") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		for _, c := range g.Checks {
			fmt.Fprintf(&b, "  ✗ %s\n", c)
		}
	}
	if ab.Dir != "" {
		fmt.Fprintf(&b, "\nreports and logs: %s\n", ab.Dir)
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", ab.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// String says what a side ran: its label, the binary when that differs, its own arguments.
func (s ABSide) String() string {
	parts := []string{s.Label}
	if s.Binary != "" && s.Binary != s.Label {
		parts = append(parts, "("+s.Binary+")")
	}
	if len(s.Args) > 0 {
		parts = append(parts, strings.Join(s.Args, " "))
	}
	return strings.Join(parts, " ")
}

// ABCells are one metric's cells as RenderAB prints them (the plot page's table and charts
// show the same): its label, both medians, B/A, the interval, p and the verdict.
type ABCells struct {
	Label, MedianA, MedianB, Ratio, Interval, P, Verdict string
}

// Cells formats m as RenderAB does.
func (m ABMetric) Cells() ABCells {
	label, format := metricLabel(m.Metric)
	return ABCells{Label: strings.TrimSpace(label), MedianA: format(m.MedianA), MedianB: format(m.MedianB),
		Ratio: ratioText(m.Result), Interval: intervalText(m.Result, format), P: pText(m.P), Verdict: verdictText(m.Result)}
}

// Format formats a value of m's metric as the table does.
func (m ABMetric) Format(v float64) string {
	_, format := metricLabel(m.Metric)
	return format(v)
}

func ratioText(r verdict.Result) string {
	if !r.HasRatio {
		return render.MissingValue
	}
	return "×" + ratioFigure(r.Ratio)
}

// ratioFigure shows a ratio to three decimals, or to two significant digits below 0.01, where
// three decimals would read as 0 (a latency of microseconds against one of a 100 ms stall).
func ratioFigure(v float64) string {
	if v > 0 && v < 0.01 {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// intervalText is the ratio's interval; on the difference scale (a metric with zeros, such as
// lock waiters) the difference's, B − A, which reads better than a ratio of small counts.
func intervalText(r verdict.Result, format func(float64) string) string {
	switch {
	case !r.Bounded:
		return "unbounded"
	case r.Scale == verdict.ScaleDifference:
		return fmt.Sprintf("B−A %s to %s", signed(r.DiffLo, format), signed(r.DiffHi, format))
	}
	return ratioFigure(r.Lo) + "–" + ratioFigure(r.Hi)
}

func signed(v float64, format func(float64) string) string {
	if v > 0 {
		return "+" + format(v)
	}
	return format(v)
}

func pText(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func verdictText(r verdict.Result) string {
	if r.Verdict != verdict.Inconclusive {
		return string(r.Verdict)
	}
	switch {
	case r.RunsToSettle < 0:
		return fmt.Sprintf("inconclusive (> %d runs a side to settle)", verdict.MaxRunsToSettle)
	case r.RunsToSettle > 0:
		return fmt.Sprintf("inconclusive (~%d runs a side to settle)", r.RunsToSettle)
	}
	return string(r.Verdict)
}

// WriteABFile writes ab as indented JSON to path (through a temporary file, so a reader never
// sees half of it; into a device or a pipe directly).
func WriteABFile(path string, ab *AB) error {
	data, err := json.MarshalIndent(ab, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}

// ReadAB reads an A/B written by WriteABFile; ok is false (and err nil) when the file is JSON
// of another kind (a report), so a caller can read it as one.
func ReadAB(path string) (ab *AB, ok bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(data, &head) != nil || head.Kind != ABKind {
		return nil, false, nil
	}
	ab = new(AB)
	if err := json.Unmarshal(data, ab); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return ab, true, nil
}
