package usagecounter

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit"
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

// TestRedisBackendVerifiesExactly runs the async modes on the Redis-streams backend,
// embedded, managed and by --redis-url (suitetest.OnRedis).
func TestRedisBackendVerifiesExactly(t *testing.T) {
	suitetest.OnRedis(t, New(), 3000, 3000, "--hot-keys", "3")
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
