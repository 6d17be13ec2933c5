package plan

import (
	"io"
	"reflect"
	"strings"
	"testing"

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
		"--postgres-url postgres://u:secret@db:5432/x --fault terminate-backends@1s")
	c := p.RunConfig(0, 7, 500, 0)
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
	if c := p.RunConfig(40, 7, 500, 0); c.Rate != 40 || c.Arrivals != "poisson" {
		t.Errorf("at a rate: %+v", c)
	}

	u := parse(t, usagecounter.New(), "--slots-levels 1,4 --duration 1s --slot-pick session")
	if c := u.RunConfig(0, 100, 0, 4); c.Slots != 4 || c.SlotPick != "session" || !reflect.DeepEqual(c.SlotsLevels, []int{1, 4}) || len(c.Suite) != 0 {
		t.Errorf("4-slot rung %+v", c)
	}
	if c := u.RunConfig(0, 100, 0, 1); c.Slots != 0 || c.SlotPick != "" {
		t.Errorf("a 1-slot rung is an unslotted run: %+v", c)
	}
	if c := parse(t, usagecounter.New(), "").RunConfig(0, 100, 2000, 1); c.MaxTries != 0 || c.RetryClasses != nil || !c.ManagedPostgres {
		t.Errorf("defaults %+v", c)
	}
	// Two runs of one plan compare as the same work; another --flush-batch-size does not.
	a, b := p.RunConfig(0, 7, 500, 0), parse(t, candidates.New(), "--requests 500 --duration 2s --retry-rate 0.25 --max-tries 3 "+
		"--retry-backoff-ms 5 --postgres-url postgres://u:secret@db:5432/x --fault terminate-backends@1s --flush-batch-size 9").RunConfig(0, 7, 500, 0)
	if reflect.DeepEqual(a.Shaping(), b.Shaping()) || !reflect.DeepEqual(a.Shaping(), p.RunConfig(0, 7, 500, 0).Shaping()) {
		t.Error("Shaping does not tell the plans apart")
	}
}

// The network's settings are recorded in milliseconds, and a different round trip is other work.
func TestRunConfigRecordsTheNetwork(t *testing.T) {
	c := parse(t, usagecounter.New(), "--db-rtt 1ms --db-rtt-jitter 200us --duration 1s").RunConfig(0, 8, 0, 1)
	if c.DBRTTMs != 1 || c.DBRTTJitterMs != 0.2 || c.RedisRTTMs != 0 || c.RTTLevelsMs != nil {
		t.Errorf("--db-rtt 1ms: %+v", c)
	}
	if d := parse(t, usagecounter.New(), "--duration 1s").RunConfig(0, 8, 0, 1); reflect.DeepEqual(c.Shaping(), d.Shaping()) {
		t.Error("a run at 1 ms compares as the same work as one over the direct path")
	}
	l := parse(t, usagecounter.New(), "--rtt-levels 0,200us,2ms --duration 1s").RunConfig(0, 8, 0, 1)
	if !reflect.DeepEqual(l.RTTLevelsMs, []float64{0, 0.2, 2}) {
		t.Errorf("--rtt-levels: %v", l.RTTLevelsMs)
	}
}
