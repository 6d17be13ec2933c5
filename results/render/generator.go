package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
)

// The generator's cost: what the kit's own process spent per request and of the machine over
// each run's window, the server's beside it, the set-up and verification outside the windows,
// and whether the generator was a run's limit (results.GeneratorLimit states the rules).

// printGenerator says, on one line, the client's processor time per request and its share of
// the machine for every row that measured it, with the server's beside it where it was read;
// and on another what the runs' set-up and verification took outside their windows.
func printGenerator(w io.Writer, rep *results.Report) {
	var parts []string
	cores := 0
	for _, row := range reportRows(rep) {
		m := row.Metrics
		c, ok := m[results.MetricClientCPUPerRequestUs]
		if !ok {
			continue
		}
		part := fmt.Sprintf("%s %s a request, %s", RowLabel(row), formatMicros(c.Median), shareText(m[results.MetricClientCPUShare].Median))
		if s, ok := m[results.MetricServerCPUPerRequest]; ok {
			part += fmt.Sprintf(" (%s %s, %s)", results.KindName(row.Config.DatabaseKind()), formatMicros(s.Median), shareText(m[results.MetricServerCPUShare].Median))
		}
		parts = append(parts, part)
	}
	for _, r := range rep.Runs {
		if g := r.Generator; g != nil && g.MachineCores > 0 {
			cores = g.MachineCores
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  client CPU (the kit's own) and its share of the %d cores over the window: %s\n", cores, strings.Join(parts, "; "))
	}
	if line := phasesText(rep.Runs); line != "" {
		fmt.Fprintf(w, "  outside the windows, %s\n", line)
	}
}

// phasesText is the runs' set-up and verification in all: "set-up 3.61 s (client 1.20 CPU-s,
// PostgreSQL 2.10 CPU-s), verification 912 ms (client 0.300 CPU-s), 4 runs"; "" when no run
// measured them.
func phasesText(runs []results.Run) string {
	type total struct {
		wallMs, client, server float64
		serverRead, any        bool
	}
	var setUp, verify total
	n := 0
	add := func(t *total, p *results.Phase) {
		if p == nil {
			return
		}
		t.any = true
		t.wallMs += p.WallMs
		t.client += p.ClientCPUS
		if p.ServerCPUS != nil {
			t.server += *p.ServerCPUS
			t.serverRead = true
		}
	}
	for _, r := range runs {
		if g := r.Generator; g != nil && (g.SetUp != nil || g.Verification != nil) {
			n++
			add(&setUp, g.SetUp)
			add(&verify, g.Verification)
		}
	}
	if n == 0 {
		return ""
	}
	text := func(name string, t total) string {
		s := fmt.Sprintf("%s %s (client %s CPU-s", name, FormatDuration(t.wallMs), formatPerRequest(t.client))
		if t.serverRead {
			s += ", " + serverName(runs) + " " + formatPerRequest(t.server) + " CPU-s"
		}
		return s + ")"
	}
	var parts []string
	if setUp.any {
		parts = append(parts, text("set-up", setUp))
	}
	if verify.any {
		parts = append(parts, text("verification", verify))
	}
	runsText := "1 run"
	if n > 1 {
		runsText = strconv.Itoa(n) + " runs"
	}
	return strings.Join(parts, ", ") + ", " + runsText + " in all"
}

// formatMicros writes a per-request processor time given in µs: "212 µs", "1.52 ms".
func formatMicros(us float64) string { return FormatDuration(us / 1000) }

// generatorFindings say whether the generator was each run's limit (results.GeneratorLimit):
// a finding for each run it was, with the figures of every rule that held, and one for the
// runs it was not, with the highest figure of each rule among them — "the generator was not
// the limit: client 12% of the machine, …".
func generatorFindings(runs []results.Run) []string {
	var out []string
	var free []results.Run
	var verdicts []results.GeneratorVerdict
	for _, r := range runs {
		v, ok := results.GeneratorLimit(r)
		switch {
		case !ok:
		case v.Bound():
			out = append(out, runLabel(r)+": the generator was the limit: "+strings.Join(boundParts(r, v), "; "))
		default:
			free, verdicts = append(free, r), append(verdicts, v)
		}
	}
	if len(free) > 0 {
		out = append(out, notBoundText(free, verdicts, len(out) > 0))
	}
	return out
}

// boundParts are the figures of each rule that held for run r.
func boundParts(r results.Run, v results.GeneratorVerdict) []string {
	g := r.Generator
	var parts []string
	if v.CPUBound {
		if v.Apart {
			parts = append(parts, fmt.Sprintf("pinned apart from the server, it used %s of its %s (%s cores, %s a request)",
				shareText(v.CoresBusy), coresText(g.ClientCores), formatPerRequest(g.Client.Cores), formatMicros(g.Client.PerRequestUs)))
		} else {
			of := "of that"
			if g.Server != nil {
				of = fmt.Sprintf("of what it and %s spent (%s cores against %s)", results.KindName(r.Config.DatabaseKind()), formatPerRequest(g.Client.Cores), formatPerRequest(g.Server.Cores))
			}
			parts = append(parts, fmt.Sprintf("the %s it ran on were %s busy and it took %s %s: %s of the machine, %s a request",
				coresText(max(g.ClientCores, 1)), shareText(v.CoresBusy), shareText(v.ClientPart), of,
				shareText(g.Client.MachineShare), formatMicros(g.Client.PerRequestUs)))
		}
	}
	if v.SchedBound {
		parts = append(parts, fmt.Sprintf("goroutines waited %s for a core at p99, %s of the %s (%s)",
			FormatDuration(g.SchedLatencyP99Ms), shareText(v.SchedShare), v.SchedRef, FormatDuration(v.SchedRefMs)))
	}
	if v.GCBound {
		parts = append(parts, fmt.Sprintf("the collector paused it %s in all, %s of the window", FormatDuration(g.GCPauseTotalMs), shareText(v.GCShare)))
	}
	if v.PoolBound {
		parts = append(parts, fmt.Sprintf("requests waited %s of their time for a pool connection while %s of the server's sessions waited on the client",
			shareText(v.PoolWaitShare), shareText(v.SessionsOnClient)))
	}
	return parts
}

// notBoundText is the finding for the runs whose generator was not their limit: each rule's
// highest figure among them (and which run, when there are several).
func notBoundText(runs []results.Run, verdicts []results.GeneratorVerdict, others bool) string {
	head := "the generator was not the limit"
	switch {
	case others:
		head += " in the other runs"
	case len(runs) > 1:
		head += " in any run"
	}
	several := len(runs) > 1
	most := func(value func(int) float64) (int, float64) {
		best := 0
		for i := range runs {
			if value(i) > value(best) {
				best = i
			}
		}
		return best, value(best)
	}
	which := func(i int) string {
		if several {
			return " (" + runLabel(runs[i]) + ")"
		}
		return ""
	}
	atMost := ""
	if several {
		atMost = "at most "
	}
	var parts []string
	i, share := most(func(i int) float64 { return runs[i].Generator.Client.MachineShare })
	g := runs[i].Generator
	detail := []string{fmt.Sprintf("%s cores of %d, %s a request", formatPerRequest(g.Client.Cores), g.MachineCores, formatMicros(g.Client.PerRequestUs))}
	if v := verdicts[i]; v.Apart {
		detail = append(detail, fmt.Sprintf("pinned apart from the server, %s of its %s", shareText(v.CoresBusy), coresText(g.ClientCores)))
	} else if v.CoresBusy > 0 {
		detail = append(detail, fmt.Sprintf("the cores it ran on %s busy", shareText(v.CoresBusy)))
	}
	if g.Server != nil {
		detail = append(detail, fmt.Sprintf("%s %s of the machine", results.KindName(runs[i].Config.DatabaseKind()), shareText(g.Server.MachineShare)))
	}
	label := ""
	if several {
		label = runLabel(runs[i]) + ": "
	}
	parts = append(parts, fmt.Sprintf("client %s%s of the machine (%s%s)", atMost, shareText(share), label, strings.Join(detail, "; ")))
	unjudged := -1.0 // below every share: a run the rule could not judge is never the most
	if i, share := most(func(i int) float64 {
		if verdicts[i].SchedRefMs <= 0 {
			return unjudged
		}
		return verdicts[i].SchedShare
	}); share > unjudged {
		parts = append(parts, fmt.Sprintf("goroutines' wait for a core p99 %s%s of the %s%s", atMost, shareText(share), verdicts[i].SchedRef, which(i)))
	}
	i, share = most(func(i int) float64 { return verdicts[i].GCShare })
	parts = append(parts, fmt.Sprintf("GC pauses %s%s of the window%s", atMost, shareText(share), which(i)))
	if i, share := most(func(i int) float64 {
		if !verdicts[i].PoolJudged {
			return unjudged
		}
		return verdicts[i].PoolWaitShare
	}); share > unjudged {
		parts = append(parts, fmt.Sprintf("pool wait %s%s of a request's time%s", atMost, shareText(share), which(i)))
	}
	return head + ": " + strings.Join(parts, "; ")
}

// shareText writes a share as formatShare does, one below 0.01% as "<0.01%" (a GC pause's
// share of a window, a pool's wait on an idle pool).
func shareText(v float64) string {
	if v > 0 && v < 0.0001 {
		return "<0.01%"
	}
	return formatShare(v)
}

// coresText is "1 core", "2 cores".
func coresText(n int) string {
	if n == 1 {
		return "1 core"
	}
	return strconv.Itoa(n) + " cores"
}
