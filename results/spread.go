package results

import "sort"

// Spreads of a group of runs: the median, min and max of each of their metrics (runMetrics),
// grouped by mode and position on the axes (axis.go). The report's Summaries, the table's
// rows, a ladder's levels and a comparison's pairs are each such a group.

// RunSpreads is the spread of a single run, by metric (a table row of one run): median, min and max are the value itself.
func RunSpreads(r Run) map[string]Spread {
	out := make(map[string]Spread)
	for k, v := range runMetrics(r) {
		out[k] = Spread{Median: v, Min: v, Max: v}
	}
	return out
}

// Summarize groups runs by mode and rung (Run.Rung: the position on every axis their
// invocation stepped over), in the order each group first appears, and gives the median, min
// and max of every metric named by the Metric constants (including one MetricMaxWaitersPrefix
// entry per hot table). A metric that only some runs have (persist lag when a run had no
// queue) is summarised over the runs that have it. Verified is true when the verification of
// every run of the group passed.
func Summarize(runs []Run) []Summary {
	return summarize(runs, Run.Rung)
}

// SummarizeOver is Summarize over the given axes, whether the runs' invocation stepped them
// or not: a search over several axes groups its runs by the ones it compares.
func SummarizeOver(runs []Run, axes []*Axis) []Summary {
	return summarize(runs, func(r Run) Position {
		p := Position{}
		for _, a := range axes {
			p[a.Name] = a.Of(r.Config)
		}
		return p
	})
}

func summarize(runs []Run, at func(Run) Position) []Summary {
	type group struct {
		mode, at string
	}
	var order []group
	byGroup := make(map[group][]Run)
	positions := make(map[group]Position)
	for _, r := range runs {
		p := at(r)
		g := group{r.Mode, p.Key()}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
			positions[g] = p
		}
		byGroup[g] = append(byGroup[g], r)
	}
	out := make([]Summary, 0, len(order))
	for _, g := range order {
		out = append(out, summarizeGroup(g.mode, positions[g], byGroup[g]))
	}
	return out
}

// SummarizeGroup is the summary of the runs of one group (of one mode and rung, read from the
// first).
func SummarizeGroup(runs []Run) Summary {
	if len(runs) == 0 {
		return Summary{Metrics: map[string]Spread{}}
	}
	return summarizeGroup(runs[0].Mode, runs[0].Rung(), runs)
}

func summarizeGroup(mode string, at Position, runs []Run) Summary {
	values := make(map[string][]float64)
	verified := len(runs) > 0
	for _, r := range runs {
		for k, v := range runMetrics(r) {
			values[k] = append(values[k], v)
		}
		verified = verified && r.Verification.Passed
	}
	metrics := make(map[string]Spread, len(values))
	for k, vs := range values {
		metrics[k] = spreadOf(vs)
	}
	if len(at) == 0 {
		at = nil
	}
	return Summary{Mode: mode, At: at, Repetitions: len(runs), Verified: verified, Metrics: metrics}
}

// spreadOf returns median (the mean of the two middle values for an even count), min and max.
func spreadOf(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[n-1]}
}
