package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
)

// printWaits says, for each run that had a pooler between the service and PostgreSQL, where its
// requests queued: on a hot row's lock inside PostgreSQL, in the service's pool, or in the
// pooler's queue — and how many sessions of the service PostgreSQL held at most.
func printWaits(w io.Writer, rep *results.Report) {
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
		fmt.Fprintf(w, "  %s through PgBouncer %s (%s mode, %d server connections%s): requests waited\n",
			runLabel(r), p.Version, p.Mode, p.PoolSize, hop)
		parts := []string{
			fmt.Sprintf("on a row lock: %d sessions at most, the longest %s", r.LockMonitor.MaxLockWaiters, FormatDuration(r.LockMonitor.MaxLockWaitMs)),
			fmt.Sprintf("in the service's pool: p99 %s (%d connections)", FormatDuration(r.Load.AcquireWaitMs.P99), r.Pool.MaxConns),
			fmt.Sprintf("in PgBouncer: %d clients at most, the longest %s, %s per transaction on average over %d",
				p.MaxClientsWaiting, FormatDuration(p.MaxWaitMs), FormatDuration(p.AvgWaitMs), p.Transactions),
		}
		fmt.Fprintf(w, "    %s\n", strings.Join(parts, "; "))
		fmt.Fprintf(w, "    PostgreSQL held at most %d sessions of the service (%d server connections active in PgBouncer at most)\n",
			r.Pool.MaxServerSessions, p.MaxServersActive)
		if p.SampleErrors > 0 {
			fmt.Fprintf(w, "    (%d of PgBouncer's %d console readings failed)\n", p.SampleErrors, p.SampleErrors+p.Samples)
		}
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
