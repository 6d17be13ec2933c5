package engine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/cli"
)

// TestNetworkFlagsAreUsageErrors: a bad round trip, a jitter above it, a ladder beside another,
// or a network fault on a path the run does not use is refused in one line, exit 2, before any
// server starts (no --postgres-url is given: passing validation would start one).
func TestNetworkFlagsAreUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--db-rtt -1ms":                                 "must not be negative",
		"--db-rtt 1x":                                   "invalid argument",
		"--db-rtt 2s":                                   "above the 1s the proxy adds at most",
		"--db-rtt 1ms --db-rtt-jitter 2ms":              "jitter (2ms) must not exceed the round trip (1ms)",
		"--db-rtt-jitter 1ms":                           "--db-rtt-jitter needs --db-rtt",
		"--redis-rtt 1ms":                               "--redis-rtt needs --queue-backend redis",
		"--rtt-levels 0,fast":                           `--rtt-levels: "fast" is not a round trip`,
		"--rtt-levels 0,5s":                             "--rtt-levels: 5s is above 1s",
		"--rtt-levels 0,1ms --db-rtt 1ms":               "--db-rtt and --rtt-levels exclude each other",
		"--rtt-levels 0,1ms --levels 1,2 --duration 1s": "one ladder per invocation",
		"--fault net-blackhole:redis@1s+1s":             "needs --queue-backend redis and an async mode",
		"--fault net-delay:pg@1s":                       "net-delay lasts a window",
		"--fault net-reset:pg@1s+1s":                    "net-reset strikes at once",
		"--fault net-delay:mysql@1s+1s":                 "wants a target, pg, redis or pooler",
		"--fault net-delay:pg@1s+1s=5s":                 "at most 1s",
		"--fault net-delay@1s+1s":                       "wants a target",
	} {
		t.Run(args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Execute(codeless[int64]{}, strings.Fields(args), &stdout, &stderr)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, cli.ExitUsage, stderr.String())
			}
			if first, _, _ := strings.Cut(stderr.String(), "\n"); !strings.Contains(first, want) {
				t.Errorf("want a first line saying %q, got:\n%s", want, stderr.String())
			}
		})
	}
}
