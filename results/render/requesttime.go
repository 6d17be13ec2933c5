package render

import (
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/results"
)

// printRequestTime says, once per mode (and round trip, slots, level, pool size), where a request's time
// went: the pool, its statements on the client and on the server (the difference is what lies
// between the two: round trips, COMMIT's WAL flush, waiting for a CPU), and the rest, then
// each statement's. The wide summary's.
func printRequestTime(w io.Writer, rep *results.Report) {
	seen := map[string]bool{}
	between := false
	for _, r := range rep.Runs {
		rt := r.RequestTime
		first := r
		first.Repetition = 0 // one line for a mode's repetitions: the first one's
		label := runLabel(first)
		if rt == nil || seen[label] {
			continue
		}
		seen[label] = true
		fmt.Fprintf(w, "  %s request %s: pool %s, statements %s", label, FormatDuration(rt.LatencyMeanMs),
			FormatDuration(rt.AcquireMeanMs), FormatDuration(rt.StatementsMeanMs))
		if rt.ServerMeanMs > 0 {
			fmt.Fprintf(w, " (in the server %s, between %s)", FormatDuration(rt.ServerMeanMs),
				FormatDuration(rt.StatementsMeanMs-rt.ServerMeanMs))
			between = true
		}
		fmt.Fprintf(w, ", other %s (mean per request)\n", FormatDuration(rt.OtherMeanMs))
		for _, s := range rt.Statements {
			server := "server ?"
			if s.ServerMeanMs > 0 {
				server = "server " + FormatDuration(s.ServerMeanMs)
			}
			fmt.Fprintf(w, "    %.2f × %s: client %s, %s\n", s.PerRequest, truncate(s.Query, 61), FormatDuration(s.ClientMeanMs), server)
		}
	}
	if between {
		fmt.Fprintln(w, "  (between: statements' client time beyond the server's execution: round trips, COMMIT's WAL flush,\n   waiting for a CPU)")
	}
}
