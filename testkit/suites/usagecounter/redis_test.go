package usagecounter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// The suite's records on Redis, by every way a run reaches it, are the engine's test
// (testkit/internal/runner/engine: TestEveryWayToRedisVerifiesExactly runs this suite).

func TestRedisFlagsAreCheckedBeforeAnyWork(t *testing.T) {
	for _, args := range [][]string{
		{"--queue-backend", "kafka"},
		{"--redis", "managed"}, // memory backend
		{"--queue-backend", "redis", "--redis", "galaxy"},
		{"--queue-backend", "redis", "--stream-shards", "0"},
		{"--stream-shards", "2"},                                                                           // memory backend
		{"--queue-backend", "redis", "--redis-replicas", "1"},                                              // not --redis cluster
		{"--queue-backend", "redis", "--redis", "cluster", "--redis-replicas", "-1"},                       //
		{"--queue-backend", "redis", "--redis", "cluster", "--fault", "redis-failover@1s"},                 // no replica
		{"--queue-backend", "redis", "--redis", "managed", "--fault", "redis-reshard@1s"},                  // not a cluster
		{"--queue-backend", "redis", "--redis", "cluster", "--redis-rtt", "1ms"},                           // a proxy per node
		{"--queue-backend", "redis", "--redis", "cluster", "--fault", "net-reset:redis@1s"},                //
		{"--queue-backend", "redis", "--redis", "cluster", "--redis-persist", "always", "--modes", "sync"}, // no async mode
		{"--queue-backend", "redis", "--redis-url", "redis://:pw@h1:1,redis://:other@h2:2"},
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

func TestRedisClusterRefusedWithoutRedisServer(t *testing.T) {
	t.Setenv(redisserver.BinaryEnv, "/nonexistent/redis-server")
	code, _, stderr := runNoReport(t, "--queue-backend", "redis", "--redis", "cluster")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.Contains(first, "--redis cluster: redis-server") {
		t.Errorf("exit %d, want 2 with one line naming --redis cluster:\n%s", code, stderr)
	}
}

// TestRedisURLSeedsThatAreNoClusterAreRefused gives two seeds, both a plain redis-server.
func TestRedisURLSeedsThatAreNoClusterAreRefused(t *testing.T) {
	srv := redistest.Start(t, redisserver.Config{TempDir: t.TempDir()})
	url := srv.URL()
	seeds := strings.Replace(url, srv.Addr(), srv.Addr()+","+srv.Addr(), 1)
	seeds = strings.TrimSuffix(seeds, "/0")
	code, _, stderr := runNoReport(t, append(suitetest.Shared(t), "--queue-backend", "redis", "--redis-url", seeds, "--modes", "async", "--requests", "10")...)
	if code != 2 || !strings.Contains(stderr, "is not a Redis Cluster node") || strings.Contains(stderr, srv.Password()) {
		t.Errorf("exit %d, want 2 saying the seed is no cluster node (password redacted):\n%s", code, stderr)
	}
}

// runNoReport runs the suite where no report is expected (bad usage).
func runNoReport(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(New(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
