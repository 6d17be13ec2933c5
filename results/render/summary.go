package render

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/results"
)

// SummaryOptions say how Summary writes a report.
type SummaryOptions struct {
	// Modes are the suite's, in the order the overflow warning lists them.
	Modes []string
	// HotTables are the suite's hot tables, whose waiters the short table and the findings
	// show (nil: every table the monitor named).
	HotTables []string
	// Wide writes the full table of `baseline table` instead of the short one, no findings, and
	// every secondary paragraph: the calibration, where a request's time went, the cold sessions.
	Wide bool
}

// Summary writes the summary a suite binary prints on stderr at the end. By default it fits
// SummaryWidth columns: the short table (per mode: throughput, request p99, persist lag p99,
// waiters on the hot tables, WAL per request, verified), the findings in plain words, the
// warnings, then only the secondary paragraphs that tell something: the calibration when it
// was noisy, what churned (a conn-storm, connections opened while measured), what went wrong
// (errors, retries, failed checks, checks not made), the ladders (a line each: its levels and
// what its rule found) and open-loop rates. With Wide, the side-by-side table of `baseline
// table` and every paragraph, unwrapped.
func Summary(w io.Writer, rep *results.Report, opt SummaryOptions) {
	if rep.Advice != nil { // a search says what it found, even before its first run
		adviceSummary(w, rep, opt)
		return
	}
	if len(rep.Runs) == 0 {
		if rep.Error != "" {
			fmt.Fprintf(w, "%s: no run completed: %s\n", rep.Suite, rep.Error)
		}
		return
	}
	if opt.Wide {
		wideSummary(w, rep, opt.Modes)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s: %s\n", rep.Suite, loadLine(rep))
	fmt.Fprintf(&b, "  %s\n", databaseLine(rep.Environment, true))
	printNetwork(&b, rep)
	var out strings.Builder
	out.WriteString(wrap(b.String(), SummaryWidth))
	writeShortTable(&out, reportRows(rep), opt.HotTables)
	b.Reset()
	fmt.Fprintln(&b, "  (a queue mode's request is its enqueue; lag: enqueue → commit; --wide: every column and detail)")
	printHotKeys(&b, rep)
	if findings := Findings(rep, opt.HotTables); len(findings) > 0 {
		for _, f := range findings {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	for _, warning := range Warnings(rep, opt.Modes) {
		fmt.Fprintf(&b, "%s: warning: %s\n", rep.Suite, warning)
	}
	printWaits(&b, rep) // pooler.go
	// The calibration's figures beside the warning that it was noisy, or why there are none
	// (other than --calibrate=false); else they are --wide's.
	if c := rep.Environment.Calibration; calibrationWarning(c) != "" || c != nil && c.Why != "" {
		printCalibration(&b, rep.Environment.Calibration, false)
	}
	printGenerator(&b, rep) // generator.go
	printProblems(&b, rep)
	printChurn(&b, rep, false)
	printOpenLoop(&b, rep, false)
	out.WriteString(wrap(b.String(), SummaryWidth))
	io.WriteString(w, out.String())
}

// adviceSummary is the summary of a search (--advise): the machine, the advice (advice.go) and
// what went wrong; with Wide, the full table of every trial before it.
func adviceSummary(w io.Writer, rep *results.Report, opt SummaryOptions) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s: a search of %d runs\n", rep.Suite, len(rep.Runs))
	fmt.Fprintf(&b, "  %s\n", databaseLine(rep.Environment, true))
	printNetwork(&b, rep)
	io.WriteString(w, wrap(b.String(), SummaryWidth))
	if opt.Wide {
		_ = RenderMarkdown(w, Table([]*results.Report{rep}))
	}
	Advice(w, rep)
	b.Reset()
	printProblems(&b, rep)
	io.WriteString(w, wrap(b.String(), SummaryWidth))
}

// wideSummary is the summary with Wide: the full table, the calibration, what went wrong, the
// open-loop rates and the warnings.
func wideSummary(w io.Writer, rep *results.Report, modes []string) {
	fmt.Fprintf(w, "\n%s  (%s)\n", rep.Suite, databaseLine(rep.Environment, false))
	printNetwork(w, rep)
	// One row per run, or with repetitions the medians with their min–max spread, one row per
	// mode (and level).
	_ = RenderMarkdown(w, Table([]*results.Report{rep}))
	printHotKeys(w, rep)
	printWaits(w, rep) // pooler.go
	printCalibration(w, rep.Environment.Calibration, true)
	printFlushTime(w, rep)
	printRequestTime(w, rep)
	printGenerator(w, rep) // generator.go
	for _, f := range generatorFindings(rep.Runs) {
		fmt.Fprintf(w, "- %s\n", f)
	}
	printProblems(w, rep)
	printChurn(w, rep, true)
	printOpenLoop(w, rep, true)
	if warning := overflowWarning(rep, modes); warning != "" {
		fmt.Fprintf(w, "%s: warning: %s\n", rep.Suite, warning)
	}
}

// loadLine is what every run of the report was given: "3,000 requests × 300 workers (at most
// 10s), median of 3 runs per mode".
func loadLine(rep *results.Report) string {
	r := rep.Runs[0]
	st := r.Config
	if st.Role == "consumer" { // its load flags are the defaults: the load is the producers'
		s := "a split run's consumer (its load is the producers')"
		if st.Verify {
			s += ", verifying"
		}
		return s
	}
	var s string
	switch {
	case st.Requests > 0:
		s = formatCount(float64(st.Requests)) + " requests"
		if st.DurationMs > 0 {
			s += " (at most " + results.Duration(st.DurationMs).String() + ")"
		}
	case st.DurationMs > 0:
		s = results.Duration(st.DurationMs).String()
	default:
		s = formatCount(float64(r.Load.CompletedRequests)) + " requests"
	}
	conc := st.Concurrency
	if conc == 0 {
		conc = r.Load.Concurrency
	}
	s += " × " + formatCount(float64(conc)) + " workers"
	if st.Repeat > 1 {
		s += fmt.Sprintf(", median of %d runs per mode", st.Repeat)
	}
	return s
}

// shortVersion is PostgreSQL's version without the packager's note: "15.18".
func shortVersion(v string) string {
	if i := strings.Index(v, " ("); i > 0 {
		v = v[:i]
	}
	if i := strings.Index(v, "-"); i > 0 { // MariaDB's 10.11.19-MariaDB-0+deb12u1, a distribution's 8.0.36-0ubuntu0.22.04.1
		v = v[:i]
	}
	return v
}

// wrap folds every line of text longer than width, after its last ", " or "; " in the second
// half of the width, else at its last space; the rest continues on lines indented by four
// spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		indent := ""
		for utf8.RuneCountInString(indent+line) > width {
			runes := []rune(indent + line)
			head := string(runes[:width+1])
			cut := max(strings.LastIndex(head, ", "), strings.LastIndex(head, "; ")) + 1
			if cut < len(head)/2 {
				cut = strings.LastIndex(head, " ")
			}
			if cut <= len(indent) {
				break // one word longer than the line: leave it whole
			}
			b.WriteString(strings.TrimRight(string(runes)[:cut], " ") + "\n")
			line = strings.TrimLeft(string(runes)[cut:], " ")
			indent = "    "
		}
		b.WriteString(indent + line)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// printNetwork says, under the header, what round trip the probes measured on each path. An
// RTT ladder's rungs each had their own: its lines below the table say them, rung by rung.
func printNetwork(w io.Writer, rep *results.Report) {
	n := rep.Environment.Network
	if n == nil {
		return
	}
	if slices.ContainsFunc(rep.Ladders, func(l results.Ladder) bool { return l.Axis == results.AxisRTT.Name }) {
		n = &results.Network{Redis: n.Redis}
	}
	var parts []string
	for _, p := range []struct {
		name string
		path *results.NetworkPath
	}{{serverName(rep.Runs), n.Postgres}, {"Redis", n.Redis}} {
		if p.path == nil || p.path.Probes == 0 {
			continue
		}
		s := fmt.Sprintf("%s %.3f / %.3f ms", p.name, p.path.RTTMs.P50, p.path.RTTMs.P99)
		switch {
		case p.path.Proxied && p.path.ConfiguredRTTMs > 0:
			s += fmt.Sprintf(" (%s added)", FormatRTT(p.path.ConfiguredRTTMs))
		case p.path.Proxied:
			s += " (through the proxy)"
		}
		parts = append(parts, s)
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  round trip p50 / p99: %s\n", strings.Join(parts, ", "))
	}
}

// printCalibration says what the machine managed before the runs (the basis of "eff"); wide
// as the full table's summary has it, else in the short summary's units.
func printCalibration(w io.Writer, c *results.Calibration, wide bool) {
	switch {
	case c == nil:
	case c.Skipped && c.Why != "" && wide:
		fmt.Fprintf(w, "  calibration skipped (%s): no efficiency\n", c.Why)
	case c.Skipped && c.Why != "":
		fmt.Fprintf(w, "  calibration skipped (%s)\n", c.Why)
	case c.Skipped && wide:
		fmt.Fprintln(w, "  calibration skipped (--calibrate=false): no efficiency")
	case c.Skipped:
		fmt.Fprintln(w, "  calibration skipped (--calibrate=false)")
	case wide:
		fmt.Fprintf(w, "  calibration (%.1f s): hot-row UPDATE %.0f/s on 1 conn, %.0f/s on %d; batched write %.0f rows/s on %d; eff = rps / hot-row rate (sync, outbox), persisted records/s / batched rate (queues)\n",
			c.DurationMs/1000, c.HotRowUpdateRPS1.Median, c.HotRowUpdateRPSPool.Median, c.PoolConns,
			c.BatchedWriteRowsPerSec.Median, c.BatchedWriteConns)
	default:
		fmt.Fprintf(w, "  calibration %s: hot-row UPDATE %s/s on 1 conn, %s/s on %d; batched write %s rows/s on %d\n",
			FormatDuration(c.DurationMs), formatRPS(c.HotRowUpdateRPS1.Median), formatRPS(c.HotRowUpdateRPSPool.Median), c.PoolConns,
			formatRPS(c.BatchedWriteRowsPerSec.Median), c.BatchedWriteConns)
	}
}

// printHotKeys says, for a report whose requests spread over their hot keys by a skewed
// distribution (config.hot_key_dist), which one, the share of the writes the hottest set took
// beside the distribution's, and per queue mode the queued writes that went into each UPDATE.
func printHotKeys(w io.Writer, rep *results.Report) {
	var dist string
	var keys int
	var lo, hi, expected float64
	for _, r := range rep.Runs {
		if r.Config.HotKeyDist == "" || r.HotSets == nil {
			continue
		}
		if dist == "" {
			lo, hi = r.HotSets.HottestShare, r.HotSets.HottestShare
		}
		dist, keys, expected = r.Config.HotKeyDist, r.Config.HotKeys, r.HotSets.ExpectedHottestShare
		lo, hi = min(lo, r.HotSets.HottestShare), max(hi, r.HotSets.HottestShare)
	}
	if dist == "" {
		return
	}
	share := formatShare(lo)
	if hi := formatShare(hi); hi != share {
		share += spreadSep + hi
	}
	line := fmt.Sprintf("  hot keys %s over %s: the hottest took %s of the writes (the distribution: %s)",
		dist, formatCount(float64(keys)), share, formatShare(expected))
	var merged []string
	for _, row := range reportRows(rep) {
		if v, ok := row.Metrics[results.MetricWritesPerUpdate]; ok {
			merged = append(merged, RowLabel(row)+" "+formatPerRequest(v.Median))
		}
	}
	if len(merged) > 0 {
		line += "; writes per UPDATE: " + strings.Join(merged, ", ")
	}
	fmt.Fprintln(w, line)
}

// classCounts is counts by error class as a line: the most first, "request_timeout 9, 57P01 2".
func classCounts(counts map[string]int64) string {
	classes := slices.Collect(maps.Keys(counts))
	slices.SortFunc(classes, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = c + " " + strconv.FormatInt(counts[c], 10)
	}
	return strings.Join(parts, ", ")
}

// printProblems lists error classes, failed checks, checks not made and the ladders under the
// table.
func printProblems(w io.Writer, rep *results.Report) {
	for _, r := range rep.Runs {
		label := runLabel(r) // "sync", "sync on MariaDB", "sync ×64"
		if len(r.Load.ErrorCounts) > 0 {
			fmt.Fprintf(w, "  %s errors: %s\n", label, classCounts(r.Load.ErrorCounts))
		}
		if rt := r.Load.Retries; rt != nil && rt.RetriedRequests > 0 {
			fmt.Fprintf(w, "  %s retries: %d requests retried (tries per request %s), retries by class %s\n",
				label, rt.RetriedRequests, triesText(rt.TriesPerRequest), classCounts(rt.RetriesByClass))
		}
		if rt := r.Load.Retries; rt != nil && rt.MaxTries > 1 && len(rt.FailedAfterLastTryByClass) > 0 {
			fmt.Fprintf(w, "  %s failed after %d tries: %v\n", label, rt.MaxTries, rt.FailedAfterLastTryByClass)
		}
		if r.Error != "" { // redacted by the engine, as the report holds it
			fmt.Fprintf(w, "  %s: %s\n", label, r.Error)
		}
		if u := r.Verification.Unverified; u != nil {
			fmt.Fprintf(w, "  %s: UNVERIFIED: %s; requests: %s succeeded, %s failed, %s of unknown outcome%s\n", label, u.Reason,
				formatCount(float64(u.Succeeded)), formatCount(float64(u.Failed)), formatCount(float64(u.Unknown)), heldText(u.Held))
		}
		for _, c := range r.Verification.Checks {
			switch c.State {
			case results.CheckFailed:
				fmt.Fprintf(w, "  %s: check %q failed: expected %v, got %v\n", label, c.Name, c.Expected, c.Actual)
			case results.CheckNotChecked:
				fmt.Fprintf(w, "  %s: check %q not made: %s\n", label, c.Name, c.Reason)
			}
		}
	}
	printLadders(w, rep) // ladder.go
}

// triesText is the tries-per-request histogram in order: "1:5712 2:250 3:38".
func triesText(h map[int]int64) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(h)) {
		parts = append(parts, fmt.Sprintf("%d:%d", n, h[n]))
	}
	return strings.Join(parts, " ")
}

// printOpenLoop says what each open-loop run achieved; with warn,
// also which runs could not hold their rate (the short summary has that among its warnings).
func printOpenLoop(w io.Writer, rep *results.Report, warn bool) {
	for _, r := range rep.Runs {
		ol := r.Load.OpenLoop
		if ol == nil {
			continue
		}
		fmt.Fprintf(w, "  %s at %s/s: achieved %s/s, sent %s of %s arrivals, service p99 %s, schedule lag p99 %s, late %s, skipped %s, unsent %s\n",
			r.Mode, formatRate(ol.TargetRPS), formatRPS(ol.AchievedRPS), formatCount(float64(ol.Scheduled-ol.Skipped-ol.Unsent)),
			formatCount(float64(ol.Scheduled)), FormatDuration(ol.ServiceMs.P99), FormatDuration(ol.ScheduleLagMs.P99),
			formatCount(float64(ol.Late)), formatCount(float64(ol.Skipped)), formatCount(float64(ol.Unsent)))
		if warn && !ol.HeldRate {
			fmt.Fprintf(w, "%s: warning: %s could not hold --rate %s: sent %.1f%% of its arrivals, achieved %s/s; latency counts the wait of the requests it fell behind on\n",
				rep.Suite, r.Mode, formatRate(ol.TargetRPS), 100*ol.SentShare, formatRPS(ol.AchievedRPS))
		}
	}
}

func formatRate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// heldText says how many accepted writes a run left unpersisted ("" for none).
func heldText(n int64) string {
	if n == 0 {
		return ""
	}
	return "; " + formatCount(float64(n)) + " accepted writes not persisted"
}

// databaseLine is the summary's line of the database and the machine: "PostgreSQL 15.18,
// durability on, linux-amd64-2cpu"; every server of a ladder over the database's kind
// ("MariaDB 10.11.14 and PostgreSQL 15.18, durability on, …"). short drops a packager's
// suffix from a version.
func databaseLine(e results.Environment, short bool) string {
	var names, durable []string
	for _, s := range e.Servers() {
		v := s.Version
		if short {
			v = shortVersion(v)
		}
		names = append(names, results.KindName(s.Kind)+" "+v)
		durable = append(durable, results.Environment{Durability: s.Durability, DatabaseDataFS: s.DataFS}.DurabilityText())
	}
	if len(slices.Compact(slices.Clone(durable))) > 1 { // each its own
		for i := range names {
			names[i] += " (durability " + durable[i] + ")"
		}
		return fmt.Sprintf("%s, %s", strings.Join(names, " and "), e.MachineClass)
	}
	return fmt.Sprintf("%s, durability %s, %s", strings.Join(names, " and "), durable[0], e.MachineClass)
}

// serverName names the database of runs in a line about them: the kind of them all ("MariaDB"),
// or "the database" when they ran on several kinds.
func serverName(runs []results.Run) string {
	name := ""
	for i, r := range runs {
		switch k := results.KindName(r.Config.DatabaseKind()); {
		case i == 0:
			name = k
		case k != name:
			return "the database"
		}
	}
	if name == "" {
		return "the database"
	}
	return name
}
