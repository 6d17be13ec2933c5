package plan

import (
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

func parse(t *testing.T, s testkit.Suite, args string) *Plan {
	t.Helper()
	p, err := Parse(s, strings.Fields(args), io.Discard)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return p
}

// What a run's report records: the engine's settings typed, the suite's own flags (and only
// those) under Suite, the open-loop settings only at a rate, the slot pick only with slots,
// URLs without their passwords.
func TestRunConfigRecordsWhatShapesTheRun(t *testing.T) {
	p := parse(t, candidates.New(), "--requests 500 --duration 2s --retry-rate 0.25 --max-tries 3 --retry-backoff-ms 5 "+
		"--postgres-url postgres://u:secret@db:5432/x --fault terminate-backends@1s --concurrency 7")
	c := p.RunConfig(nil, 500)
	if c.Requests != 500 || c.Concurrency != 7 || c.DurationMs != 2000 || c.MaxTries != 3 || c.RetryBackoffMs != 5 ||
		c.ManagedPostgres || strings.Contains(c.PostgresURL, "secret") || !strings.Contains(c.PostgresURL, "db:5432") ||
		!reflect.DeepEqual(c.Faults, []string{"terminate-backends@1s"}) {
		t.Errorf("closed-loop config %+v", c)
	}
	want := map[string]any{"persistence": candidates.PersistTerminal, "retry_rate": 0.25, "failure_rate": 0.0}
	if !reflect.DeepEqual(c.Suite, want) {
		t.Errorf("suite flags %v, want %v", c.Suite, want)
	}
	if c.Rate != 0 || c.Arrivals != "" || c.SlotPick != "" {
		t.Errorf("a closed loop records open-loop or slot settings: %+v", c)
	}
	if c := p.RunConfig(results.Position{"rate": results.Number(40)}, 500); c.Rate != 40 || c.Arrivals != "poisson" {
		t.Errorf("at a rate: %+v", c)
	}

	u := parse(t, usagecounter.New(), "--slots-levels 1,4 --duration 1s --slot-pick session")
	if c := u.RunConfig(results.Position{"slots": results.Number(4)}, 0); c.Slots != 4 || c.SlotPick != "session" ||
		!reflect.DeepEqual(c.Ladder, map[string][]results.Value{"slots": {results.Number(1), results.Number(4)}}) || len(c.Suite) != 0 {
		t.Errorf("4-slot rung %+v", c)
	}
	if c := u.RunConfig(results.Position{"slots": results.Number(1)}, 0); c.Slots != 0 || c.SlotPick != "" {
		t.Errorf("a 1-slot rung is an unslotted run: %+v", c)
	}
	if c := parse(t, usagecounter.New(), "").RunConfig(nil, 2000); c.MaxTries != 0 || c.RetryClasses != nil || !c.ManagedPostgres {
		t.Errorf("defaults %+v", c)
	}
	// Two runs of one plan compare as the same work; another --flush-batch-size does not.
	a, b := p.RunConfig(nil, 500), parse(t, candidates.New(), "--requests 500 --duration 2s --retry-rate 0.25 --max-tries 3 "+
		"--retry-backoff-ms 5 --postgres-url postgres://u:secret@db:5432/x --fault terminate-backends@1s --concurrency 7 --flush-batch-size 9").RunConfig(nil, 500)
	if reflect.DeepEqual(a.Shaping(), b.Shaping()) || !reflect.DeepEqual(a.Shaping(), p.RunConfig(nil, 500).Shaping()) {
		t.Error("Shaping does not tell the plans apart")
	}
}

// The network's settings are recorded in milliseconds, and a different round trip is other work.
func TestRunConfigRecordsTheNetwork(t *testing.T) {
	c := parse(t, usagecounter.New(), "--db-rtt 1ms --db-rtt-jitter 200us --duration 1s").RunConfig(nil, 0)
	if c.DBRTTMs != 1 || c.DBRTTJitterMs != 0.2 || c.RedisRTTMs != 0 || c.Ladder != nil {
		t.Errorf("--db-rtt 1ms: %+v", c)
	}
	if d := parse(t, usagecounter.New(), "--duration 1s").RunConfig(nil, 0); reflect.DeepEqual(c.Shaping(), d.Shaping()) {
		t.Error("a run at 1 ms compares as the same work as one over the direct path")
	}
	p := parse(t, usagecounter.New(), "--rtt-levels 0,200us,2ms --duration 1s")
	l := p.RunConfig(p.Rungs()[1], 0)
	if !reflect.DeepEqual(l.Ladder["db_rtt_ms"], []results.Value{results.Number(0), results.Number(0.2), results.Number(2)}) || l.DBRTTMs != 0.2 {
		t.Errorf("--rtt-levels: %v, the second rung's round trip %v", l.Ladder, l.DBRTTMs)
	}
}

// A MySQL run records its kind and InnoDB's settings (a PostgreSQL run neither), its URL
// without the password, and retries what its timeout faults end by MySQL's classes.
func TestRunConfigRecordsTheDatabase(t *testing.T) {
	p := parse(t, usagecounter.New(), "--mysql-url mysql://u:secret@db:3306/ --max-tries 3 --fault statement-timeout=500 --fault lock-timeout=2000")
	c := p.RunConfig(nil, 500)
	if c.ManagedPostgres || strings.Contains(c.MySQLURL, "secret") || !strings.Contains(c.MySQLURL, "db:3306") || !p.OnMySQL() {
		t.Errorf("--mysql-url: %+v", c)
	}
	for _, class := range []string{"mysql-1969", "mysql-1205", "mysql-1927", "conn_closed"} {
		if !slices.Contains(c.RetryClasses, class) {
			t.Errorf("retry classes %v lack %s", c.RetryClasses, class)
		}
	}
	if slices.Contains(c.RetryClasses, "57014") {
		t.Errorf("retry classes %v hold PostgreSQL's statement timeout on MySQL", c.RetryClasses)
	}
	m := parse(t, usagecounter.New(), "--database mariadb --innodb-deadlock-detect off --innodb-lock-wait-timeout 5s").RunConfig(nil, 500)
	if m.Database != "mariadb" || m.InnoDBDeadlockDetect != "off" || m.InnoDBLockWaitTimeoutMs != 5000 || m.InnoDBFlushLogAtTrxCommit != "1" || !m.ManagedPostgres {
		t.Errorf("--database mariadb: %+v", m)
	}
	pg := parse(t, usagecounter.New(), "").RunConfig(nil, 500)
	if pg.Database != "" || pg.InnoDBDeadlockDetect != "" || pg.InnoDBLockWaitTimeoutMs != 0 || pg.InnoDBFlushLogAtTrxCommit != "" {
		t.Errorf("PostgreSQL records InnoDB's settings: %+v", pg)
	}
	if reflect.DeepEqual(m.Shaping(), pg.Shaping()) {
		t.Error("the kind of database does not shape the work")
	}
	// The Redis queue's applied-ids table is PostgreSQL's only: refused before a server starts.
	for _, args := range []string{"--database mariadb --queue-backend redis", "--mysql-url mysql://u:pw@db:3306/ --queue-backend redis --modes async-compact"} {
		refused(t, usagecounter.New(), args, "--queue-backend redis is not on MySQL yet")
	}
}
