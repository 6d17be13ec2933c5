package jobqueue

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/pgbouncertest"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestEveryModeThroughPgBouncer runs every mode through a temporary PgBouncer in transaction
// mode: each verified, River polling (no LISTEN through a transaction pooler) and saying so,
// PostgreSQL never holding more than the pooler's pool.
func TestEveryModeThroughPgBouncer(t *testing.T) {
	pgbouncertest.Need(t)
	code, rep, stderr := suitetest.RunShared(t, New(), args("--requests", "200", "--modes", "sync,async,async-compact,river",
		"--pooler", "pgbouncer", "--pooler-pool-size", "8")...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if r.Pooler == nil || r.Pool.MaxServerSessions > 8 {
			t.Errorf("%s: pooler %+v, %d server sessions (want at most 8)", r.Mode, r.Pooler, r.Pool.MaxServerSessions)
		}
		_, polled := r.Figure(FigRiverPollOnly)
		if polled != (r.Mode == River.String()) {
			t.Errorf("%s: river_poll_only present %v", r.Mode, polled)
		}
	}
	if !strings.Contains(stderr, "river ran poll-only") {
		t.Errorf("the summary does not say River polled:\n%s", stderr)
	}
}
