package render

import (
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/results"
)

// printWaits says, for the runs that had a pooler between the service and PostgreSQL, where
// their requests queued: on a hot row's lock inside PostgreSQL, in the service's pool, or in
// the pooler's queue — and how many sessions of the service PostgreSQL held at most. One line
// per run, under one line saying what the pooler was.
func printWaits(w io.Writer, rep *results.Report) {
	header := ""
	for _, r := range rep.Runs {
		p := r.Pooler
		if p == nil {
			continue
		}
		hop := ""
		switch {
		case p.PoolerRTTMs > 0 && p.DBRTTMs > 0:
			hop = fmt.Sprintf(", %s added service → pooler and %s pooler → PostgreSQL", FormatRTT(p.PoolerRTTMs), FormatRTT(p.DBRTTMs))
		case p.PoolerRTTMs > 0:
			hop = fmt.Sprintf(", %s added service → pooler", FormatRTT(p.PoolerRTTMs))
		case p.DBRTTMs > 0:
			hop = fmt.Sprintf(", %s added pooler → PostgreSQL", FormatRTT(p.DBRTTMs))
		}
		if h := fmt.Sprintf("  through PgBouncer %s (%s mode, %d server connections%s), where requests waited:\n",
			p.Version, p.Mode, p.PoolSize, hop); h != header {
			header = h
			io.WriteString(w, h)
		}
		line := fmt.Sprintf("    %s: row lock %d at most (longest %s); service pool p99 %s (%d connections); PgBouncer %d at most (longest %s, %s a transaction over %s); PostgreSQL held %d sessions at most",
			runLabel(r), r.LockMonitor.MaxLockWaiters, FormatDuration(r.LockMonitor.MaxLockWaitMs),
			FormatDuration(r.Load.AcquireWaitMs.P99), r.Pool.MaxConns,
			p.MaxClientsWaiting, FormatDuration(p.MaxWaitMs), FormatDuration(p.AvgWaitMs), formatCount(float64(p.Transactions)),
			r.Pool.MaxServerSessions)
		if p.CPUShare > 0 {
			line += fmt.Sprintf("; PgBouncer's process used %.0f%% of a core", p.CPUShare*100)
		}
		if p.SampleErrors > 0 {
			line += fmt.Sprintf(" (%d of %d console readings failed)", p.SampleErrors, p.SampleErrors+p.Samples)
		}
		fmt.Fprintln(w, line)
	}
}

// waitFindings say, for each run through a pooler, where its requests waited longest: on a
// hot row's lock (the longest lock wait the monitor saw), in the service's pool (the acquire
// wait's p99) or in the pooler's queue (the longest wait of a client it saw).
func waitFindings(runs []results.Run) []string {
	var out []string
	for _, r := range runs {
		p := r.Pooler
		if p == nil {
			continue
		}
		where := []struct {
			name string
			ms   float64
		}{
			{"on the row lock", r.LockMonitor.MaxLockWaitMs},
			{"in the service's pool", r.Load.AcquireWaitMs.P99},
			{"in PgBouncer's queue", p.MaxWaitMs},
		}
		longest := 0
		for i, w := range where {
			if w.ms > where[longest].ms {
				longest = i
			}
		}
		if where[longest].ms <= 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s through PgBouncer (%d server connections): requests waited longest %s (%s; row lock %s, service pool p99 %s, PgBouncer %s), and PostgreSQL held at most %d of the service's sessions",
			runLabel(r), p.PoolSize, where[longest].name, FormatDuration(where[longest].ms),
			FormatDuration(where[0].ms), FormatDuration(where[1].ms), FormatDuration(where[2].ms), r.Pool.MaxServerSessions))
	}
	return out
}
