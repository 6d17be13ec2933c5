package redisrun_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// TestDeadlineReachesTheSocket: a command waiting on a Redis that never answers returns at its
// context's deadline (the service's client honours deadlines: ContextTimeoutEnabled), and one
// whose context is only cancelled returns at go-redis's own read timeout: the bounds of a
// request cut off by --request-timeout, and of a flush, on Redis. Not assumed: by default
// go-redis ignores the context while it reads.
func TestDeadlineReachesTheSocket(t *testing.T) {
	var proxy *netdelay.Proxy
	route := func(upstream string) (func(context.Context, string, string) (net.Conn, error), error) {
		p, err := netdelay.New(netdelay.Config{Upstream: upstream})
		proxy = p
		return p.DialContext, err
	}
	ctx := context.Background()
	target, err := redisrun.Open(ctx, redisrun.StreamConfig{RunConfig: &results.RunConfig{QueueBackend: backend.NameRedis, Redis: redisrun.Embedded}}, 2, route)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	defer func() { proxy.Heal(); _ = proxy.Close() }()
	if err := proxy.Blackhole(time.Hour); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = target.Client.Ping(dctx).Err()
	if took := time.Since(began); err == nil || took > 2*time.Second {
		t.Fatalf("PING with a deadline on a silent Redis: %v after %s, want an error at the deadline", err, took)
	}
	cctx, cancelNow := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancelNow)
	began = time.Now()
	err = target.Client.Ping(cctx).Err()
	if took := time.Since(began); err == nil || took > 10*time.Second {
		t.Fatalf("PING cancelled on a silent Redis: %v after %s, want an error by go-redis's read timeout", err, took)
	} else {
		t.Logf("a cancelled PING returned after %s: %v", took.Round(10*time.Millisecond), err)
	}
}
