package render

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// TestWaitsThroughAPooler: a run through PgBouncer says in the summary where its requests
// queued (row lock, the service's pool, the pooler) and the finding names the longest; the
// table shows the pooler's waiting clients and PostgreSQL's sessions.
func TestWaitsThroughAPooler(t *testing.T) {
	rep := resultstest.SingleReport()
	r := &rep.Runs[0]
	r.Pooler = &results.Pooler{Kind: "pgbouncer", Version: "1.18.0", Managed: true, Mode: "transaction", PoolSize: 16,
		Samples: 50, MaxClientsWaiting: 5984, MaxWaitMs: 2400, MaxServersActive: 16, Transactions: 60000, AvgWaitMs: 800}
	r.Pool.MaxServerSessions = 16
	var b strings.Builder
	printWaits(&b, rep)
	out := b.String()
	for _, want := range []string{"through PgBouncer 1.18.0 (transaction mode, 16 server connections)", "PgBouncer 5984 at most",
		"longest 2.40 s", "PostgreSQL held 16 sessions at most"} {
		if !strings.Contains(out, want) {
			t.Errorf("the waits lack %q:\n%s", want, out)
		}
	}
	f := strings.Join(waitFindings(rep.Runs), "\n")
	if !strings.Contains(f, "waited longest in PgBouncer's queue") {
		t.Errorf("finding %q does not name the pooler", f)
	}
	cells := cellsByTitle(t, Table([]*results.Report{rep}), 0)
	if cells["pooler waiting / avg wait ms"] != "5,984 / 800.0" || cells["pg sessions"] != "16" {
		t.Errorf("pooler cells %q, %q", cells["pooler waiting / avg wait ms"], cells["pg sessions"])
	}
	if cells := cellsByTitle(t, Table([]*results.Report{rep}), 1); cells["pooler waiting / avg wait ms"] != "–" {
		t.Errorf("a run without a pooler shows %q", cells["pooler waiting / avg wait ms"])
	}
}
