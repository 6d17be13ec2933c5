package plan

import (
	"slices"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// Network is production's network in the loop, typed: a round trip added to every connection
// of the service to PostgreSQL (--db-rtt) and to Redis (--redis-rtt), each with jitter
// (settings of RunConfig's, settings.go), and the RTT ladder (--rtt-levels). The engine puts an
// in-process delaying proxy (testkit/servers/netdelay) on a path when these flags or a network
// fault on it ask for one.
type Network struct {
	DBRTT, DBRTTJitter       time.Duration
	RedisRTT, RedisRTTJitter time.Duration
	// RTTLevels is the RTT ladder over the round trip to PostgreSQL, in increasing order.
	RTTLevels []time.Duration
	// proxyDB, proxyRedis: a flag or a network fault puts the path through the proxy.
	proxyDB, proxyRedis bool
}

func (c *parser) registerNetwork() {
	c.fs.StringVar(&c.rttLevelsRaw, "rtt-levels", "", "RTT ladder to PostgreSQL, e.g. 0,200us,1ms,2ms: one run per mode and round trip, each on fresh state")
}

// validateNetwork checks the network flags; it runs after the faults and the stream flags
// are parsed (a network fault needs the path it strikes).
func (c *parser) validateNetwork(bad func(string, ...any)) {
	changed, n := c.fs.Changed, &c.Network
	for _, p := range []struct {
		flag, jitterFlag string
		rtt, jitter      time.Duration
	}{{"--db-rtt", "--db-rtt-jitter", n.DBRTT, n.DBRTTJitter}, {"--redis-rtt", "--redis-rtt-jitter", n.RedisRTT, n.RedisRTTJitter}} {
		if err := netdelay.CheckRTT(p.rtt, p.jitter); err != nil {
			bad("%s %s, %s %s: %v", p.flag, p.rtt, p.jitterFlag, p.jitter, err)
		}
	}
	if changed("db-rtt-jitter") && !changed("db-rtt") && c.rttLevelsRaw == "" {
		bad("--db-rtt-jitter needs --db-rtt")
	}
	if changed("redis-rtt-jitter") && !changed("redis-rtt") {
		bad("--redis-rtt-jitter needs --redis-rtt")
	}
	n.RTTLevels = ladderRungs(c.rttLevelsRaw, "--rtt-levels", "a round trip such as 0, 200us or 1ms", func(s string) (time.Duration, bool) {
		if s == "0" {
			return 0, true
		}
		d, err := time.ParseDuration(s)
		return d, err == nil && netdelay.CheckRTT(d, 0) == nil
	}, bad)
	for _, l := range n.RTTLevels {
		if n.DBRTTJitter > l {
			bad("--db-rtt-jitter %s is above the --rtt-levels round trip %s", n.DBRTTJitter, l)
			break
		}
	}
	if len(n.RTTLevels) > 0 {
		switch {
		case changed("db-rtt"):
			bad("--db-rtt and --rtt-levels exclude each other (--rtt-levels runs each round trip in turn)")
		case len(c.Levels) > 0 || len(c.SlotsLevels) > 0 || c.ratesRaw != "":
			bad("--rtt-levels cannot be combined with --levels, --slots-levels or --rates (one ladder per invocation)")
		case c.Settings.Role != "" && c.Settings.Role != "both":
			bad("--role %s cannot be combined with --rtt-levels (every process of a split run must have the same network)", c.Settings.Role)
		}
	}
	redisUsed := c.QueueBackend == testkit.BackendRedis && slices.ContainsFunc(c.Modes, testkit.Mode.Async)
	if (changed("redis-rtt") || changed("redis-rtt-jitter")) && !redisUsed {
		bad("--redis-rtt needs --queue-backend redis and an async mode in --modes (this run does not use Redis)")
	}
	n.proxyDB = changed("db-rtt") || len(n.RTTLevels) > 0
	n.proxyRedis = changed("redis-rtt")
	for _, f := range c.Faults {
		switch {
		case !f.IsNetwork():
		case f.Target == faults.NetRedis && !redisUsed:
			bad("--fault %s needs --queue-backend redis and an async mode in --modes (this run does not use Redis)", f)
		case f.Target == faults.NetRedis:
			n.proxyRedis = true
		case f.Target == faults.NetPooler && !c.Pooled():
			bad("--fault %s needs --pooler pgbouncer or --pooler-url (there is no pooler's hop to strike)", f)
		case f.Target == faults.NetPooler:
			c.proxyPooler = true // the service's hop to the pooler (pooler.go), not PostgreSQL's
		default:
			n.proxyDB = true
		}
	}
	if n.proxyRedis && c.Streams().ManagedCluster() {
		bad("%v", redisrun.ErrClusterRoute)
	}
}

// ProxiesDB says whether the service reaches PostgreSQL through the proxy (--db-rtt, given even
// at 0, --rtt-levels, or a network fault on pg); ProxiesRedis the same for Redis.
func (n *Network) ProxiesDB() bool    { return n.proxyDB }
func (n *Network) ProxiesRedis() bool { return n.proxyRedis }

// rttLevelsMs is --rtt-levels in milliseconds (nil without).
func rttLevelsMs(levels []time.Duration) []float64 {
	if len(levels) == 0 {
		return nil
	}
	ms := make([]float64, len(levels))
	for i, l := range levels {
		ms[i] = results.Milliseconds(l)
	}
	return ms
}

// rttRungs are the round trips to PostgreSQL each mode runs at (Rungs crosses them with the
// other rungs): --rtt-levels, else --db-rtt (0 without).
func (c *Plan) rttRungs() []time.Duration {
	if len(c.RTTLevels) > 0 {
		return c.RTTLevels
	}
	return []time.Duration{c.DBRTT}
}
