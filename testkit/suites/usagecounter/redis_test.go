package usagecounter

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestRedisBackendVerifiesExactly runs the async modes on the Redis-streams backend,
// embedded, managed and by --redis-url (suitetest.OnEveryRedis): the engine's ways to reach
// Redis, tested here once; the other suites run on a managed one (suitetest.OnRedis).
func TestRedisBackendVerifiesExactly(t *testing.T) {
	suitetest.OnEveryRedis(t, New(), 600, 600, "--hot-keys", "3")
}

func TestRedisFlagsAreCheckedBeforeAnyWork(t *testing.T) {
	for _, args := range [][]string{
		{"--queue-backend", "kafka"},
		{"--redis", "managed"}, // memory backend
		{"--queue-backend", "redis", "--redis", "cluster"},
		{"--queue-backend", "redis", "--redis-url", "redis://h:1", "--redis", "managed"},
		{"--queue-backend", "redis", "--redis-persist"},
		{"--queue-backend", "redis", "--role", "consumer"},
		{"--queue-backend", "redis", "--role", "producer", "--redis-url", "redis://h:1", "--postgres-url", "postgres://x@h/db", "--schema", "s", "--modes", "async,sync"},
		{"--verify"},
		{"--queue-backend", "redis", "--reclaim-idle-ms", "0"},
	} {
		code, _, _ := runNoReport(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (bad usage)", args, code)
		}
	}
}

// runNoReport runs the suite where no report is expected (bad usage).
func runNoReport(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(New(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestCrashRedisLosesExactlyWhatTheServerHeld kills the managed redis-server mid-run. With
// the append-only file fsynced on every write nothing accepted is lost; without it, the
// entries the stream held not yet acknowledged when it died (counted by the fault just before
// the kill, with every write held) are exactly the requests the reconciliation finds lost,
// and the run exits 1.
func TestCrashRedisLosesExactlyWhatTheServerHeld(t *testing.T) {
	for _, c := range []struct {
		persist string
		code    int
	}{{"off", 1}, {"always", 0}} {
		t.Run(c.persist, func(t *testing.T) {
			code, rep, stderr := suitetest.RunShared(t, New(), "--modes", "async-compact", "--requests", "0", "--duration", "2s",
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
