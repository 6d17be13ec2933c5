package judge

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/verdict"
)

// Off disables a threshold of Thresholds.
const Off = -1.0

// Thresholds decide when a new measurement regressed against an old one. Limits are fractions
// (0.10 is 10%) compared with the medians; a negative limit (Off) disables its check. A pair
// with at least verdict.MinRuns runs on both sides judges its machine-dependent metrics by
// statistics instead (package verdict, against MinEffect), the limits then only saying which
// of them are checked.
type Thresholds struct {
	// MaxThroughputDrop fails a pair whose throughput fell by more than this: 1 - new/old > limit.
	// Across machines whose calibrations differ it applies to efficiency instead.
	MaxThroughputDrop float64 `json:"max_throughput_drop"`
	// MaxP95Rise fails a pair whose p95 rose by more than this: new/old - 1 > limit.
	MaxP95Rise float64 `json:"max_p95_rise"`
	// MaxP99Rise is MaxP95Rise for p99.
	MaxP99Rise float64 `json:"max_p99_rise"`
	// MaxPersistLagRise is MaxP95Rise for the persist lag p99 of queue modes.
	MaxPersistLagRise float64 `json:"max_persist_lag_rise"`
	// MaxClientCPURise fails a pair whose client CPU per request (the generator's own
	// processor time, results.Generator) rose by more than this and by more than
	// ClientCPUFloorUs: a change that makes the kit heavier takes its processor time from the
	// server it measures wherever the two share a machine.
	MaxClientCPURise float64 `json:"max_client_cpu_rise"`
	// MaxCostIncrease fails a pair whose WAL bytes, commits or statements per request rose by
	// more than this and by more than the metric's absolute floor (CostFloors).
	MaxCostIncrease float64 `json:"max_cost_increase"`
	// NoNewWaiters fails a pair where a hot table whose max waiters was 0 now has waiters (and
	// where any lock had no waiters before and has some now).
	NoNewWaiters bool `json:"no_new_waiters"`
	// RequireVerified fails a pair whose new runs did not all pass verification even when the
	// old ones did not either (a verified old and an unverified new fail regardless).
	RequireVerified bool `json:"require_verified"`
	// MinEffect is the smallest change that matters to the statistical judgement: a metric
	// regresses when the 95% interval of new/old lies wholly beyond it (verdict.Judge).
	MinEffect float64 `json:"min_effect"`
}

// DefaultThresholds are the defaults of `baseline compare`: throughput (or efficiency) may drop
// 10%, p95 may rise 20%, the client's CPU per request 25%, the database's cost per request 15%;
// no new lock waiters; p99 and persist lag are shown, not checked.
func DefaultThresholds() Thresholds {
	return Thresholds{MaxThroughputDrop: 0.10, MaxP95Rise: 0.20, MaxP99Rise: Off, MaxPersistLagRise: Off,
		MaxClientCPURise: 0.25, MaxCostIncrease: 0.15, NoNewWaiters: true, MinEffect: verdict.DefaultMinEffect}
}

// ClientCPUFloorUs is the smallest rise of the client's CPU per request, in µs, that counts as a
// regression whatever the ratio: a queue mode's enqueue costs a few µs, where the flushers'
// timing alone moves the ratio by tens of percent.
const ClientCPUFloorUs = 5.0

// CostFloors are the smallest rises per request that count as a cost regression, whatever the
// ratio: async-compact makes about 0.005 statements and 0.004 commits per request, where the
// flush timing alone moves the ratio by tens of percent.
var CostFloors = map[string]float64{
	results.MetricStatementsPerRequest: 0.01,
	results.MetricCommitsPerRequest:    0.01,
	results.MetricWALBytesPerRequest:   32,
	results.MetricRedoBytesPerRequest:  32,
}

// DefaultCalibrationTolerance widens each calibration's min–max band when deciding whether two
// machines agree (see CalibrationsAgree).
const DefaultCalibrationTolerance = 0.10

// Options of Compare.
type Options struct {
	Thresholds
	// Across names the config settings the runs of a pair may differ in (--across), by key or
	// flag name (flush_batch_size or flush-batch-size), to compare two settings on purpose.
	Across []string `json:"across,omitempty"`
	// SameMachine says both reports were measured on one machine (--same-machine): throughput and
	// latency are then compared directly even when a report has no calibration.
	SameMachine bool `json:"same_machine,omitempty"`
	// CalibrationTolerance: see CalibrationsAgree.
	CalibrationTolerance float64 `json:"calibration_tolerance"`
}

// DefaultOptions are the defaults of `baseline compare`.
func DefaultOptions() Options {
	return Options{Thresholds: DefaultThresholds(), CalibrationTolerance: DefaultCalibrationTolerance}
}

// ParseLimit reads a threshold written as a percentage, "10%" or "10" (both 0.10), or "off".
func ParseLimit(s string) (float64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	if t == "off" || t == "none" {
		return Off, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid limit %q: want a percentage such as 10%% or off", s)
	}
	return v / 100, nil
}

// FormatLimit writes a limit as ParseLimit reads it.
func FormatLimit(v float64) string {
	if v < 0 {
		return "off"
	}
	return strconv.FormatFloat(v*100, 'f', -1, 64) + "%"
}

// Verdicts of a Pair.
const (
	VerdictOK         = "ok"
	VerdictRegression = "regression"
)

// Tiers of the checks of a pair.
const (
	// TierMachineIndependent checks hold on any pair of machines: verification, lost and
	// duplicated requests, the database's cost per request, new lock waiters.
	TierMachineIndependent = "machine-independent"
	// TierMachineDependent checks (throughput, latency, persist lag) need the same machine, or
	// become efficiency across machines.
	TierMachineDependent = "machine-dependent"
)

// Bases of the machine-dependent checks.
const (
	// BasisDirect: the machines agree (or are one); throughput and latency compare directly.
	BasisDirect = "direct"
	// BasisEfficiency: the calibrations differ; throughput compares as efficiency, latency is
	// shown but not judged.
	BasisEfficiency = "efficiency"
	// BasisNone: a report has no calibration; nothing machine-dependent is judged.
	BasisNone = "none"
)

// Exit codes of `baseline compare`, decided by Comparison.ExitCode.
const (
	ExitOK            = 0
	ExitRegression    = 1
	ExitNotComparable = 2
)

// ErrNoMatch is returned (with the Comparison filled in) when no run of one report matches a
// run of the other, so there is nothing to compare.
var ErrNoMatch = errors.New("no run of the new report pairs with a run of the old one")

// Comparison is the outcome of Compare.
type Comparison struct {
	Suite   string  `json:"suite"`
	Options Options `json:"options"`
	// Machines says how the machine-dependent checks were judged, and why.
	Machines MachineBasis `json:"machines"`
	Pairs    []Pair       `json:"pairs"`
	// UnmatchedOld and UnmatchedNew describe the run groups found on one side only.
	UnmatchedOld []Unmatched `json:"unmatched_old"`
	UnmatchedNew []Unmatched `json:"unmatched_new"`
	// Matches says, for every run group of both reports, what it was paired with or why not
	// (printed by --explain).
	Matches []Match `json:"matches"`
	// Regressions counts the pairs whose verdict is VerdictRegression.
	Regressions int `json:"regressions"`
	// MachineJudged counts the pairs where a machine-dependent figure (throughput, efficiency,
	// latency, persist lag) was judged against a threshold.
	MachineJudged int `json:"machine_judged"`
	// Ladders holds, per ladder both reports have (one axis, one mode) whose rule found an
	// answer in either under the same objective, what it found in each (shown; the pairs at
	// each level are judged).
	Ladders []LadderDelta `json:"ladders,omitempty"`
}

// LadderDelta is what one ladder's rule found in the old and the new report (a knee, a best
// size, a max rate at the objective); absent on a side where it found none.
type LadderDelta struct {
	Axis     string         `json:"axis"`
	Mode     string         `json:"mode"`
	Rule     string         `json:"rule"`
	SLOP99Ms float64        `json:"slo_p99_ms,omitempty"`
	Old      *results.Value `json:"old,omitempty"`
	New      *results.Value `json:"new,omitempty"`
}

// ladderDeltas pairs the ladders of old and new by axis, mode, rule and objective (an
// objective-judged rule only with one).
func ladderDeltas(old, new *results.Report) []LadderDelta {
	var out []LadderDelta
	for _, o := range old.Ladders {
		rule := results.RuleNamed(o.Rule)
		for _, n := range new.Ladders {
			switch {
			case rule == nil || o.Axis != n.Axis || o.Mode != n.Mode || o.Rule != n.Rule || o.SLOP99Ms != n.SLOP99Ms:
			case rule.Objective && o.SLOP99Ms == 0, o.Found == nil && n.Found == nil:
			default:
				out = append(out, LadderDelta{Axis: o.Axis, Mode: o.Mode, Rule: o.Rule, SLOP99Ms: o.SLOP99Ms, Old: o.Found, New: n.Found})
			}
		}
	}
	return out
}

// MachineBasis is how the machine-dependent checks were judged (Basis*) and why.
type MachineBasis struct {
	Basis  string `json:"basis"`
	Reason string `json:"reason"`
}

// Passed is true when something was compared and no pair regressed.
func (c Comparison) Passed() bool { return len(c.Pairs) > 0 && c.Regressions == 0 }

// ExitCode is the exit status the verdict stands for: ExitOK, ExitRegression, or
// ExitNotComparable when no pair was found. Verdict gives the words for the same decision.
func (c Comparison) ExitCode() int {
	switch {
	case len(c.Pairs) == 0:
		return ExitNotComparable
	case c.Regressions > 0:
		return ExitRegression
	}
	return ExitOK
}

// Verdict is the verdict line's text; it always agrees with ExitCode.
func (c Comparison) Verdict() string {
	switch c.ExitCode() {
	case ExitNotComparable:
		return "NOTHING COMPARABLE (no run pairs; see --explain)"
	case ExitRegression:
		return fmt.Sprintf("REGRESSION (%d of %d pairs)", c.Regressions, len(c.Pairs))
	}
	switch {
	case c.Machines.Basis == BasisNone:
		return "PASS (machine-independent checks only: throughput cannot be judged across machines)"
	case c.MachineJudged == 0:
		return "PASS (machine-independent checks only: no throughput or efficiency figure on both sides)"
	}
	return "PASS"
}

// Unmatched is a run group of one report that no group of the other pairs with.
type Unmatched struct {
	Mode   string `json:"mode"`
	Level  int    `json:"level,omitempty"`
	Load   string `json:"load"`
	Config string `json:"config"`
	// Hint says why it is unpaired: how the other report's runs of the same mode and level
	// differ, or that it has none.
	Hint string `json:"hint,omitempty"`
}

// Pair is one matched run group of both reports and the verdict on it.
type Pair struct {
	Mode  string `json:"mode"`
	Level int    `json:"level,omitempty"`
	// Load is "requests × concurrency", Config the shaping config of the old side.
	Load           string `json:"load"`
	Config         string `json:"config"`
	OldRepetitions int    `json:"old_repetitions"`
	NewRepetitions int    `json:"new_repetitions"`
	OldVerified    bool   `json:"old_verified"`
	NewVerified    bool   `json:"new_verified"`
	// Judgement says how the machine-dependent metrics were judged: JudgedByStatistics when
	// both sides have at least verdict.MinRuns runs, JudgedByMedians otherwise.
	Judgement string `json:"judgement"`
	// Metrics are, machine-dependent first: throughput, efficiency, p95, p99, persist-lag p99
	// (queue runs); then machine-independent: lost, duplicated, statements, commits, WAL bytes
	// and row versions per request, max lock waiters and the max waiters of every hot table
	// that had any on either side. A metric neither side has is left out.
	Metrics []MetricDelta `json:"metrics"`
	Verdict string        `json:"verdict"`
	// Reasons says which checks failed, one line each; empty when the verdict is ok.
	Reasons []string `json:"reasons,omitempty"`
}

// How the machine-dependent metrics of a Pair were judged.
const (
	// JudgedByStatistics: the rank test and the interval of package verdict, against MinEffect.
	JudgedByStatistics = "statistics"
	// JudgedByMedians: medians against the fixed limits; too few runs to judge the noise.
	JudgedByMedians = "medians"
)

// MetricDelta is one metric on both sides.
type MetricDelta struct {
	Metric string         `json:"metric"`
	Tier   string         `json:"tier"`
	Old    results.Spread `json:"old"`
	New    results.Spread `json:"new"`
	// OldMissing and NewMissing are set when a side does not have the metric (an older report,
	// a run without a queue, pg_stat_statements not loaded).
	OldMissing bool `json:"old_missing,omitempty"`
	NewMissing bool `json:"new_missing,omitempty"`
	// Ratio is New.Median / Old.Median; nil when the old median is 0 and the new one is not.
	Ratio *float64 `json:"ratio,omitempty"`
	// BandsOverlap is true when either side was repeated and the min–max bands of the two sides
	// overlap: the difference may be noise. The verdict still follows the thresholds.
	BandsOverlap bool `json:"bands_overlap,omitempty"`
	// Regressed is true when this metric broke a threshold; Limit names the threshold checked.
	Regressed bool   `json:"regressed,omitempty"`
	Limit     string `json:"limit,omitempty"`
	// NotJudged says why a metric with a threshold was only shown.
	NotJudged string `json:"not_judged,omitempty"`
	// Statistics is the judgement of package verdict on the runs of both sides (machine-
	// dependent metrics of a pair JudgedByStatistics only); the runs' values are in it.
	Statistics *StatisticsDelta `json:"statistics,omitempty"`
}

// StatisticsDelta is a metric judged by package verdict: every run's value on both sides and
// the judgement on them.
type StatisticsDelta struct {
	Old []float64 `json:"old"`
	New []float64 `json:"new"`
	verdict.Result
}

// compareEntry is one side of a pair: the runs of a report that share mode, level and shaping
// config, summarised from the runs themselves.
type compareEntry struct {
	mode     string
	level    int
	load     string
	config   map[string]string
	reps     int
	verified bool
	metrics  map[string]results.Spread
	// values holds every run's value of each metric, in run order (for the statistics).
	values map[string][]float64
	// databaseWide holds the cost metrics that count other sessions too (a --postgres-url
	// server shared with others), which are shown but not judged.
	databaseWide map[string]bool
}

// Compare pairs the run groups of old and new and judges every pair.
//
// Pairing: see matchRuns and configDifferences (mode, level and every config key that shapes
// the work; results.NonShapingKeys never count; a suite flag on one side only takes its default;
// opt.Across keys may differ). Medians, minima and maxima come from the runs themselves, never from a
// report's stored summaries.
//
// Judging, per pair: machine-independent checks always (verified, lost = duplicated = 0, cost
// per request within MaxCostIncrease, no new lock waiters); machine-dependent ones on the basis
// judgeMachines decides once for the two reports (directly, as efficiency, or not at all).
//
// Reports of different suites or kinds of database (SameDatabase) and --across keys no run
// has are errors. When nothing pairs, the
// Comparison is returned with ErrNoMatch (its ExitCode is then ExitNotComparable).
func Compare(old, new *results.Report, opt Options) (Comparison, error) {
	if old == nil || new == nil {
		return Comparison{}, errors.New("compare: missing report")
	}
	if old.Suite != new.Suite {
		return Comparison{}, fmt.Errorf("reports are of different suites: %q and %q", old.Suite, new.Suite)
	}
	if err := SameDatabase(old, new); err != nil {
		return Comparison{}, err
	}
	across, err := acrossKeys(opt.Across, old, new)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Suite: old.Suite, Options: opt, Machines: judgeMachines(old, new, opt), Ladders: ladderDeltas(old, new)}
	oldSide := &matchSide{name: "old", entries: compareEntries(old), explicit: commandFlags(old.Environment.Command)}
	newSide := &matchSide{name: "new", entries: compareEntries(new), explicit: commandFlags(new.Environment.Command)}
	pairs, matches := matchRuns(oldSide, newSide, across)
	c.Matches = matches
	for _, ij := range pairs {
		p := comparePair(oldSide.entries[ij[0]], newSide.entries[ij[1]], opt.Thresholds, c.Machines)
		if p.Verdict == VerdictRegression {
			c.Regressions++
		}
		for _, d := range p.Metrics {
			if d.Tier == TierMachineDependent && d.Limit != "" && d.NotJudged == "" {
				c.MachineJudged++
				break
			}
		}
		c.Pairs = append(c.Pairs, p)
	}
	for _, m := range matches {
		if m.Paired {
			continue
		}
		side, list := oldSide, &c.UnmatchedOld
		if m.Side == newSide.name {
			side, list = newSide, &c.UnmatchedNew
		}
		e := side.entries[m.entry]
		*list = append(*list, Unmatched{Mode: m.Mode, Level: m.Level, Load: m.Load, Config: configText(e.config), Hint: m.Reason})
	}
	if len(c.Pairs) == 0 {
		return c, ErrNoMatch
	}
	return c, nil
}

func compareEntries(rep *results.Report) []compareEntry {
	type group struct {
		entry compareEntry
		runs  []results.Run
	}
	var order []string
	groups := make(map[string]*group)
	for _, r := range rep.Runs {
		cfg := r.Config.Shaping()
		key := fmt.Sprintf("mode=%s level=%d %s", r.Mode, r.Level(), configText(cfg))
		g, ok := groups[key]
		if !ok {
			g = &group{entry: compareEntry{mode: r.Mode, level: r.Level(), config: cfg,
				load: render.LoadText(r, ""), databaseWide: make(map[string]bool)}}
			groups[key] = g
			order = append(order, key)
		}
		g.runs = append(g.runs, r)
		for _, m := range costMetrics {
			if databaseWide(r.Database, m) {
				g.entry.databaseWide[m] = true
			}
		}
	}
	out := make([]compareEntry, 0, len(order))
	for _, key := range order {
		g := groups[key]
		s := results.SummarizeGroup(g.runs)
		e := g.entry
		e.metrics, e.verified, e.reps = s.Metrics, s.Verified, s.Repetitions
		e.values = make(map[string][]float64)
		for _, r := range g.runs {
			for k, v := range results.RunSpreads(r) {
				e.values[k] = append(e.values[k], v.Median)
			}
		}
		out = append(out, e)
	}
	return out
}

// costMetrics are the per-request figures MaxCostIncrease judges.
var costMetrics = []string{results.MetricStatementsPerRequest, results.MetricCommitsPerRequest, results.MetricWALBytesPerRequest,
	results.MetricRedoBytesPerRequest}

// databaseWide reports whether a run's figure behind a cost metric counted other sessions as
// well: on a server this invocation did not start, for the figures the report lists as
// database-wide.
func databaseWide(d *results.Database, metric string) bool {
	if d == nil || !d.Shared {
		return false
	}
	words := map[string][]string{
		results.MetricWALBytesPerRequest:   {"wal"},
		results.MetricRedoBytesPerRequest:  {"redo"},
		results.MetricCommitsPerRequest:    {"commit", "xact"},
		results.MetricStatementsPerRequest: {"statement"},
	}[metric]
	for _, name := range d.DatabaseWide {
		for _, w := range words {
			if strings.Contains(strings.ToLower(name), w) {
				return true
			}
		}
	}
	return false
}

func configText(cfg map[string]string) string {
	keys := slices.Sorted(maps.Keys(cfg))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cfg[k]
	}
	return strings.Join(parts, " ")
}

// judgeMachines decides, once for two reports, how their machine-dependent figures compare:
// directly when both calibrations agree (or --same-machine says so), as efficiency when both
// were calibrated and disagree, not at all when a report has no calibration. A hostname proves
// nothing: every VM of an image may be called "vm".
func judgeMachines(old, new *results.Report, opt Options) MachineBasis {
	oc, nc := old.Environment.Calibration, new.Environment.Calibration
	calibrated := func(c *results.Calibration) bool { return c != nil && !c.Skipped }
	switch {
	case opt.SameMachine:
		return MachineBasis{BasisDirect, "--same-machine: throughput and latency compared directly"}
	case calibrated(oc) && calibrated(nc):
		agree, why := CalibrationsAgree(*oc, *nc, opt.CalibrationTolerance)
		if agree {
			return MachineBasis{BasisDirect, "calibrations agree (" + why + "): throughput and latency compared directly"}
		}
		return MachineBasis{BasisEfficiency, "calibrations differ (" + why + "): throughput judged as efficiency, latency not judged"}
	}
	var missing []string
	for _, side := range []struct {
		name string
		c    *results.Calibration
	}{{"old", oc}, {"new", nc}} {
		switch {
		case side.c == nil:
			missing = append(missing, side.name+" report has no calibration")
		case side.c.Skipped:
			missing = append(missing, side.name+" report skipped it (--calibrate=false)")
		}
	}
	return MachineBasis{BasisNone, "throughput: cannot judge across machines (" + strings.Join(missing, ", ") +
		"; --same-machine if both ran back to back on one machine)"}
}

// CalibrationsAgree reports whether two calibrations measured machines of the same speed, and
// the figures that say so. Two rates agree when each median lies within the other's min–max
// band widened by tol on both sides (tol 0.10: 10% below the minimum to 10% above the maximum);
// the calibrations agree when every rate both measured agrees, on the same connection counts.
func CalibrationsAgree(a, b results.Calibration, tol float64) (bool, string) {
	if a.PoolConns != b.PoolConns || a.BatchedWriteConns != b.BatchedWriteConns {
		return false, fmt.Sprintf("measured on %d/%d connections here, %d/%d there",
			a.PoolConns, a.BatchedWriteConns, b.PoolConns, b.BatchedWriteConns)
	}
	var agreeing []string
	compared := 0
	for _, r := range []struct {
		name string
		a, b results.Spread
	}{
		{"hot-row updates/s on 1 connection", a.HotRowUpdateRPS1, b.HotRowUpdateRPS1},
		{fmt.Sprintf("hot-row updates/s on %d", a.PoolConns), a.HotRowUpdateRPSPool, b.HotRowUpdateRPSPool},
		{"batched rows/s", a.BatchedWriteRowsPerSec, b.BatchedWriteRowsPerSec},
	} {
		if r.a.Median <= 0 || r.b.Median <= 0 {
			continue
		}
		compared++
		text := fmt.Sprintf("%s %s vs %s", r.name, render.FormatSpread(r.a, render.FormatRPS), render.FormatSpread(r.b, render.FormatRPS))
		if !withinBand(r.a.Median, r.b, tol) || !withinBand(r.b.Median, r.a, tol) {
			return false, text
		}
		agreeing = append(agreeing, text)
	}
	if compared == 0 {
		return false, "no calibrated rate in common"
	}
	return true, strings.Join(agreeing, "; ")
}

// withinBand reports whether v lies within s's min–max band widened by tol.
func withinBand(v float64, s results.Spread, tol float64) bool {
	lo, hi := s.Min, s.Max
	if lo == 0 && hi == 0 { // a spread of one value written by hand
		lo, hi = s.Median, s.Median
	}
	return v >= min(lo, s.Median)*(1-tol) && v <= max(hi, s.Median)*(1+tol)
}

func comparePair(o, n compareEntry, th Thresholds, machines MachineBasis) Pair {
	p := Pair{Mode: o.mode, Level: o.level, Load: o.load, Config: configText(o.config),
		OldRepetitions: o.reps, NewRepetitions: n.reps, OldVerified: o.verified, NewVerified: n.verified}
	repeated := o.reps > 1 || n.reps > 1
	p.Judgement = JudgedByMedians
	if o.reps >= verdict.MinRuns && n.reps >= verdict.MinRuns {
		p.Judgement = JudgedByStatistics
	}
	delta := func(metric, tier string) (MetricDelta, bool) {
		olds, ook := o.metrics[metric]
		news, nok := n.metrics[metric]
		if !ook && !nok {
			return MetricDelta{}, false
		}
		d := MetricDelta{Metric: metric, Tier: tier, Old: olds, New: news, OldMissing: !ook, NewMissing: !nok}
		if ook && nok {
			if r, ok := ratio(olds.Median, news.Median); ok {
				d.Ratio = &r
			}
		}
		d.BandsOverlap = repeated && ook && nok && olds.Median != news.Median && olds.Min <= news.Max && news.Min <= olds.Max
		return d, true
	}
	fail := func(d *MetricDelta, reason string) {
		d.Regressed = true
		p.Reasons = append(p.Reasons, reason)
	}
	// judge checks a relative limit: a drop (higherIsBetter) or a rise, counted only beyond the
	// absolute floor; both sides must have the metric.
	judge := func(d *MetricDelta, name string, lim, floor float64, higherIsBetter bool, notJudged string) {
		statistical := p.Judgement == JudgedByStatistics && d.Tier == TierMachineDependent && !d.OldMissing && !d.NewMissing
		if statistical {
			dir := verdict.LowerIsBetter
			if higherIsBetter {
				dir = verdict.HigherIsBetter
			}
			ov, nv := o.values[d.Metric], n.values[d.Metric]
			d.Statistics = &StatisticsDelta{Old: ov, New: nv, Result: verdict.Judge(ov, nv, dir, th.MinEffect)}
		}
		if lim < 0 {
			return
		}
		word := "rise"
		if higherIsBetter {
			word = "drop"
		}
		d.Limit = word + " ≤ " + FormatLimit(lim)
		switch {
		case notJudged != "":
			d.NotJudged = notJudged
			return
		case d.OldMissing || d.NewMissing:
			side := "old"
			if d.NewMissing {
				side = "new"
			}
			d.NotJudged = "not recorded in " + side
			return
		case statistical:
			d.Limit = "95% interval vs ±" + FormatLimit(th.MinEffect)
			if st := d.Statistics; st.Verdict == verdict.Worse {
				fail(d, fmt.Sprintf("%s ×%.3f, 95%% interval %s, p %s: worse beyond %s", name, st.Ratio,
					intervalText(st.Result, func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }), pText(st.P), FormatLimit(th.MinEffect)))
			}
			return
		case d.Old.Median <= 0:
			return
		}
		change := d.New.Median/d.Old.Median - 1
		if higherIsBetter {
			change = -change
		}
		if change > lim+1e-9 && math.Abs(d.New.Median-d.Old.Median) > floor {
			verb := "rose"
			if higherIsBetter {
				verb = "dropped"
			}
			fail(d, fmt.Sprintf("%s %s %s (limit %s)%s", name, verb, pct(change), FormatLimit(lim), noiseNote(*d)))
		}
	}

	// Machine-dependent: judged on the basis decided for the two machines.
	notDirect := ""
	switch machines.Basis {
	case BasisEfficiency:
		notDirect = "machines differ"
	case BasisNone:
		notDirect = "cannot judge across machines"
	}
	if d, ok := delta(results.MetricThroughputRPS, TierMachineDependent); ok {
		judge(&d, "throughput", th.MaxThroughputDrop, 0, true, notDirect)
		p.Metrics = append(p.Metrics, d)
	}
	if d, ok := delta(results.MetricEfficiency, TierMachineDependent); ok {
		if machines.Basis == BasisEfficiency {
			judge(&d, "efficiency", th.MaxThroughputDrop, 0, true, "")
		}
		p.Metrics = append(p.Metrics, d)
	}
	for _, c := range []struct {
		metric, name string
		lim          float64
	}{{results.MetricP95Ms, "p95", th.MaxP95Rise}, {results.MetricP99Ms, "p99", th.MaxP99Rise}, {results.MetricPersistLagP99Ms, "persist-lag p99", th.MaxPersistLagRise}} {
		if d, ok := delta(c.metric, TierMachineDependent); ok {
			judge(&d, c.name, c.lim, 0, false, notDirect)
			p.Metrics = append(p.Metrics, d)
		}
	}
	// The generator's own processor time per request: machine-dependent (a faster processor
	// spends less), judged on the same basis as throughput.
	if d, ok := delta(results.MetricClientCPUPerRequestUs, TierMachineDependent); ok {
		judge(&d, "client CPU/request", th.MaxClientCPURise, ClientCPUFloorUs, false, notDirect)
		p.Metrics = append(p.Metrics, d)
	}
	// Open-loop runs: what the rate achieved and the service time, shown beside the latency
	// from the intended start (judged through p95/p99 above).
	for _, metric := range []string{results.MetricAchievedRPS, results.MetricServiceP99Ms} {
		if d, ok := delta(metric, TierMachineDependent); ok {
			p.Metrics = append(p.Metrics, d)
		}
	}

	// Machine-independent: judged on any pair of machines.
	for _, c := range []struct{ metric, name string }{{results.MetricLost, "lost requests"}, {results.MetricDuplicated, "duplicated requests"}} {
		d, ok := delta(c.metric, TierMachineIndependent)
		if !ok {
			continue
		}
		d.Limit = "= 0"
		if d.New.Max > 0 && d.Old.Max == 0 {
			fail(&d, fmt.Sprintf("%s: %s (0 in old)", c.name, render.FormatCount(d.New.Max)))
		}
		p.Metrics = append(p.Metrics, d)
	}
	for _, c := range []struct{ metric, name string }{
		{results.MetricStatementsPerRequest, "statements/request"},
		{results.MetricCommitsPerRequest, "commits/request"},
		{results.MetricWALBytesPerRequest, "WAL bytes/request"},
		{results.MetricRedoBytesPerRequest, "redo bytes/request"},
	} {
		d, ok := delta(c.metric, TierMachineIndependent)
		if !ok {
			continue
		}
		notJudged := ""
		if o.databaseWide[c.metric] || n.databaseWide[c.metric] {
			notJudged = "database-wide on a shared server"
		}
		judge(&d, c.name, th.MaxCostIncrease, CostFloors[c.metric], false, notJudged)
		p.Metrics = append(p.Metrics, d)
	}
	if d, ok := delta(results.MetricRowVersionsPerRequest, TierMachineIndependent); ok {
		p.Metrics = append(p.Metrics, d)
	}

	var newWaiterTables []string
	tables := render.WaiterTables(o.metrics)
	for _, t := range render.WaiterTables(n.metrics) {
		if _, ok := o.metrics[results.MetricMaxWaitersPrefix+t]; !ok {
			tables = append(tables, t)
		}
	}
	sort.Strings(tables)
	var tableDeltas []MetricDelta
	for _, t := range tables {
		d, _ := delta(results.MetricMaxWaitersPrefix+t, TierMachineIndependent)
		if d.Old.Median == 0 && d.New.Median == 0 {
			continue
		}
		if th.NoNewWaiters && d.Old.Median == 0 && d.New.Median > 0 {
			d.Limit = "no new waiters"
			fail(&d, fmt.Sprintf("new lock waiters on %s: 0 → %s", t, render.FormatCount(d.New.Median)))
			newWaiterTables = append(newWaiterTables, t)
		}
		tableDeltas = append(tableDeltas, d)
	}
	if d, ok := delta(results.MetricMaxLockWaiters, TierMachineIndependent); ok {
		if th.NoNewWaiters && len(newWaiterTables) == 0 && d.Old.Median == 0 && d.New.Median > 0 {
			d.Limit = "no new waiters"
			fail(&d, fmt.Sprintf("new lock waiters: 0 → %s", render.FormatCount(d.New.Median)))
		}
		p.Metrics = append(p.Metrics, d)
	}
	p.Metrics = append(p.Metrics, tableDeltas...)

	switch {
	case o.verified && !n.verified:
		p.Reasons = append(p.Reasons, "verification failed in the new report (passed in the old)")
	case th.RequireVerified && !n.verified:
		p.Reasons = append(p.Reasons, "verification failed in the new report")
	}
	p.Verdict = VerdictOK
	if len(p.Reasons) > 0 {
		p.Verdict = VerdictRegression
	}
	return p
}

func noiseNote(d MetricDelta) string {
	if d.BandsOverlap {
		return "; the noise bands overlap"
	}
	return ""
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// metricLabel names a metric in the comparison text.
func metricLabel(metric string) (label string, format func(float64) string) {
	switch metric {
	case results.MetricThroughputRPS:
		return "throughput rps", render.FormatRPS
	case results.MetricEfficiency:
		return "efficiency", render.FormatEfficiency
	case results.MetricP95Ms:
		return "p95 ms", render.FormatMs
	case results.MetricP99Ms:
		return "p99 ms", render.FormatMs
	case results.MetricPersistLagP99Ms:
		return "persist-lag p99 ms", render.FormatMs
	case results.MetricAchievedRPS:
		return "achieved rps", render.FormatRPS
	case results.MetricServiceP99Ms:
		return "service p99 ms", render.FormatMs
	case results.MetricClientCPUPerRequestUs:
		return "client CPU µs/request", render.FormatPerRequest
	case results.MetricLost:
		return "lost", render.FormatCount
	case results.MetricDuplicated:
		return "duplicated", render.FormatCount
	case results.MetricStatementsPerRequest:
		return "statements/request", render.FormatPerRequest
	case results.MetricCommitsPerRequest:
		return "commits/request", render.FormatPerRequest
	case results.MetricWALBytesPerRequest:
		return "WAL bytes/request", render.FormatPerRequest
	case results.MetricRedoBytesPerRequest:
		return "redo bytes/request", render.FormatPerRequest
	case results.MetricRowVersionsPerRequest:
		return "row versions/request", render.FormatPerRequest
	case results.MetricMaxLockWaiters:
		return "max lock waiters", render.FormatCount
	}
	if t, ok := strings.CutPrefix(metric, results.MetricMaxWaitersPrefix); ok {
		return "  waiters " + t, render.FormatCount
	}
	return metric, render.FormatCount
}

// RenderComparison writes a comparison for people: how the machines compare, one block per
// matched pair (a line per metric, by tier: old → new, ratio, the limit checked and whether it
// held or why it was not judged, whether the noise bands overlap), the unmatched runs with why,
// with explain every run group's match, and the verdict line, which always agrees with
// Comparison.ExitCode.
func RenderComparison(w io.Writer, c Comparison, explain bool) error {
	var b strings.Builder
	th := c.Options.Thresholds
	fmt.Fprintf(&b, "compare %s: %d matched, %d only in old, %d only in new\n",
		c.Suite, len(c.Pairs), len(c.UnmatchedOld), len(c.UnmatchedNew))
	fmt.Fprintf(&b, "thresholds: throughput drop %s, p95 rise %s, p99 rise %s, persist-lag rise %s, client CPU/request rise %s, cost/request rise %s, no new waiters %s, require verified %s\n",
		limitText(th.MaxThroughputDrop), limitText(th.MaxP95Rise), limitText(th.MaxP99Rise), limitText(th.MaxPersistLagRise),
		limitText(th.MaxClientCPURise), limitText(th.MaxCostIncrease), onOff(th.NoNewWaiters), onOff(th.RequireVerified))
	fmt.Fprintf(&b, "noise: a pair with %d or more runs on both sides has throughput and latency judged by statistics, worse only when the 95%% interval lies beyond ±%s; with fewer, medians meet the limits\n",
		verdict.MinRuns, FormatLimit(th.MinEffect))
	for _, p := range c.Pairs {
		if p.Judgement == JudgedByStatistics {
			fmt.Fprintf(&b, "method: %s\n", verdict.Method)
			break
		}
	}
	if len(c.Options.Across) > 0 {
		fmt.Fprintf(&b, "across: %s (pairs may differ in these)\n", strings.Join(c.Options.Across, ", "))
	}
	fmt.Fprintf(&b, "machines: %s\n", c.Machines.Reason)
	if explain {
		b.WriteString("\nmatching (keys that never count: " + strings.Join(results.NonShapingKeys(), ", ") + "):\n")
		for _, m := range c.Matches {
			fmt.Fprintf(&b, "  %s %s · %s (n=%d): %s\n", m.Side, modeText(m.Mode, m.Level), m.Load, m.Runs, m.Reason)
			for _, n := range m.Notes {
				fmt.Fprintf(&b, "      %s\n", n)
			}
		}
	}
	for _, p := range c.Pairs {
		b.WriteString("\n")
		fmt.Fprintf(&b, "%s · %s · old n=%d, new n=%d: %s\n", modeText(p.Mode, p.Level), p.Load, p.OldRepetitions, p.NewRepetitions, strings.ToUpper(p.Verdict))
		if p.Judgement == JudgedByStatistics {
			fmt.Fprintf(&b, "  machine-dependent metrics judged by statistics (≥ %d runs a side): ratio, 95%% interval, p, verdict\n", verdict.MinRuns)
		} else {
			fmt.Fprintf(&b, "  machine-dependent metrics judged on medians against fixed limits: fewer than %d runs on a side, the noise cannot be judged\n", verdict.MinRuns)
		}
		var block strings.Builder
		tw := tabwriter.NewWriter(&block, 0, 0, 2, ' ', 0)
		tier := ""
		for _, d := range p.Metrics {
			if d.Tier != tier {
				tier = d.Tier
				fmt.Fprintf(tw, "  %s\t\t\t\n", tier)
			}
			label, format := metricLabel(d.Metric)
			r := ""
			if d.Ratio != nil {
				r = "×" + strconv.FormatFloat(*d.Ratio, 'f', 2, 64)
			} else if !d.OldMissing && !d.NewMissing {
				r = "new"
			}
			check := ""
			switch {
			case d.Regressed:
				check = "FAIL " + d.Limit
			case d.NotJudged != "":
				check = "not judged: " + d.NotJudged
			case d.Limit != "":
				check = "ok " + d.Limit
			}
			if st := d.Statistics; st != nil {
				if check == "" {
					check = "shown"
				}
				check = fmt.Sprintf("%s: %s, p %s, %s", check, intervalText(st.Result, format), pText(st.P), verdictText(st.Result))
			} else if d.BandsOverlap {
				check = strings.TrimSpace(check + " (noise bands overlap)")
			}
			fmt.Fprintf(tw, "    %s\t%s → %s\t%s\t%s\n", label, sideText(d.Old, d.OldMissing, format), sideText(d.New, d.NewMissing, format), r, check)
		}
		fmt.Fprintf(tw, "    verified\t%s → %s\t\t%s\n", mark(p.OldVerified), mark(p.NewVerified), "no worse")
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSuffix(block.String(), "\n"), "\n") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		for _, r := range p.Reasons {
			fmt.Fprintf(&b, "  ✗ %s\n", r)
		}
	}
	if !explain { // --explain has said it above, with every pair
		for _, side := range []struct {
			name string
			list []Unmatched
		}{{"old", c.UnmatchedOld}, {"new", c.UnmatchedNew}} {
			for _, u := range side.list {
				fmt.Fprintf(&b, "\nonly in %s: %s · %s\n", side.name, modeText(u.Mode, u.Level), u.Load)
				if u.Hint != "" {
					fmt.Fprintf(&b, "  %s\n", u.Hint)
				}
			}
		}
	}
	for _, d := range c.Ladders {
		fmt.Fprintf(&b, "\n%s\n", ladderDeltaText(d))
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", c.Verdict())
	_, err := io.WriteString(w, b.String())
	return err
}

// ladderDeltaText is "sync rate ladder, max at p99 ≤ 200 ms: 400/s → 200/s".
func ladderDeltaText(d LadderDelta) string {
	a := results.AxisNamed(d.Axis)
	side := func(v *results.Value) string {
		if v == nil {
			return "none"
		}
		return render.AxisValue(a, *v)
	}
	what := map[string]string{"knee": "knee", "stops_paying": "stops paying beyond", "best": "best " + a.Title, "max_at_slo": "max " + a.Title}[d.Rule]
	if d.SLOP99Ms > 0 {
		what += " at p99 ≤ " + render.FormatDuration(d.SLOP99Ms)
	}
	return fmt.Sprintf("%s %s ladder, %s: %s → %s", d.Mode, a.Title, what, side(d.Old), side(d.New))
}

func modeText(mode string, level int) string {
	if level > 0 {
		return fmt.Sprintf("%s @%d", mode, level)
	}
	return mode
}

func sideText(s results.Spread, missing bool, format func(float64) string) string {
	if missing {
		return render.MissingValue
	}
	return render.FormatSpread(s, format)
}

func limitText(v float64) string {
	if v < 0 {
		return "off"
	}
	return "≤ " + FormatLimit(v)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func mark(ok bool) string {
	if ok {
		return render.VerifiedMark
	}
	return render.UnverifiedMark
}

// ratio is b/a, with ok false when a is 0 (and b is not), where no ratio exists.
func ratio(a, b float64) (float64, bool) {
	switch {
	case a == 0 && b == 0:
		return 1, true
	case a == 0:
		return math.Inf(1), false
	}
	return b / a, true
}

// SameDatabase refuses to pair reports measured on different kinds of database: the same work
// on PostgreSQL and on InnoDB is two questions (a hot row's lock waits, its commits and its
// log are each engine's own), not a change of one. A report that names no kind is
// PostgreSQL's.
func SameDatabase(a, b *results.Report) error {
	ka, kb := a.Environment.DatabaseKind, b.Environment.DatabaseKind
	if ka == "" {
		ka = "postgres"
	}
	if kb == "" {
		kb = "postgres"
	}
	if ka != kb {
		return fmt.Errorf("the reports ran on different kinds of database, %s and %s: a hot row's locks, commits and log are each engine's own, so their runs do not pair (compare runs of one kind; `baseline table` shows both side by side)",
			render.DatabaseName(a.Environment), render.DatabaseName(b.Environment))
	}
	return nil
}
