package results

import (
	"slices"
	"strings"
)

// Ladders: one mode's runs over one axis, a level per value, each the medians of its
// repetitions, and the answer the axis's rule finds in them. One type for every axis (Ladder
// in report.go); what differs between axes is their declaration (axis.go).

// Column is one figure a ladder level can hold: its key among the level's Figures (a metric's
// name, or ColumnMaxWaiters and ColumnMaxWaitersPerRow, the worst hot table's), how it is
// labelled and its unit (UnitRPS, UnitMs, UnitCount, UnitShare, UnitBytes).
type Column struct {
	Key, Label, Unit string
	// Beside: a summary line shows it in parentheses beside the level's value ("1ms
	// (measured 1.74 ms)"), and leaves it out when it is 0.
	Beside bool
	// of reads the figure from a level's metrics (nil: the median of metric Key, when the
	// runs have it).
	of func(m map[string]Spread) (float64, bool)
}

// The columns that are no metric of a run's: the most sessions waiting on a hot table, and on
// one physical row of it, over the hot tables.
const (
	ColumnMaxWaiters       = "max_waiters"
	ColumnMaxWaitersPerRow = "max_waiters_per_row"
)

// columns are the figures a level can hold, by key.
var columns = map[string]Column{
	MetricThroughputRPS:      {Label: "throughput", Unit: UnitRPS},
	MetricP50Ms:              {Label: "p50", Unit: UnitMs},
	MetricP95Ms:              {Label: "p95", Unit: UnitMs},
	MetricP99Ms:              {Label: "p99", Unit: UnitMs},
	MetricPersistLagP99Ms:    {Label: "persist lag p99", Unit: UnitMs},
	MetricTotalReadP99Ms:     {Label: "read total p99", Unit: UnitMs},
	MetricMaxLockWaitMs:      {Label: "longest lock wait", Unit: UnitMs},
	MetricMaxLockWaiters:     {Label: "lock waiters", Unit: UnitCount},
	MetricAcquireWaitP99Ms:   {Label: "pool wait p99", Unit: UnitMs},
	MetricRTTP50Ms:           {Label: "measured", Unit: UnitMs, Beside: true},
	MetricAchievedRPS:        {Label: "achieved", Unit: UnitRPS},
	MetricSentShare:          {Label: "sent", Unit: UnitShare},
	MetricServiceP99Ms:       {Label: "service p99", Unit: UnitMs},
	MetricLate:               {Label: "late", Unit: UnitCount},
	MetricSkipped:            {Label: "skipped", Unit: UnitCount},
	MetricWritesPerUpdate:    {Label: "writes per UPDATE", Unit: UnitCount},
	MetricWALBytesPerRequest: {Label: "WAL per request", Unit: UnitBytes},
	MetricServerCPUPerRequest: {Label: "server CPU per request", Unit: UnitMs,
		of: func(m map[string]Spread) (float64, bool) {
			s, ok := m[MetricServerCPUPerRequest]
			return s.Median / 1000, ok
		}},
	ColumnMaxWaiters: {Label: "max waiters", Unit: UnitCount,
		of: func(m map[string]Spread) (float64, bool) { return maxWithPrefix(m, MetricMaxWaitersPrefix), true }},
	ColumnMaxWaitersPerRow: {Label: "max waiters per row", Unit: UnitCount,
		of: func(m map[string]Spread) (float64, bool) { return maxWithPrefix(m, MetricMaxWaitersPerRowPrefix), true }},
}

// LadderColumn is the column of key (with its Key set); ok is false for a key no level holds.
func LadderColumn(key string) (c Column, ok bool) {
	c, ok = columns[key]
	c.Key = key
	return c, ok
}

// figures are the keys every level holds: the common ones, then the axis's columns and chart.
func (a *Axis) figures() []string {
	keys := []string{MetricThroughputRPS, MetricP50Ms, MetricP95Ms, MetricP99Ms}
	for _, k := range append(slices.Clone(a.Columns), a.Chart...) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Knee detection thresholds; see FindKnee.
const (
	KneeMaxThroughputGain = 0.05
	KneeMinP95Rise        = 0.05
)

// A Rule finds a ladder's answer in its levels (in the axis's order): the level it names, and
// how it chose when that takes saying. Rules are values, shared by the axes that look for
// the same thing.
type Rule struct {
	// Name is the rule as a ladder records it (Ladder.Rule).
	Name string
	// Objective says the rule judges the levels by the latency objective (--slo-p99-ms), and
	// met says whether a level meets it (MetSLO).
	Objective bool
	met       func(lv Level, sloP99Ms float64) bool
	// find is the index of the level the rule names (-1: none) and, when the rule says how it
	// chose, how (Ladder.FoundBy).
	find func(levels []Level, sloP99Ms float64) (int, string)
}

var (
	// RuleKnee names the saturation knee of a concurrency ladder (FindKnee).
	RuleKnee = &Rule{Name: "knee", find: func(levels []Level, _ float64) (int, string) { return FindKnee(levels), "" }}
	// RuleStopsPaying names the first level after which one more adds less than 5% throughput
	// (KneeMaxThroughputGain): where more slots stop paying; none when they never did.
	RuleStopsPaying = &Rule{Name: "stops_paying", find: func(levels []Level, _ float64) (int, string) {
		for i := 0; i+1 < len(levels); i++ {
			cur, next := levels[i].Figures[MetricThroughputRPS], levels[i+1].Figures[MetricThroughputRPS]
			if cur > 0 && next < cur*(1+KneeMaxThroughputGain) {
				return i, ""
			}
		}
		return -1, ""
	}}
	// RuleBest names the verified level of highest throughput whose p99 is within the
	// objective; without one, the verified level of highest throughput, stated as such
	// (FoundBy). The first (smaller) level wins a tie.
	RuleBest = &Rule{Name: "best", Objective: true,
		met: func(lv Level, slo float64) bool { return slo > 0 && lv.Verified && lv.Figures[MetricP99Ms] <= slo },
		find: func(levels []Level, slo float64) (int, string) {
			best, by := -1, BestByThroughput
			if slo > 0 {
				by = BestBySLO
			}
			for i, lv := range levels {
				if (lv.MetSLO || slo == 0 && lv.Verified) && (best < 0 || lv.Figures[MetricThroughputRPS] > levels[best].Figures[MetricThroughputRPS]) {
					best = i
				}
			}
			return best, by
		}}
	// RuleMaxAtSLO names the highest rate whose p99 stayed within the objective while at least
	// RateHeldFraction of its arrivals were sent (max_rate_at_slo); none without an objective.
	// A rate above one that failed may still meet it (noise, or a mode that batches better
	// under load): the highest that met it is named, and the levels say which met it.
	RuleMaxAtSLO = &Rule{Name: "max_at_slo", Objective: true,
		met: func(lv Level, slo float64) bool {
			return slo > 0 && lv.Figures[MetricP99Ms] <= slo && HeldRate(lv.Figures[MetricSentShare])
		},
		find: func(levels []Level, _ float64) (int, string) {
			for i := len(levels) - 1; i >= 0; i-- {
				if levels[i].MetSLO {
					return i, ""
				}
			}
			return -1, ""
		}}
)

// How the best rule chose (Ladder.FoundBy).
const (
	// BestBySLO: the highest throughput with p99 within the objective.
	BestBySLO = "throughput within the p99 objective"
	// BestByThroughput: no objective was given; the highest throughput, whatever its latency.
	BestByThroughput = "throughput (no objective given)"
)

// FindKnee returns the index of the saturation knee among levels in increasing concurrency,
// -1 when there is none.
//
// The knee is the lowest level L whose next level N brings both
//   - a throughput gain below 5% (KneeMaxThroughputGain): T(N) < 1.05 × T(L), a drop included;
//   - a p95 rise of at least 5% (KneeMinP95Rise): P95(N) ≥ 1.05 × P95(L).
//
// That is: L already delivers all the throughput the system has, and concurrency beyond it only
// queues. The p95 condition keeps a ladder that is flat from the start with noisy latency (no
// response to concurrency at all) from reporting a knee; the 5% floor on the rise keeps
// measurement noise from counting as "p95 keeps rising". A level whose throughput is 0 cannot
// be a knee. The last level never is: nothing after it shows that it saturated.
func FindKnee(levels []Level) int {
	for i := 0; i+1 < len(levels); i++ {
		cur, next := levels[i].Figures, levels[i+1].Figures
		if cur[MetricThroughputRPS] <= 0 {
			continue
		}
		flat := next[MetricThroughputRPS] < cur[MetricThroughputRPS]*(1+KneeMaxThroughputGain)
		queues := next[MetricP95Ms] >= cur[MetricP95Ms]*(1+KneeMinP95Rise) && next[MetricP95Ms] > cur[MetricP95Ms]
		if flat && queues {
			return i
		}
	}
	return -1
}

// RuleNamed is the rule a ladder records as name; nil for none.
func RuleNamed(name string) *Rule {
	for _, r := range []*Rule{RuleKnee, RuleStopsPaying, RuleBest, RuleMaxAtSLO} {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// BuildLadder builds the ladder of one mode over axis a from runs: the runs of mode whose
// invocation stepped over a, grouped by their value on it, one level per value in the axis's
// order, each holding the medians of its repetitions (the common figures and the axis's
// columns) and whether every run of it was verified; then the axis's rule, judged by the
// objective the runs recorded (--slo-p99-ms), marks the level it names.
func BuildLadder(a *Axis, mode string, runs []Run) Ladder {
	l := Ladder{Axis: a.Name, Mode: mode, Levels: []Level{}}
	var values []Value
	groups := map[Value][]Run{}
	for _, r := range runs {
		if _, on := r.Config.Ladder[a.Name]; r.Mode != mode || !on {
			continue
		}
		v := a.Of(r.Config)
		if _, ok := groups[v]; !ok {
			values = append(values, v)
		}
		groups[v] = append(groups[v], r)
		if a.Rule != nil && a.Rule.Objective {
			l.SLOP99Ms = r.Config.SLOP99Ms
		}
	}
	slices.SortFunc(values, Value.Compare)
	for _, v := range values {
		s := SummarizeGroup(groups[v])
		lv := Level{Value: v, Figures: map[string]float64{}, Verified: s.Verified}
		for _, k := range a.figures() {
			c := columns[k]
			if c.of == nil {
				sp, ok := s.Metrics[k]
				c.of = func(map[string]Spread) (float64, bool) { return sp.Median, ok }
			}
			if f, ok := c.of(s.Metrics); ok {
				lv.Figures[k] = f
			}
		}
		l.Levels = append(l.Levels, lv)
	}
	if a.Rule == nil {
		return l
	}
	l.Rule = a.Rule.Name
	for i := range l.Levels {
		l.Levels[i].MetSLO = a.Rule.met != nil && a.Rule.met(l.Levels[i], l.SLOP99Ms)
	}
	i, by := a.Rule.find(l.Levels, l.SLOP99Ms)
	l.FoundBy = by
	if i >= 0 {
		l.Levels[i].Found = true
		found := l.Levels[i].Value
		l.Found = &found
	}
	return l
}

// BuildLadders builds every ladder of runs: for each axis their invocation stepped over, in
// the order of Axes, one per mode that ran on it, in the order the modes first appear.
func BuildLadders(runs []Run) []Ladder {
	var modes []string
	for _, r := range runs {
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
	}
	var out []Ladder
	for _, a := range Axes {
		for _, mode := range modes {
			if l := BuildLadder(a, mode, runs); len(l.Levels) > 0 {
				out = append(out, l)
			}
		}
	}
	return out
}

// maxWithPrefix is the largest median of the metrics named prefix+table: the worst table.
func maxWithPrefix(m map[string]Spread, prefix string) float64 {
	var v float64
	for k, s := range m {
		if strings.HasPrefix(k, prefix) {
			v = max(v, s.Median)
		}
	}
	return v
}
