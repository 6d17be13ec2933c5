package candidates

import (
	"strconv"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// Every mode on MariaDB (a database of the run's own on the package's shared server), in one
// invocation, through the Redis queue (its applied ids on MySQL): every kind of record (full
// persistence, retries, failures) lands exactly once and every row is exact.
func TestEveryModeOnMariaDB(t *testing.T) {
	t.Parallel()
	const requests = 300
	g := lifecycle{seed: 1, persistence: PersistFull, retryRate: 0.2, failureRate: 0.1}
	var rows int64
	for i := range int64(requests) {
		rows += int64(len(g.rows(i)))
	}
	code, rep, stderr := suitetest.RunMySQL(t, New(), "--requests", strconv.Itoa(requests), "--concurrency", "30",
		"--persistence", PersistFull, "--retry-rate", "0.2", "--failure-rate", "0.1",
		"--modes", "sync,async,async-compact", "--queue-backend", "redis", "--flush-interval-ms", "20")
	if code != 0 || len(rep.Runs) != 3 {
		t.Fatalf("exit %d, %d runs\n%s", code, len(rep.Runs), stderr)
	}
	if rep.Environment.DatabaseKind != "mariadb" {
		t.Errorf("the database's kind %q, want mariadb", rep.Environment.DatabaseKind)
	}
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		suitetest.Completed(t, r, requests)
		if got := checkActual(r, checkRows); got != strconv.FormatInt(rows, 10) {
			t.Errorf("%s: %s rows, want %d", r.Mode, got, rows)
		}
	}
}
