package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

const redisClusterUsage = `Usage: baseline redis-cluster [--masters 3] [--replicas 0] [--persist off] [--host IP] [--url-file FILE]

Starts a Redis Cluster of temporary redis-servers (from PATH, or $HOTSPOTKIT_REDIS_SERVER) for
the processes of a split run to share, prints its seed URL on stdout (the password in it: keep
it private), and runs in the foreground until Ctrl-C (SIGINT) or SIGTERM, when it stops every
node and removes their directories (a watchdog does the same if this process is killed).
Every node binds --host: 127.0.0.1 serves this machine only; the machine's own address serves
processes on other hosts (they need to reach every node's port, and the password protects it).

Example (on machine A; the producers and consumers anywhere that reaches 10.0.0.5):
  baseline redis-cluster --host 10.0.0.5 --url-file /tmp/seeds &
  B=bin/usage_counter_hotspot_baseline
  $B --redis-url "$(cat /tmp/seeds)" --queue-backend redis --stream-shards 6 ... --role producer

Flags:
`

// runRedisCluster is baseline redis-cluster.
func runRedisCluster(args []string, stdout, stderr io.Writer) int {
	c := newCommand("redis-cluster", redisClusterUsage, stdout, stderr)
	cfg := redisserver.ClusterConfig{}
	c.flags.IntVar(&cfg.Masters, "masters", 3, "masters (the hash slots split evenly between them)")
	c.flags.IntVar(&cfg.Replicas, "replicas", 0, "replicas per master")
	c.flags.StringVar(&cfg.Persist, "persist", redisserver.PersistOff, "every node's append-only file: off, everysec or always")
	c.flags.StringVar(&cfg.Host, "host", "127.0.0.1", "the address every node binds and announces")
	urlFile := c.flags.String("url-file", "", "also write the seed URL to this file (mode 0600), removed on exit")
	if code, done := c.parse(args); done {
		return code
	}
	if c.flags.NArg() > 0 {
		return c.usageError("unexpected arguments")
	}
	if cfg.Masters < 1 || cfg.Replicas < 0 {
		return c.usageError(fmt.Sprintf("--masters %d --replicas %d: want at least 1 master and no negative replicas", cfg.Masters, cfg.Replicas))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := redisserver.StartCluster(ctx, cfg)
	if err != nil {
		return c.fail(err)
	}
	defer cl.Stop()
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(cl.URL()+"\n"), 0o600); err != nil {
			return c.fail(err)
		}
		defer os.Remove(*urlFile)
	}
	fmt.Fprintln(stdout, cl.URL())
	fmt.Fprintf(stderr, "baseline redis-cluster: %d masters × %d replicas (redis %s) at %v; Ctrl-C stops it\n",
		cl.Masters(), cl.Replicas(), cl.Version(), cl.Addrs())
	<-ctx.Done()
	if err := cl.Stop(); err != nil {
		return c.fail(err)
	}
	return exitOK
}
