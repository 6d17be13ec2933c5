// Package netpath owns production's network between the service and its servers as an
// invocation puts it in the loop (plan.Network): the delaying proxies the service's connections
// to PostgreSQL and to Redis go through (testkit/servers/netdelay), the round trip each run
// sets on PostgreSQL's, the probes that measure what a run's paths took (probe.go), every run's
// probes gathered for the report's environment, and the paths the network faults strike. It
// knows nothing of suites or modes; the pooler's own hop is package pooler's.
package netpath

import (
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// Config is the network the flags ask for.
type Config struct {
	// DBRTT and DBJitter are the round trip added to PostgreSQL (--db-rtt, --db-rtt-jitter);
	// RedisRTT and RedisJitter Redis's (--redis-rtt, --redis-rtt-jitter).
	DBRTT, DBJitter       time.Duration
	RedisRTT, RedisJitter time.Duration
	// ProxyDB and ProxyRedis put a path through a proxy (a round trip, a ladder of them, or a
	// network fault on it).
	ProxyDB, ProxyRedis bool
	// RTTLadder says the runs' round trips to PostgreSQL differ (--rtt-levels): the
	// environment then names none.
	RTTLadder bool
}

// ErrNeedsTCP refuses a proxy on a server reached over a Unix socket: bad input.
var ErrNeedsTCP = database.ErrNeedsTCP

// Paths are the invocation's paths: a proxy per server the flags put one on, and every probe
// sample of every run (the environment's figures).
type Paths struct {
	cfg                       Config
	target                    database.Target
	pg, redis                 *netdelay.Proxy
	pgAll, pgDirect, redisAll *hist.Histogram
	pgErrs, redisErrs         int64
}

// Open puts the service's connections to target through a proxy when c asks for one (the
// temporary server, or one given by URL over TCP: ErrNeedsTCP otherwise).
func Open(target database.Target, c Config) (*Paths, error) {
	n := &Paths{cfg: c, target: target, pgAll: hist.New(), pgDirect: hist.New(), redisAll: hist.New()}
	if !c.ProxyDB {
		return n, nil
	}
	upstream, err := target.Addr()
	if err != nil {
		return nil, err
	}
	p, err := netdelay.New(netdelay.Config{Upstream: upstream, RTT: c.DBRTT, Jitter: c.DBJitter})
	if err != nil {
		return nil, err
	}
	n.pg = p
	target.Route(p.DialContext)
	return n, nil
}

// RedisRoute is the route of the service's connections to Redis (redisrun.Route; nil: direct).
func (n *Paths) RedisRoute() func(upstream string) (database.DialFunc, error) {
	if !n.cfg.ProxyRedis {
		return nil
	}
	return func(upstream string) (database.DialFunc, error) {
		p, err := netdelay.New(netdelay.Config{Upstream: upstream, RTT: n.cfg.RedisRTT, Jitter: n.cfg.RedisJitter})
		if err != nil {
			return nil, err
		}
		n.redis = p
		return p.DialContext, nil
	}
}

// PoolerUpstream is the address a pooler dials to reach PostgreSQL over the service's round
// trip: a listener of PostgreSQL's proxy, "" without one (the pooler dials the server).
func (n *Paths) PoolerUpstream() (string, error) {
	if n.pg == nil {
		return "", nil
	}
	return n.pg.Listen()
}

// SetRTT gives the next run its round trip to PostgreSQL (an --rtt-levels rung).
func (n *Paths) SetRTT(rtt time.Duration) error {
	if n.pg == nil {
		return nil
	}
	return n.pg.SetRTT(rtt, n.cfg.DBJitter)
}

// Path is the network faults' path to target (faults.NetPostgres or faults.NetRedis).
func (n *Paths) Path(target string) (faults.Path, error) {
	p := n.pg
	if target == faults.NetRedis {
		p = n.redis
	}
	if p == nil {
		return nil, fmt.Errorf("no proxy on the path to %s", target)
	}
	return p, nil
}

// Environment is every run's probes, for the report's environment (nil when none measured).
func (n *Paths) Environment() *results.Network {
	if n == nil || n.pgAll.Count() == 0 && n.pgErrs == 0 {
		return nil
	}
	env := &results.Network{Postgres: measuredPath(n.pg != nil, n.pgAll, n.pgErrs)}
	if n.pg != nil {
		if !n.cfg.RTTLadder {
			env.Postgres.ConfiguredRTTMs = results.Milliseconds(n.cfg.DBRTT)
		}
		env.Postgres.JitterMs = results.Milliseconds(n.cfg.DBJitter)
		d := results.Latency(n.pgDirect.Summary())
		env.Postgres.DirectRTTMs, env.Postgres.DirectRTTHistogram = &d, encoded(n.pgDirect)
	}
	if n.redisAll.Count() > 0 || n.redisErrs > 0 {
		env.Redis = n.redisPath(n.redisAll, n.redisErrs)
	}
	return env
}

// Close ends the proxies and every connection still on them.
func (n *Paths) Close() error {
	if n == nil {
		return nil
	}
	var err error
	for _, p := range []*netdelay.Proxy{n.pg, n.redis} {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
	}
	n.target.Route(nil)
	return err
}

// measuredPath is what probes measured on one path: their round trips in h, errs failures.
// The histogram goes with it, for a merge of split processes' reports.
func measuredPath(proxied bool, h *hist.Histogram, errs int64) *results.NetworkPath {
	return &results.NetworkPath{Proxied: proxied, RTTMs: results.Latency(h.Summary()), RTTHistogram: encoded(h),
		Probes: h.Count(), ProbeErrors: errs}
}

// encoded is h in its report form, "" when it has no values (or, which a histogram of
// round trips never makes, cannot be encoded: the report then reads as one without it).
func encoded(h *hist.Histogram) string {
	if h.Count() == 0 {
		return ""
	}
	enc, err := h.Encode()
	if err != nil {
		return ""
	}
	return enc
}

// redisPath is the Redis path's measurement with the round trip --redis-rtt added to it.
func (n *Paths) redisPath(h *hist.Histogram, errs int64) *results.NetworkPath {
	p := measuredPath(n.redis != nil, h, errs)
	if n.redis != nil {
		p.ConfiguredRTTMs, p.JitterMs = results.Milliseconds(n.cfg.RedisRTT), results.Milliseconds(n.cfg.RedisJitter)
	}
	return p
}
