package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
)

// The advice of --advise in words: the evidence table (every configuration in the order of
// cost, the figures of its longest trial, its result), why each one that did not hold failed,
// the answer, the runner-up and their confirmation, the headroom, and what the search cost.

// MissText says one missed objective with its figures: "p99 612 ms > 50 ms (12×)", "lag p99
// not measured", "not verified".
func MissText(m results.Miss) string {
	over := func(what, value, limit string) string {
		s := what + " " + value + " > " + limit
		if m.Ratio > 0 {
			s += " (" + FormatRatio(m.Ratio) + ")"
		}
		return s
	}
	switch m.Objective {
	case results.ObjectiveVerified:
		return "not verified"
	case results.ObjectiveNoFailures:
		return FormatCount(m.Value) + " requests failed"
	case results.ObjectiveQueueIntact:
		return "the queue dropped " + FormatCount(m.Value) + " records"
	case results.ObjectiveRateHeld:
		return "sent " + formatShare(m.Value) + " of its arrivals < " + formatShare(m.Limit)
	case results.ObjectiveP99:
		return over("p99", FormatDuration(m.Value), FormatDuration(m.Limit))
	case results.ObjectiveLagP99:
		if m.NotMeasured {
			return "lag p99 not measured (the objective " + FormatDuration(m.Limit) + " cannot be shown held)"
		}
		return over("lag p99", FormatDuration(m.Value), FormatDuration(m.Limit))
	case results.ObjectiveSessions:
		if m.NotMeasured {
			return "sessions not measured (the ceiling " + FormatCount(m.Limit) + " cannot be shown held)"
		}
		return over("sessions", FormatCount(m.Value), FormatCount(m.Limit))
	}
	return over(m.Objective, strconv.FormatFloat(m.Value, 'g', 4, 64), strconv.FormatFloat(m.Limit, 'g', 4, 64))
}

// PositionLabel names a configuration of an advice by its mode and position: "async-compact
// · pool 8 · batch 200".
func PositionLabel(mode string, at results.Position) string {
	return positionLabel(mode, at, results.RunConfig{}, true)
}

// Advice writes rep's advice (nothing when it has none).
func Advice(w io.Writer, rep *results.Report) {
	a := rep.Advice
	if a == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  advise: %s, %s\n", objectivesText(a.Objectives), adviceLoadText(a))
	io.WriteString(w, wrap(b.String(), SummaryWidth))
	writeEvidence(w, rep)
	b.Reset()
	writeReasons(&b, a)
	writeOutcome(&b, rep)
	writeSearchCost(&b, a)
	io.WriteString(w, wrap(b.String(), SummaryWidth))
}

// objectivesText is "p99 ≤ 50 ms, lag p99 ≤ 200 ms, at most 40 sessions".
func objectivesText(o results.Objectives) string {
	var parts []string
	if o.P99Ms > 0 {
		parts = append(parts, "p99 ≤ "+FormatDuration(o.P99Ms))
	}
	if o.LagP99Ms > 0 {
		parts = append(parts, "lag p99 ≤ "+FormatDuration(o.LagP99Ms))
	}
	if o.MaxServerSessions > 0 {
		parts = append(parts, "at most "+FormatCount(float64(o.MaxServerSessions))+" sessions")
	}
	return "holding " + strings.Join(parts, ", ")
}

func adviceLoadText(a *results.Advice) string {
	if a.Rate > 0 {
		return fmt.Sprintf("at %s/s (open loop, at most %s in flight)", formatRPS(a.Rate), FormatCount(float64(a.Concurrency)))
	}
	return "at " + FormatCount(float64(a.Concurrency)) + " workers (closed loop)"
}

// evidenceTitles are the evidence table's columns.
var evidenceTitles = []column{
	{"#", true}, {"configuration", false}, {"trials", false}, {"p99", true}, {"lag p99", true},
	{"sessions", true}, {"WAL/req", true}, {"result", false},
}

// evidenceLog is the index of the log's column among evidenceTitles: PostgreSQL's WAL, or
// InnoDB's redo on MySQL (logMetrics).
const evidenceLog = 6

// evidenceLabel is the index of the configuration's label among evidenceTitles.
const evidenceLabel = 1

// writeEvidence writes a row per configuration that ran or was pruned, in the order of cost:
// the figures of its longest trial of the search (its full-length trial for those that held).
// Whether it was verified, its throughput and the rest are its runs' in the report; why it did
// not hold is its line below the table. A label too long for SummaryWidth is cut short: the
// lines below and the answer name it whole.
func writeEvidence(w io.Writer, rep *results.Report) {
	a := rep.Advice
	rows := [][]string{}
	titles := slices.Clone(evidenceTitles)
	var logged []TableRow // the rows' figures, for the log column's title
	for i, c := range a.Configurations {
		if c.Status == results.ConfigUntried {
			continue
		}
		row := []string{strconv.Itoa(i + 1), PositionLabel(c.Mode, c.At), trialsText(c), missingValue, missingValue,
			missingValue, missingValue, resultText(c)}
		if t, ok := longestTrial(c); ok && t.Run < len(rep.Runs) {
			r := rep.Runs[t.Run]
			m := results.RunSpreads(r)
			opt := func(metric string, format func(float64) string) string {
				if s, ok := m[metric]; ok {
					return format(s.Median)
				}
				return missingValue
			}
			row[3] = FormatDuration(r.Load.LatencyMs.P99)
			row[4] = opt(results.MetricPersistLagP99Ms, FormatDuration)
			row[5] = opt(results.MetricServerSessions, FormatCount)
			row[evidenceLog] = logPerRequest(m)
			logged = append(logged, TableRow{Metrics: m})
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return
	}
	titles[evidenceLog].title = logTitle(logged)
	if over := tableWidth(titles, rows) - SummaryWidth; over > 0 {
		most := max(len(titles[evidenceLabel].title), columnWidths(titles, rows)[evidenceLabel]-over)
		for _, row := range rows {
			row[evidenceLabel] = truncate(row[evidenceLabel], most)
		}
	}
	writeColumns(w, titles, rows)
}

// longestTrial is c's search trial of the greatest length (the last of them when equal).
func longestTrial(c results.Configuration) (results.Trial, bool) {
	var best results.Trial
	ok := false
	for _, t := range c.Trials {
		if (t.Phase == results.PhaseScreen || t.Phase == results.PhaseRung) && (!ok || t.LengthMs >= best.LengthMs) {
			best, ok = t, true
		}
	}
	return best, ok
}

// trialsText is c's longest trial of the search and its repeats: "8s+3".
func trialsText(c results.Configuration) string {
	t, ok := longestTrial(c)
	if !ok {
		return missingValue
	}
	s := results.Duration(t.LengthMs).String()
	repeats := 0
	for _, t := range c.Trials {
		if t.Phase == results.PhaseConfirm {
			repeats++
		}
	}
	if repeats > 0 {
		s += "+" + strconv.Itoa(repeats)
	}
	return s
}

func resultText(c results.Configuration) string {
	if c.Status == results.ConfigUnfinished {
		return "not run longer"
	}
	return c.Status
}

// writeReasons says why each configuration that did not hold was ruled out (those pruned for
// one reason by one trial on one line), and what was never reached.
func writeReasons(w io.Writer, a *results.Advice) {
	untried := 0
	type pruning struct {
		by  int
		why string
	}
	var order []pruning
	pruned := map[pruning][]string{}
	for i, c := range a.Configurations {
		switch c.Status {
		case results.ConfigUntried:
			untried++
		case results.ConfigHeld:
		case results.ConfigPruned:
			p := pruning{by: -1, why: c.Why}
			if c.PrunedBy != nil {
				p.by = *c.PrunedBy
			}
			if _, ok := pruned[p]; !ok {
				order = append(order, p)
			}
			pruned[p] = append(pruned[p], "#"+strconv.Itoa(i+1))
		default:
			fmt.Fprintf(w, "  #%d %s: %s\n", i+1, PositionLabel(c.Mode, c.At), c.Why)
		}
	}
	for _, p := range order {
		by := ""
		if p.by >= 0 {
			by = " by #" + strconv.Itoa(p.by+1)
		}
		fmt.Fprintf(w, "  %s pruned%s: %s\n", strings.Join(pruned[p], ", "), by, p.why)
	}
	if untried > 0 {
		why := "cheaper configurations held"
		if a.Outcome == results.AdviceCannotDecide {
			why = "the budget ran out first"
		}
		fmt.Fprintf(w, "  %s not reached (%s)\n", plural(untried, "more configuration", "more configurations"), why)
	}
}

// writeOutcome writes the answer, the runner-up and the headroom, or the closest, or what the
// search would run next.
func writeOutcome(w io.Writer, rep *results.Report) {
	a := rep.Advice
	switch a.Outcome {
	case results.AdviceAnswer:
		fmt.Fprintf(w, "- answer: %s\n", choiceText(a, a.Answer))
		if a.RunnerUp != nil {
			fmt.Fprintf(w, "- runner-up: %s\n", choiceText(a, a.RunnerUp))
			fmt.Fprintf(w, "- %s\n", confirmationText(a))
		} else {
			fmt.Fprintf(w, "- runner-up: none held\n")
		}
		if a.Headroom != nil {
			fmt.Fprintf(w, "- headroom: %s\n", headroomText(a))
		}
	case results.AdviceNoneHolds:
		fmt.Fprintf(w, "- no configuration held")
		if c := a.Closest; c != nil {
			var misses []string
			for _, m := range c.Misses {
				misses = append(misses, MissText(m))
			}
			fmt.Fprintf(w, "; the closest, %s: %s", PositionLabel(c.Mode, c.At), strings.Join(misses, ", "))
		}
		fmt.Fprintln(w)
	case results.AdviceCannotDecide:
		var next []string
		for _, p := range a.Next {
			next = append(next, p.Phase+" "+PositionLabel(p.Mode, p.At)+" for "+results.Duration(p.LengthMs).String())
		}
		fmt.Fprintf(w, "- cannot decide within the budget of %s; next it would run: %s\n", results.Duration(a.BudgetMs),
			strings.Join(next, "; "))
	case results.AdviceStopped:
		fmt.Fprintf(w, "- the search was stopped before it decided\n")
	}
	for _, n := range a.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// choiceText is a choice and its figures: "async-compact · pool 8: p99 3 µs, lag p99 64.0 ms,
// 10 sessions, 4,210/s, WAL 233 B/req (medians of 4 runs of 8s, every one verified)".
func choiceText(a *results.Advice, c *results.Choice) string {
	f := c.Figures
	parts := []string{"p99 " + FormatDuration(f[results.MetricP99Ms])}
	if v, ok := f[results.MetricPersistLagP99Ms]; ok {
		parts = append(parts, "lag p99 "+FormatDuration(v))
	}
	if v, ok := f[results.MetricServerSessions]; ok {
		parts = append(parts, FormatCount(v)+" sessions")
	}
	parts = append(parts, formatRPS(f[results.MetricThroughputRPS])+"/s")
	for _, l := range logMetrics {
		if v, ok := f[l.metric]; ok {
			parts = append(parts, strings.TrimSuffix(l.title, "/req")+" "+FormatBytes(v)+"/req")
		}
	}
	runs := "1 run"
	if len(c.Runs) != 1 {
		runs = "medians of " + strconv.Itoa(len(c.Runs)) + " runs"
	}
	full := ""
	if n := len(a.LengthsMs); n > 0 {
		full = " of " + results.Duration(a.LengthsMs[n-1]).String()
	}
	return PositionLabel(c.Mode, c.At) + ": " + strings.Join(parts, ", ") + " (" + runs + full + ", every one verified)"
}

// confirmationText says what the repeats told of the runner-up against the answer.
func confirmationText(a *results.Advice) string {
	cf := a.Confirmation
	if cf == nil {
		return "not confirmed"
	}
	var js []string
	for _, j := range cf.Judgements {
		s := judgedLabel[j.Metric] + " " + j.Verdict
		if j.HasRatio && j.Bounded {
			s += fmt.Sprintf(" %s (%s–%s)", FormatRatio(j.Ratio), FormatRatio(j.Lo), FormatRatio(j.Hi))
		}
		js = append(js, s)
	}
	what := fmt.Sprintf("confirmation, %d and %d runs interleaved, the runner-up against the answer (ratio, 95%% interval): %s",
		len(cf.Winner), len(cf.RunnerUp), strings.Join(js, ", "))
	if cf.WithinNoise {
		what += fmt.Sprintf("; within noise of each other on every objective, either holds: %s or %s",
			PositionLabel(a.Answer.Mode, a.Answer.At), PositionLabel(a.RunnerUp.Mode, a.RunnerUp.At))
	}
	switch {
	case cf.Swapped:
		what += "; the search's runner-up became the answer"
	case cf.CheaperBy != "":
		what += "; the answer costs less: " + cf.CheaperBy
	default:
		what += "; nothing the order of cost measures told them apart: the answer is the first in the order given"
	}
	return what
}

// judgedLabel names a confirmation's figures.
var judgedLabel = map[string]string{
	results.MetricP99Ms: "p99", results.MetricPersistLagP99Ms: "lag p99", results.MetricServerSessions: "sessions",
	results.MetricWALBytesPerRequest: "WAL/req", results.MetricRedoBytesPerRequest: "redo/req", results.MetricThroughputRPS: "throughput",
}

// headroomText says how far the answer's load went and what broke first.
func headroomText(a *results.Advice) string {
	h := a.Headroom
	axis := results.AxisNamed(h.Axis)
	base := float64(a.Concurrency)
	if a.Rate > 0 {
		base = a.Rate
	}
	value := func(v results.Value) string {
		s := AxisValue(axis, v)
		if axis == results.AxisConcurrency {
			s = FormatCount(v.Num) + " workers"
		}
		if base > 0 {
			s += " (" + FormatRatio(v.Num/base) + ")"
		}
		return s
	}
	if len(h.Steps) == 0 {
		return "not measured (the budget left held no step of the ramp)"
	}
	s := "held up to " + value(*h.Held)
	screened := 0.0 // the highest screening that held, when above the knee
	for _, st := range h.Steps {
		if !st.Full && st.Held && st.Value.Num > h.Held.Num {
			screened = max(screened, st.Value.Num)
		}
	}
	if screened > 0 {
		s += " at the full length (its screenings held up to " + value(results.Number(screened)) + ")"
	}
	if h.Failed == nil {
		return s + ", the ramp's last step; no step failed"
	}
	return s + "; at " + value(*h.Failed) + " " + breaksText(h.Breaks) + " broke first: " + h.BreaksDetail
}

func breaksText(b string) string {
	switch b {
	case results.BreaksRowLock:
		return "the row lock"
	case results.BreaksPool:
		return "the pool"
	case results.BreaksPooler:
		return "the pooler"
	case results.BreaksPersistLag:
		return "the persist lag"
	case results.BreaksClient:
		return "the client"
	case results.BreaksSessions:
		return "the sessions ceiling"
	case results.BreaksVerified:
		return "the verification"
	}
	return "nothing alone"
}

// writeSearchCost says what the search ran, and in how long against its budget.
func writeSearchCost(w io.Writer, a *results.Advice) {
	counts := map[string]int{}
	total := 0
	for _, c := range a.Configurations {
		for _, t := range c.Trials {
			counts[t.Phase]++
			total++
		}
	}
	var parts []string
	for _, p := range []struct{ phase, one, many string }{
		{results.PhaseScreen, "screening", "screenings"}, {results.PhaseRung, "longer trial", "longer trials"},
		{results.PhaseConfirm, "repeat", "repeats"}, {results.PhaseHeadroom, "ramp step", "ramp steps"},
	} {
		if n := counts[p.phase]; n > 0 {
			parts = append(parts, plural(n, p.one, p.many))
		}
	}
	what := plural(total, "run", "runs")
	if len(parts) > 0 {
		what += " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(w, "- search: %s in %s of a %s budget; cheapest first: %s\n", what,
		results.Duration(a.UsedMs).Round(1e8), results.Duration(a.BudgetMs), shortOrder)
}

// plural is "1 run", "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return FormatCount(float64(n)) + " " + many
}

// shortOrder is the order of cost (results.Advice.Order) in a line.
const shortOrder = "sync, slots, outbox, async, async-compact; then a smaller pool, less WAL (InnoDB: redo), less lag"
