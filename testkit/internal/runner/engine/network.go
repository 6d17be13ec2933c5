package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// The engine's side of production's network (plan.Network): the delaying proxies the
// service's connections go through (package netdelay), the round trip set per run, the probes
// that measure it, and the network faults' paths.

// probeInterval is how often a probe measures a round trip while a run goes on. Each probe
// is two round trips back to back, and the second is timed: the first wakes the server's
// process and the probe's own from their idle wait, which on a virtual machine takes longer
// than the network it measures.
const probeInterval = 20 * time.Millisecond

// network is the invocation's paths: a proxy per server the flags put one on, and every
// probe sample of every run (the environment's figures).
type network struct {
	pg, redis                 *netdelay.Proxy
	pgAll, pgDirect, redisAll *hist.Histogram
	pgErrs, redisErrs         int64
}

// routePostgres puts the service's connections to PostgreSQL through a proxy when the flags
// ask for one (the temporary server, or a --postgres-url over TCP).
func (e *engine) routePostgres() error {
	e.net = &network{pgAll: hist.New(), pgDirect: hist.New(), redisAll: hist.New()}
	if !e.cfg.ProxiesDB() {
		return nil
	}
	cfg, err := pgx.ParseConfig(e.target.DSN())
	if err != nil {
		return err
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return usageError{errors.New("--db-rtt, --rtt-levels and the network faults on pg need PostgreSQL over TCP, not the Unix socket of --postgres-url")}
	}
	p, err := netdelay.New(netdelay.Config{Upstream: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), RTT: e.cfg.DBRTT, Jitter: e.cfg.DBRTTJitter})
	if err != nil {
		return err
	}
	e.net.pg = p
	e.target.Route(p.DialContext)
	return nil
}

// redisRoute is the route of the service's connections to Redis (nil: direct).
func (e *engine) redisRoute() redisrun.Route {
	if !e.cfg.ProxiesRedis() {
		return nil
	}
	return func(upstream string) (func(context.Context, string, string) (net.Conn, error), error) {
		p, err := netdelay.New(netdelay.Config{Upstream: upstream, RTT: e.cfg.RedisRTT, Jitter: e.cfg.RedisRTTJitter})
		if err != nil {
			return nil, err
		}
		e.net.redis = p
		return p.DialContext, nil
	}
}

// closeNetwork ends the proxies and every connection still on them.
func (e *engine) closeNetwork() error {
	if e.net == nil {
		return nil
	}
	var err error
	for _, p := range []*netdelay.Proxy{e.net.pg, e.net.redis} {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
	}
	e.target.Route(nil)
	return err
}

// setRunRTT gives the run its round trip to PostgreSQL (an --rtt-levels rung).
func (e *engine) setRunRTT(r *run) error {
	if e.net.pg == nil {
		return nil
	}
	return e.net.pg.SetRTT(r.rtt, e.cfg.DBRTTJitter)
}

// path is the network faults' path to target.
func (e *engine) path(target string) (faults.Path, error) {
	if target == faults.NetPooler {
		return e.poolerPath() // pooler.go
	}
	p := e.net.pg
	if target == faults.NetRedis {
		p = e.net.redis
	}
	if p == nil {
		return nil, fmt.Errorf("no proxy on the path to %s", target)
	}
	return p, nil
}

// probe measures round trips over the service's paths while a run goes on.
type probe struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	pg     probeSeries
	direct *probeSeries // the direct path, while the service's is proxied
	redis  *probeSeries
}

type probeSeries struct {
	h      *hist.Histogram
	errors int64
	// transactions counts what the probe ran on PostgreSQL (the run's database figures leave
	// them out).
	transactions int64
}

// startProbe starts the run's probes: SELECT 1 on a connection of the service's path (and,
// when it is proxied, of the direct one), PING on the queue's Redis client. The PostgreSQL
// probes' connections are opened before it returns, so before the load starts: a backend's
// start costs the server tens of ms of CPU, which a short run would otherwise pay inside its
// window — and a proxied run, probing two paths, twice.
func (e *engine) startProbe(r *run) *probe {
	ctx, cancel := context.WithCancel(e.hardCtx)
	p := &probe{cancel: cancel, pg: probeSeries{h: hist.New()}}
	connect, cancelConnect := context.WithTimeout(e.hardCtx, firstProbeTimeout)
	defer cancelConnect()
	conn := e.probeConnect(connect, &p.pg, false)
	p.wg.Go(func() { e.probePostgres(ctx, &p.pg, false, conn) })
	if e.net.pg != nil {
		p.direct = &probeSeries{h: hist.New()}
		direct := e.probeConnect(connect, p.direct, true)
		p.wg.Go(func() { e.probePostgres(ctx, p.direct, true, direct) })
	}
	if _, ping := r.backend.Server(); ping != nil {
		p.redis = &probeSeries{h: hist.New()}
		p.wg.Go(func() {
			every(ctx, e.hardCtx, func(ctx context.Context) {
				err := ping(ctx) // wakes the path (probeInterval)
				t0 := time.Now()
				if err == nil {
					err = ping(ctx)
				}
				if err != nil {
					if ctx.Err() == nil {
						p.redis.errors++
					}
					return
				}
				p.redis.h.Record(time.Since(t0))
			})
		})
	}
	return p
}

// probeConnect opens a PostgreSQL probe's connection, of the service's path or the direct
// one; nil when it failed (counted), and the probe connects again on its next round.
func (e *engine) probeConnect(ctx context.Context, s *probeSeries, direct bool) *pgx.Conn {
	var conn *pgx.Conn
	var err error
	switch {
	case direct:
		conn, err = e.target.ConnectDirect(ctx, "hotspotkit-probe")
	case e.pooler != nil:
		// Through a pooler, the probe measures the pooler's hop to PostgreSQL (--db-rtt's),
		// not the pooler's queue, and keeps its SET (Untrack) off the pooler's connections.
		var dial database.DialFunc
		if e.net.pg != nil {
			dial = e.net.pg.DialContext
		}
		conn, err = e.target.ConnectVia(ctx, "hotspotkit-probe", dial)
	default:
		conn, err = e.target.Connect(ctx, "hotspotkit-probe")
	}
	if err != nil {
		if ctx.Err() == nil {
			s.errors++
		}
		return nil
	}
	dbstats.Untrack(ctx, conn)
	s.transactions++
	return conn
}

// probePostgres times SELECT 1 every probeInterval (the second of two: see probeInterval)
// on conn until ctx ends, connecting again after a failure (a reset path).
func (e *engine) probePostgres(ctx context.Context, s *probeSeries, direct bool, conn *pgx.Conn) {
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	every(ctx, e.hardCtx, func(ctx context.Context) {
		if conn == nil {
			if conn = e.probeConnect(ctx, s, direct); conn == nil {
				return
			}
		}
		_, err := conn.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol) // wakes the path (probeInterval)
		s.transactions++
		t0 := time.Now()
		if err == nil {
			_, err = conn.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
			s.transactions++
		}
		if err != nil {
			if ctx.Err() == nil {
				s.errors++
			}
			conn.Close(context.WithoutCancel(ctx))
			conn = nil
			return
		}
		s.h.Record(time.Since(t0))
	})
}

// every runs f now and then every probeInterval until ctx ends. The first call is not cut
// short by the end of the run (only by hard, the invocation's, or after firstProbeTimeout): a
// run shorter than a probe's connect and round trip still measures one, or its report would
// say nothing of the network it ran over.
func every(ctx, hard context.Context, f func(context.Context)) {
	first, cancel := context.WithTimeout(hard, firstProbeTimeout)
	f(first)
	cancel()
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}

// firstProbeTimeout bounds a run's first probe (every).
const firstProbeTimeout = 10 * time.Second

// stop ends the probes and returns what they measured, adding it to the invocation's; the
// transactions they ran go to the run's observers (w may be nil).
func (e *engine) stopProbe(p *probe, r *run, w *costWindow) *results.Network {
	p.cancel()
	p.wg.Wait()
	if w != nil {
		w.untracks.Add(p.pg.transactions)
		if p.direct != nil {
			w.untracks.Add(p.direct.transactions)
		}
	}
	c := e.cfg
	out := &results.Network{Postgres: measuredPath(e.net.pg != nil, p.pg.h, p.pg.errors)}
	e.net.pgAll.Merge(p.pg.h)
	e.net.pgErrs += p.pg.errors
	if e.net.pg != nil {
		out.Postgres.ConfiguredRTTMs, out.Postgres.JitterMs = results.Milliseconds(r.rtt), results.Milliseconds(c.DBRTTJitter)
		d := results.Latency(p.direct.h.Summary())
		out.Postgres.DirectRTTMs, out.Postgres.DirectRTTHistogram = &d, encoded(p.direct.h)
		e.net.pgDirect.Merge(p.direct.h)
	}
	if p.redis != nil {
		out.Redis = e.redisPath(p.redis.h, p.redis.errors)
		e.net.redisAll.Merge(p.redis.h)
		e.net.redisErrs += p.redis.errors
	}
	return out
}

// finishNetwork records every run's probes in the environment.
func (e *engine) finishNetwork() {
	n := e.net
	if n == nil || n.pgAll.Count() == 0 && n.pgErrs == 0 {
		return
	}
	c := e.cfg
	env := &results.Network{Postgres: measuredPath(n.pg != nil, n.pgAll, n.pgErrs)}
	if n.pg != nil {
		if !c.Steps(results.AxisRTT) {
			env.Postgres.ConfiguredRTTMs = results.Milliseconds(c.DBRTT)
		}
		env.Postgres.JitterMs = results.Milliseconds(c.DBRTTJitter)
		d := results.Latency(n.pgDirect.Summary())
		env.Postgres.DirectRTTMs, env.Postgres.DirectRTTHistogram = &d, encoded(n.pgDirect)
	}
	if n.redisAll.Count() > 0 || n.redisErrs > 0 {
		env.Redis = e.redisPath(n.redisAll, n.redisErrs)
	}
	e.report.Environment.Network = env
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
func (e *engine) redisPath(h *hist.Histogram, errs int64) *results.NetworkPath {
	p := measuredPath(e.net.redis != nil, h, errs)
	if e.net.redis != nil {
		p.ConfiguredRTTMs, p.JitterMs = results.Milliseconds(e.cfg.RedisRTT), results.Milliseconds(e.cfg.RedisRTTJitter)
	}
	return p
}

// faultOutcome is how the run's requests came through its timed faults (nil without any).
func faultOutcome(events []results.FaultEvent, res *load.Result) *results.FaultOutcome {
	if !slices.ContainsFunc(events, func(ev results.FaultEvent) bool { return ev.AtMs > 0 || ev.Duration > 0 }) {
		return nil
	}
	o := &results.FaultOutcome{Succeeded: res.Completed + res.WarmupCompleted, Failed: res.Failed + res.WarmupFailed,
		FailedByClass: res.ErrorCounts, RetriesByClass: res.Retries.ByClass, LongestRequestMs: ms(res.Longest)}
	for n, count := range res.Retries.Tries {
		if n > 1 {
			o.Retried += count
		}
	}
	seen := map[string]bool{}
	for class := range res.ErrorCounts {
		if by := endedBy(class); !seen[by] {
			seen[by] = true
			o.EndedBy = append(o.EndedBy, by)
		}
	}
	for class := range res.Retries.ByClass {
		if by := endedBy(class); !seen[by] {
			seen[by] = true
			o.EndedBy = append(o.EndedBy, by)
		}
	}
	slices.Sort(o.EndedBy)
	if len(o.EndedBy) == 0 {
		o.EndedBy = []string{"fault window"}
	}
	return o
}

// endedBy names what an error class says ended a request: a timeout, or the connection.
func endedBy(class string) string {
	switch class {
	case "57014":
		return "statement_timeout"
	case "55P03":
		return "lock_timeout"
	case "deadline_exceeded":
		return "deadline"
	case "acquire_timeout", "pool_acquire":
		return "pool_acquire"
	case "conn_closed", "conn_error", "57P01", "08006", "08003", "08000":
		return "connection (" + class + ")"
	}
	return class
}
