package usagecounter

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestEventCodecRoundTrip(t *testing.T) {
	r0 := usageRow{index: 7, requestID: "req-7", hot: 3, responseMs: 57, at: epoch.Add(7 * time.Millisecond)}
	r1 := usageRow{index: 1 << 40, requestID: "req-big", hot: 0, responseMs: 149, at: epoch.Add(time.Hour)}
	for _, e := range []event{{first: r0}, {first: r0, more: []usageRow{r1, r0}}} {
		b, err := eventCodec{}.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eventCodec{}.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip: got %+v, want %+v", got, e)
		}
		for cut := 0; cut < len(b); cut++ {
			if _, err := (eventCodec{}).Decode(b[:cut]); err == nil {
				t.Errorf("truncated to %d of %d bytes: decoded without error", cut, len(b))
			}
		}
	}
}

// redisServers lists the redis-server processes running now.
func redisServers(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && strings.Contains(string(b), "redis-server") {
			out[filepath.Base(d)] = true
		}
	}
	return out
}

func streamOf(t *testing.T, r results.Run) *results.Stream {
	t.Helper()
	if r.Queue == nil || r.Queue.Stream == nil {
		t.Fatalf("%s: no queue stream counters in the report", r.Mode)
	}
	return r.Queue.Stream
}

// TestRedisBackendVerifiesExactly runs the async modes on the Redis-streams backend —
// embedded (miniredis) and, when redis-server is installed, managed — and checks every
// entry was acknowledged and the counters are exact.
func TestRedisBackendVerifiesExactly(t *testing.T) {
	for _, server := range []string{"embedded", "managed"} {
		t.Run(server, func(t *testing.T) {
			if server == "managed" {
				if _, err := redisserver.FindBinary(""); err != nil {
					t.Skip(err)
				}
			}
			before := redisServers(t)
			code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "3000", "--concurrency", "300",
				"--modes", "async,async-compact", "--queue-backend", "redis", "--redis", server, "--hot-keys", "3")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if rep.Environment.QueueBackend != "redis" || rep.Environment.RedisMode != server || rep.Environment.RedisVersion == "" {
				t.Errorf("environment: backend %q mode %q version %q", rep.Environment.QueueBackend, rep.Environment.RedisMode, rep.Environment.RedisVersion)
			}
			for _, r := range rep.Runs {
				q, s := r.Queue, streamOf(t, r)
				if !r.Verification.Passed || q.Backend != "redis" {
					t.Errorf("%s: verified %v backend %q", r.Mode, r.Verification.Passed, q.Backend)
				}
				if q.EnqueuedTotal != 3000 || s.AckedTotal != q.EnqueuedTotal || q.FlushedTotal != 3000 || s.Length != 0 || q.PendingDepth != 0 {
					t.Errorf("%s: queue %+v stream %+v", r.Mode, q, s)
				}
				if q.PersistLagMs.Count != 3000 {
					t.Errorf("%s: persist lag of %d records, want 3000", r.Mode, q.PersistLagMs.Count)
				}
			}
			for pid := range redisServers(t) {
				if !before[pid] {
					t.Errorf("redis-server %s still running after the run", pid)
				}
			}
		})
	}
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
	code := testkit.Execute(New(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
