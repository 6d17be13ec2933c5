package usagecounter

import (
	"bytes"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/cli"
)

// The suite's records on Redis, by every way a run reaches it, are the engine's test
// (testkit/internal/engine: TestEveryWayToRedisVerifiesExactly runs this suite).

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
