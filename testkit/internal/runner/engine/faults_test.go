package engine_test

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// The engine under faults, tested once for every suite, on the counter suite (it has every
// mode, slots and Redis): what the engine, the queue and PostgreSQL do when connections,
// servers, flushers and Redis die is the same whichever suite's SQL runs. Each suite's own
// part (its lookups and its guard) is its conformance table's (docs/testing.md).

// Requests are all there or not at all, and counted once, when connections and
// servers die in the middle of them, with and without retries.
func TestRequestsAtomicUnderFaults(t *testing.T) {
	suitetest.AtomicUnderFaults(t, usagecounter.New(), "sync,outbox", 1000, 200)
}

// Faults: each run completes, failures are counted by class, the async queue persists
// everything it accepted, and verification with reconciliation is exact (suitetest.Exact).
// Restart and crash in sync and outbox are TestRequestsAtomicUnderFaults' (crash there in
// async-compact too).
func TestFaults(t *testing.T) {
	shared := suitetest.Shared(t)
	cases := []struct {
		name     string
		args     []string
		fault    string // the event that must have happened
		failures bool   // requests are expected to fail (counted by class)
	}{
		{"terminate-backends sync", append(shared, "--modes", "sync", "--requests", "0", "--duration", "2s",
			"--concurrency", "40", "--fault", "terminate-backends@700ms"), "terminate-backends", true},
		{"terminate-backends async-compact", append(shared, "--modes", "async-compact", "--requests", "10000",
			"--concurrency", "200", "--flush-batch-size", "200", "--fault", "terminate-backends@30ms"), "terminate-backends", false},
		{"terminate-backends outbox", append(shared, "--modes", "outbox", "--requests", "0", "--duration", "2s",
			"--concurrency", "40", "--fault", "terminate-backends@700ms"), "terminate-backends", true},
		{"restart-postgres async-compact", []string{"--modes", "async-compact", "--requests", "10000",
			"--concurrency", "200", "--flush-batch-size", "200", "--fault", "restart-postgres@30ms"}, "restart-postgres", false},
		{"kill-flusher async-compact", append(shared, "--modes", "async-compact", "--requests", "5000",
			"--concurrency", "100", "--flush-batch-size", "200", "--fault", "kill-flusher@10ms"), "kill-flusher", false},
		{"pause-flush async-compact full queue", append(shared, "--modes", "async-compact", "--requests", "5000",
			"--concurrency", "100", "--queue-capacity", "1000", "--fault", "pause-flush@10ms+500ms"), "pause-flush", false},
		{"pause-flush outbox", append(shared, "--modes", "outbox", "--requests", "1000", "--concurrency", "50",
			"--fault", "pause-flush@10ms+500ms"), "pause-flush", false},
		// Sixteen sessions on the hot row and a timeout of 1 ms: with the tests' pool of four,
		// three waiters behind a holder of well under a millisecond wait less than 5 ms on a
		// fast machine, and nothing times out.
		{"lock-timeout sync", append(shared, "--modes", "sync", "--requests", "600", "--concurrency", "150",
			"--max-connections", "16", "--fault", "lock-timeout=1"), "lock-timeout", true},
		{"statement-timeout sync", append(shared, "--modes", "sync", "--requests", "600", "--concurrency", "150",
			"--max-connections", "16", "--fault", "statement-timeout=1"), "statement-timeout", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rep, stderr := suitetest.Run(t, usagecounter.New(), c.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			r := rep.Runs[0]
			if !suitetest.Fired(r, c.fault) {
				t.Fatalf("fault %s did not happen: %+v", c.fault, r.Faults)
			}
			suitetest.Exact(t, r)
			if rc := r.Reconciliation; c.failures && rc != nil && r.Load.FailedRequests+rc.OutcomeUnknown == 0 {
				t.Errorf("no request failed under %s: %+v", c.fault, r.Load)
			}
			if q := r.Queue; c.fault == "kill-flusher" && (q == nil || q.RetriesTotal == 0) {
				t.Errorf("kill-flusher: the killed batch was not retried: %+v", q)
			}
		})
	}
}

// Slots under faults: package counters' slots, the same for every counter suite.
func TestSlottedExactUnderFaults(t *testing.T) {
	suitetest.SlottedUnderFaults(t, usagecounter.New(), 600, 30)
}

// TestSoakRotatesFaultsAndReportsRecovery is a short soak at 1,000 requests a second (open
// loop: the rotation, not the throughput, is under test): a fault every second, in turn,
// each one struck and recovered from with nothing lost or applied twice, and the process's
// figures in every sample.
func TestSoakRotatesFaultsAndReportsRecovery(t *testing.T) {
	code, rep, stderr := suitetest.Run(t, usagecounter.New(), "--modes", "async-compact", "--requests", "0", "--duration", "4s",
		"--concurrency", "40", "--rate", "1000", "--fault-every", "1s")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	var kinds []string
	for _, f := range r.Faults {
		if f.Error != "" {
			t.Errorf("fault %s failed: %s", f.Kind, f.Error)
		}
		kinds = append(kinds, f.Kind)
	}
	if want := []string{"terminate-backends", "restart-postgres", "crash-postgres"}; len(kinds) < len(want) || !reflect.DeepEqual(kinds[:len(want)], want) {
		t.Errorf("faults struck %v, want the rotation to begin %v", kinds, want)
	}
	s := r.Soak
	if s == nil || len(s.Recoveries) != len(r.Faults) || s.RSSEndBytes <= 0 || s.GoroutinesEnd <= 0 || s.MaxOpenConns <= 0 {
		t.Fatalf("soak figures %+v for faults %+v", s, r.Faults)
	}
}

// TestEveryWayToRedisVerifiesExactly runs the async modes on the Redis-streams backend,
// embedded, managed and by --redis-url (suitetest.OnEveryRedis): the engine's ways to reach
// Redis; every suite runs on a managed one (suitetest.OnRedis).
func TestEveryWayToRedisVerifiesExactly(t *testing.T) {
	suitetest.OnEveryRedis(t, usagecounter.New(), 600, 600, "--hot-keys", "3")
}

// TestCrashRedisLosesExactlyWhatTheServerHeld kills the managed redis-server mid-run. With
// the append-only file fsynced on every write nothing accepted is lost; without it, the
// entries the stream held not yet acknowledged when it died (counted by the fault just before
// the kill, with every write held) are exactly the requests the reconciliation finds lost,
// and the run exits 1.
func TestCrashRedisLosesExactlyWhatTheServerHeld(t *testing.T) {
	redistest.Need(t)
	for _, c := range []struct {
		persist string
		code    int
	}{{"off", 1}, {"always", 0}} {
		t.Run(c.persist, func(t *testing.T) {
			code, rep, stderr := suitetest.RunShared(t, usagecounter.New(), "--modes", "async-compact", "--requests", "0", "--duration", "2s",
				"--concurrency", "50", "--queue-backend", "redis", "--redis", "managed", "--redis-persist", c.persist,
				"--queue-workers", "1", "--flush-batch-size", "50", "--fault", "crash-redis@700ms+300ms")
			if code != c.code || rep == nil || len(rep.Runs) != 1 {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr)
			}
			r := rep.Runs[0]
			if !suitetest.Fired(r, "crash-redis") {
				t.Fatalf("crash-redis did not happen: %+v", r.Faults)
			}
			held := heldAtCrash(t, r.Faults)
			rc := r.Reconciliation
			if rc == nil || rc.Duplicated != 0 || rc.FailedButPersisted != 0 || rc.Acknowledged == 0 {
				t.Fatalf("reconciliation %+v", rc)
			}
			want := held
			if c.persist == "always" {
				want = 0
			} else if held == 0 {
				t.Fatalf("the stream held nothing unacknowledged at the crash: the test proves nothing (%+v)", r.Faults)
			}
			if rc.Lost != want {
				t.Errorf("lost = %d, want %d (held at the crash: %d)", rc.Lost, want, held)
			}
			t.Logf("persist %s: held %d at the crash, lost %d, acknowledged %d, unknown %d", c.persist, held, rc.Lost, rc.Acknowledged, rc.OutcomeUnknown)
			if c.code == 0 {
				suitetest.Exact(t, r)
			}
			for pid := range suitetest.RedisServers(os.Getpid()) {
				t.Errorf("redis-server %d still running after the run", pid)
			}
		})
	}
}

// heldAtCrash reads the count of unacknowledged entries out of the crash-redis event.
func heldAtCrash(t *testing.T, events []results.FaultEvent) int64 {
	t.Helper()
	for _, ev := range events {
		if ev.Kind == "crash-redis" {
			_, after, ok := strings.Cut(ev.Detail, "holding ")
			n, err := strconv.ParseInt(strings.Fields(after + " x")[0], 10, 64)
			if ok && err == nil {
				return n
			}
			t.Fatalf("crash-redis event without a count: %q", ev.Detail)
		}
	}
	t.Fatal("no crash-redis event")
	return 0
}
