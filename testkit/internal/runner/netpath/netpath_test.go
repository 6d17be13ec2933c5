package netpath_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestProbesOverAProxiedPath puts PostgreSQL behind a 4 ms proxy and probes two runs over it,
// the second at another round trip (a ladder's rung): each run's probes see at least the round
// trip it set on the service's path and measure the direct path beside it; the environment
// gathers both runs and, over a ladder, names no configured round trip.
func TestProbesOverAProxiedPath(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t)
	paths, err := netpath.Open(target.Target(), netpath.Config{DBRTT: 4 * time.Millisecond, ProxyDB: true, RTTLadder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer paths.Close()
	if _, err := paths.Path(faults.NetPostgres); err != nil {
		t.Errorf("no path to strike on pg: %v", err)
	}
	if _, err := paths.Path(faults.NetRedis); err == nil {
		t.Error("a path to strike on redis, which is not proxied")
	}
	var probes int64
	for _, rtt := range []time.Duration{4 * time.Millisecond, 8 * time.Millisecond} {
		if err := paths.SetRTT(rtt); err != nil {
			t.Fatal(err)
		}
		probe := paths.StartProbe(ctx, netpath.PostgresProbe(target), nil)
		time.Sleep(200 * time.Millisecond)
		n := probe.Stop(rtt)
		pg := n.Postgres
		if !pg.Proxied || pg.Probes == 0 || pg.ConfiguredRTTMs != float64(rtt.Milliseconds()) || n.Redis != nil {
			t.Fatalf("%s: %+v", rtt, *pg)
		}
		if low := 0.9 * float64(rtt.Milliseconds()); pg.RTTMs.P50 < low { // 0.9: the histogram's precision
			t.Errorf("%s: the probes' median round trip %.3f ms is below the proxy's", rtt, pg.RTTMs.P50)
		}
		if pg.DirectRTTMs == nil || pg.DirectRTTMs.Count == 0 {
			t.Errorf("%s: no probe of the direct path: %+v", rtt, pg.DirectRTTMs)
		}
		// A connection's set-up and two statements a probe, on each of the two paths.
		if tx := probe.Transactions(); tx < 2*pg.Probes+2 {
			t.Errorf("%s: %d transactions for %d probes", rtt, tx, pg.Probes)
		}
		probes += pg.Probes
	}
	env := paths.Environment()
	if env == nil || env.Postgres.Probes != probes || env.Postgres.ConfiguredRTTMs != 0 || env.Postgres.DirectRTTMs == nil {
		t.Errorf("environment %+v, want the %d probes of both runs and no one round trip", env, probes)
	}
}

// TestDirectPaths measures the service's path unproxied, and a pooler finds no proxy to dial.
func TestDirectPaths(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t)
	paths, err := netpath.Open(target.Target(), netpath.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer paths.Close()
	if addr, err := paths.PoolerUpstream(); addr != "" || err != nil {
		t.Errorf("a pooler's upstream %q (%v) without a proxy", addr, err)
	}
	if paths.RedisRoute() != nil {
		t.Error("a route to Redis without --redis-rtt")
	}
	probe := paths.StartProbe(ctx, netpath.PostgresProbe(target), func(context.Context) error { return nil })
	n := probe.Stop(0)
	if n.Postgres.Proxied || n.Postgres.Probes == 0 || n.Postgres.DirectRTTMs != nil || n.Redis == nil || n.Redis.Probes == 0 {
		t.Errorf("postgres %+v, redis %+v", *n.Postgres, n.Redis)
	}
}
