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
// (settings of RunConfig's, settings.go), and the RTT ladder (--rtt-levels, the round trip's
// axis: ladder.go). The engine puts an in-process delaying proxy (testkit/servers/netdelay) on
// a path when these flags or a network fault on it ask for one.
type Network struct {
	DBRTT, DBRTTJitter       time.Duration
	RedisRTT, RedisRTTJitter time.Duration
	// proxyDB, proxyRedis: a flag or a network fault puts the path through the proxy.
	proxyDB, proxyRedis bool
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
	rtts := c.Ladder[results.AxisRTT.Name]
	if changed("db-rtt-jitter") && !changed("db-rtt") && len(rtts) == 0 {
		bad("--db-rtt-jitter needs --db-rtt")
	}
	if changed("redis-rtt-jitter") && !changed("redis-rtt") {
		bad("--redis-rtt-jitter needs --redis-rtt")
	}
	for _, l := range rtts {
		if rtt := results.Duration(l.Num); n.DBRTTJitter > rtt {
			bad("--db-rtt-jitter %s is above the %s round trip %s", n.DBRTTJitter, results.AxisRTT.FlagName(), rtt)
			break
		}
	}
	redisUsed := c.QueueBackend == testkit.BackendRedis && slices.ContainsFunc(c.Modes, testkit.Mode.Async)
	if (changed("redis-rtt") || changed("redis-rtt-jitter")) && !redisUsed {
		bad("--redis-rtt needs --queue-backend redis and an async mode in --modes (this run does not use Redis)")
	}
	n.proxyDB = changed("db-rtt") || len(rtts) > 0
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
