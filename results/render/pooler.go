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
