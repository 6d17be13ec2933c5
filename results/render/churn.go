package render

import (
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/results"
)

// printChurn says, per run, what the load's pool's sessions cost: the conn-storms struck (the
// fault, when, and what it opened), the requests that ran on a cold session (a connection's
// first query) and their latency beside the run's, and the connections the pool opened in the
// measured window. Nothing for a run with none of them; unless wide, nothing for a run whose
// pool only warmed (its sessions' first queries, no connection opened while measured, no storm).
func printChurn(w io.Writer, rep *results.Report, wide bool) {
	for _, r := range rep.Runs {
		if !wide && !churned(r) {
			continue
		}
		for _, f := range r.Faults {
			if f.Storm == nil && f.Kind != "conn-storm" {
				continue
			}
			detail := f.Detail
			if f.Error != "" {
				detail += " (" + f.Error + ")"
			}
			fmt.Fprintf(w, "  %s: conn-storm at %s: %s\n", runLabel(r), FormatDuration(f.AtMs), detail)
		}
		l := r.Load
		if l.ColdSessionRequests == 0 && l.ConnectionsOpened == 0 {
			continue
		}
		what := "a connection's first query"
		if r.Pooler != nil {
			what = "a client connection's first query; through the pooler, its server connection may have been warm"
		}
		s := fmt.Sprintf("  %s: %s requests ran on a cold session (%s)", runLabel(r), formatCount(float64(l.ColdSessionRequests)), what)
		if c := l.ColdSessionLatencyMs; c != nil && c.Count > 0 {
			s += fmt.Sprintf(", p50 %s, p99 %s, max %s (all requests: p50 %s, p99 %s)", FormatDuration(c.P50), FormatDuration(c.P99),
				FormatDuration(c.Max), FormatDuration(l.LatencyMs.P50), FormatDuration(l.LatencyMs.P99))
		}
		if l.ConnectionsOpened > 0 {
			s += fmt.Sprintf("; the pool opened %s connections in the measured window", formatCount(float64(l.ConnectionsOpened)))
		}
		fmt.Fprintln(w, s)
	}
}

// churned: a run's pool opened connections while it was measured, or a conn-storm struck it.
func churned(r results.Run) bool {
	if r.Load.ConnectionsOpened > 0 {
		return true
	}
	for _, f := range r.Faults {
		if f.Storm != nil || f.Kind == "conn-storm" {
			return true
		}
	}
	return false
}
