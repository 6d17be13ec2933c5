package netpath

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
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
	open   Connect
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
	// transactions counts what the probe ran on the database (the run's database figures
	// leave them out).
	transactions int64
}

// Pinger is a probe's connection to the database: each Ping one round trip (PostgreSQL's
// SELECT 1 in the simple protocol, MySQL's COM_PING).
type Pinger interface {
	Ping(ctx context.Context) error
	Close(ctx context.Context)
}

// Connect opens a probe's connection to the database: over the service's path, or the direct
// one when direct; proxy is the database's proxy's dial when there is one (a pooled path's
// probe measures the pooler's hop to the server through it). Its first statements, if any,
// are counted in setUp.
type Connect func(ctx context.Context, direct bool, proxy database.DialFunc) (p Pinger, setUp int64, err error)

// StartProbe starts a run's probes until Stop, or hard (the invocation's end): a ping of the
// database on a connection of the service's path (and, when it is proxied, of the direct
// one), opened by connect, and redisPing (the queue's Redis client; nil without one). The
// database probes' connections are opened before it returns, so before the load starts: a
// session's start costs the server tens of ms of CPU, which a short run would otherwise pay
// inside its window — and a proxied run, probing two paths, twice.
func (n *Paths) StartProbe(hard context.Context, connect Connect, redisPing func(context.Context) error) *Probe {
	ctx, cancel := context.WithCancel(hard)
	p := &Probe{n: n, hard: hard, cancel: cancel, open: connect, pg: probeSeries{h: hist.New()}}
	first, cancelFirst := context.WithTimeout(hard, firstProbeTimeout)
	defer cancelFirst()
	conn := p.connect(first, &p.pg, false)
	p.wg.Go(func() { p.probePostgres(ctx, &p.pg, false, conn) })
	if n.pg != nil {
		p.direct = &probeSeries{h: hist.New()}
		direct := p.connect(first, p.direct, true)
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

// connect opens a database probe's connection, of the service's path or the direct one; nil
// when it failed (counted), and the probe connects again on its next round.
func (p *Probe) connect(ctx context.Context, s *probeSeries, direct bool) Pinger {
	var proxy database.DialFunc
	if p.n.pg != nil {
		proxy = p.n.pg.DialContext
	}
	conn, setUp, err := p.open(ctx, direct, proxy)
	if err != nil {
		if ctx.Err() == nil {
			s.errors++
		}
		return nil
	}
	s.transactions += setUp
	return conn
}

// probePostgres times a ping every probeInterval (the second of two: see probeInterval) on
// conn until ctx ends, connecting again after a failure (a reset path).
func (p *Probe) probePostgres(ctx context.Context, s *probeSeries, direct bool, conn Pinger) {
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
		err := conn.Ping(ctx) // wakes the path (probeInterval)
		s.transactions++
		t0 := time.Now()
		if err == nil {
			err = conn.Ping(ctx)
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

// Transactions is what the probes ran on the database, which the run's database figures leave
// out; final once Stop has returned.
func (p *Probe) Transactions() int64 {
	n := p.pg.transactions
	if p.direct != nil {
		n += p.direct.transactions
	}
	return n
}

// PostgresProbe is PostgreSQL's Connect: SELECT 1 in the simple protocol on a connection of
// its own, whose statements pg_stat_statements leaves out (dbstats.Untrack, one set-up
// statement). Through a pooler, the probe of the service's path measures the pooler's hop to
// PostgreSQL (--db-rtt's), not the pooler's queue, and keeps its SET off the pooler's
// connections.
func PostgresProbe(target *database.Postgres) Connect {
	return func(ctx context.Context, direct bool, proxy database.DialFunc) (Pinger, int64, error) {
		var conn *pgx.Conn
		var err error
		switch {
		case direct:
			conn, err = target.ConnectDirect(ctx, ProbeApp)
		case target.Pooled():
			conn, err = target.ConnectVia(ctx, ProbeApp, proxy)
		default:
			conn, err = target.Connect(ctx, ProbeApp)
		}
		if err != nil {
			return nil, 0, err
		}
		dbstats.Untrack(ctx, conn)
		return pgPinger{conn}, 1, nil
	}
}

// ProbeApp names the probes' sessions.
const ProbeApp = "hotspotkit-probe"

type pgPinger struct{ c *pgx.Conn }

func (p pgPinger) Ping(ctx context.Context) error {
	_, err := p.c.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
	return err
}

func (p pgPinger) Close(ctx context.Context) { _ = p.c.Close(ctx) }

// MySQLProbe is MySQL's Connect: the protocol's own ping (COM_PING, no statement, nothing a
// figure of the server's counts), on a connection of its own.
func MySQLProbe(target *database.MySQL) Connect {
	return func(ctx context.Context, direct bool, _ database.DialFunc) (Pinger, int64, error) {
		var conn sqldb.Conn
		var err error
		if direct {
			conn, err = target.ConnectDirect(ctx, ProbeApp)
		} else {
			conn, err = target.Connect(ctx, ProbeApp)
		}
		if err != nil {
			return nil, 0, err
		}
		s, _ := sqldb.AsSQL(conn)
		pinger, ok := s.(interface{ PingContext(context.Context) error })
		if !ok {
			_ = conn.Close(ctx)
			return nil, 0, errors.New("a MySQL probe's connection that cannot ping")
		}
		return mysqlPinger{conn, pinger}, 0, nil
	}
}

type mysqlPinger struct {
	c sqldb.Conn
	p interface{ PingContext(context.Context) error }
}

func (p mysqlPinger) Ping(ctx context.Context) error { return p.p.PingContext(ctx) }

func (p mysqlPinger) Close(ctx context.Context) { _ = p.c.Close(ctx) }
