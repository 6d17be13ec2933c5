package netpath

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
)

// probeInterval is how often a probe measures a round trip while a run goes on. Each probe
// is two round trips back to back, and the second is timed: the first wakes the server's
// process and the probe's own from their idle wait, which on a virtual machine takes longer
// than the network it measures.
const probeInterval = 20 * time.Millisecond

// firstProbeTimeout bounds a run's first probe (every).
const firstProbeTimeout = 10 * time.Second

// Probe measures round trips over the service's paths while a run goes on.
type Probe struct {
	n      *Paths
	hard   context.Context
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

// StartProbe starts a run's probes until Stop, or hard (the invocation's end): SELECT 1 on a
// connection of the service's path (and, when it is proxied, of the direct one), and
// redisPing (the queue's Redis client; nil without one). The PostgreSQL probes' connections are
// opened before it returns, so before the load starts: a backend's start costs the server tens
// of ms of CPU, which a short run would otherwise pay inside its window — and a proxied run,
// probing two paths, twice.
func (n *Paths) StartProbe(hard context.Context, redisPing func(context.Context) error) *Probe {
	ctx, cancel := context.WithCancel(hard)
	p := &Probe{n: n, hard: hard, cancel: cancel, pg: probeSeries{h: hist.New()}}
	connect, cancelConnect := context.WithTimeout(hard, firstProbeTimeout)
	defer cancelConnect()
	conn := p.connect(connect, &p.pg, false)
	p.wg.Go(func() { p.probePostgres(ctx, &p.pg, false, conn) })
	if n.pg != nil {
		p.direct = &probeSeries{h: hist.New()}
		direct := p.connect(connect, p.direct, true)
		p.wg.Go(func() { p.probePostgres(ctx, p.direct, true, direct) })
	}
	if redisPing != nil {
		p.redis = &probeSeries{h: hist.New()}
		p.wg.Go(func() {
			every(ctx, hard, func(ctx context.Context) {
				err := redisPing(ctx) // wakes the path (probeInterval)
				t0 := time.Now()
				if err == nil {
					err = redisPing(ctx)
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

// connect opens a PostgreSQL probe's connection, of the service's path or the direct one; nil
// when it failed (counted), and the probe connects again on its next round.
func (p *Probe) connect(ctx context.Context, s *probeSeries, direct bool) *pgx.Conn {
	target := p.n.target
	var conn *pgx.Conn
	var err error
	switch {
	case direct:
		conn, err = target.ConnectDirect(ctx, "hotspotkit-probe")
	case target.Pooled():
		// Through a pooler, the probe measures the pooler's hop to PostgreSQL (--db-rtt's),
		// not the pooler's queue, and keeps its SET (Untrack) off the pooler's connections.
		var dial database.DialFunc
		if p.n.pg != nil {
			dial = p.n.pg.DialContext
		}
		conn, err = target.ConnectVia(ctx, "hotspotkit-probe", dial)
	default:
		conn, err = target.Connect(ctx, "hotspotkit-probe")
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
func (p *Probe) probePostgres(ctx context.Context, s *probeSeries, direct bool, conn *pgx.Conn) {
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	every(ctx, p.hard, func(ctx context.Context) {
		if conn == nil {
			if conn = p.connect(ctx, s, direct); conn == nil {
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

// Stop ends the probes and returns what they measured over a run whose round trip to
// PostgreSQL was rtt, adding it to the invocation's (Paths.Environment).
func (p *Probe) Stop(rtt time.Duration) *results.Network {
	p.cancel()
	p.wg.Wait()
	n := p.n
	out := &results.Network{Postgres: measuredPath(n.pg != nil, p.pg.h, p.pg.errors)}
	n.pgAll.Merge(p.pg.h)
	n.pgErrs += p.pg.errors
	if n.pg != nil {
		out.Postgres.ConfiguredRTTMs, out.Postgres.JitterMs = results.Milliseconds(rtt), results.Milliseconds(n.cfg.DBJitter)
		d := results.Latency(p.direct.h.Summary())
		out.Postgres.DirectRTTMs, out.Postgres.DirectRTTHistogram = &d, encoded(p.direct.h)
		n.pgDirect.Merge(p.direct.h)
	}
	if p.redis != nil {
		out.Redis = n.redisPath(p.redis.h, p.redis.errors)
		n.redisAll.Merge(p.redis.h)
		n.redisErrs += p.redis.errors
	}
	return out
}

// Transactions is what the probes ran on PostgreSQL, which the run's database figures leave
// out; final once Stop has returned.
func (p *Probe) Transactions() int64 {
	n := p.pg.transactions
	if p.direct != nil {
		n += p.direct.transactions
	}
	return n
}
