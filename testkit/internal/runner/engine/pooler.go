package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

// The engine's side of the pooler between the service and PostgreSQL (--pooler, --pooler-url):
// a temporary PgBouncer in front of the server (or an existing one), every connection of the
// service sent through it (database.Target.ServeThrough), its console read by the monitor and
// struck by the faults, and the round trips placed on its two hops: --pooler-rtt between the
// service and the pooler (an in-process proxy, as --db-rtt's without a pooler), --db-rtt
// between the pooler and PostgreSQL (the same proxy, served on a loopback port the pooler
// dials: netdelay.Proxy.Listen).

// pooler is the invocation's pooler.
type pooler struct {
	srv        *pgbouncer.Server // nil with --pooler-url
	consoleURL string
	db         string // the database the service asks the pooler for (its pool in SHOW POOLS)
	version    string
	mode       string
	poolSize   int
	// hop is the proxy between the service and the pooler (--pooler-rtt, a net fault on
	// pooler); nil without.
	hop *netdelay.Proxy

	mu      sync.Mutex
	console *pgbouncer.Console // the monitor's (sample), reopened after a restart
}

// startPooler puts the pooler in place, after the target is open and before the service
// connects: a temporary PgBouncer (--pooler pgbouncer) or the one of --pooler-url, checked.
// The --db-rtt proxy, when there is one, is then the pooler's way to the server.
func (e *engine) startPooler(ctx context.Context) error {
	c := e.cfg
	if !c.Pooled() {
		return nil
	}
	cfg, err := pgx.ParseConfig(e.target.DSN())
	if err != nil {
		return err
	}
	p := &pooler{db: cfg.Database}
	if c.PoolerURL != "" {
		if err := p.attach(ctx, c.PoolerURL); err != nil {
			return usageError{err}
		}
		e.pooler = p // closed with the invocation from here on
		if err := e.checkPoolerSize(ctx, p.poolSize); err != nil {
			return err
		}
	} else {
		if err := e.checkPoolerSize(ctx, c.PoolerPoolSize); err != nil { // before anything starts
			return err
		}
		host, port := cfg.Host, int(cfg.Port)
		if e.net.pg != nil { // --db-rtt: the pooler's hop to PostgreSQL goes through the proxy
			addr, err := e.net.pg.Listen()
			if err != nil {
				return err
			}
			h, ps, _ := net.SplitHostPort(addr)
			host, port = h, atoi(ps)
		}
		srv, err := pgbouncer.Start(ctx, pgbouncer.Config{UpstreamHost: host, UpstreamPort: port, DBName: cfg.Database,
			User: cfg.User, Password: cfg.Password, Mode: c.PoolerMode, PoolSize: c.PoolerPoolSize,
			MaxClientConn: poolerClients(c.MaxPool(), c.Concurrency), ConnectQuery: e.connectQuery(), TempDir: c.PgDir})
		if err != nil {
			return err
		}
		p.srv, p.consoleURL, p.mode, p.poolSize, p.version = srv, srv.ConsoleURL(), c.PoolerMode, c.PoolerPoolSize, srv.Version()
		if p.console, err = pgbouncer.OpenConsole(ctx, p.consoleURL); err != nil {
			return errors.Join(err, srv.Stop())
		}
	}
	e.pooler = p
	clientURL, err := p.clientURL(ctx)
	if err != nil {
		return usageError{err}
	}
	if c.ProxiesPooler() {
		hp, err := url.Parse(clientURL)
		if err != nil {
			return err
		}
		if p.hop, err = netdelay.New(netdelay.Config{Upstream: hp.Host, RTT: c.PoolerRTT}); err != nil {
			return err
		}
		e.target.Route(p.hop.DialContext)
	} else {
		e.target.Route(nil) // --db-rtt's proxy is the pooler's now, not the service's
	}
	e.target.ServeThrough(clientURL)
	return e.checkThroughPooler(ctx)
}

// suiteConfig is what a suite reads of the plan (testkit.Config), with the pool mode of
// --pooler-url's PgBouncer, which only its console says.
func (e *engine) suiteConfig() testkit.Config {
	cfg := e.cfg.Config()
	if e.pooler != nil && e.pooler.mode != "" {
		cfg.PoolerMode = e.pooler.mode
	}
	return cfg
}

// poolerClients is the pooler's max_client_conn: twice every connection the service may open,
// and room for its flushers, a suite's workers, a storm and the probes. Twice, because a
// connection the load gives up on (--request-timeout) is closed and replaced, and its cancel
// request is a client connection of its own for a moment: at 6,000 workers a wave of timeouts
// otherwise met "no more connections allowed (max_client_conn)" at the pooler.
func poolerClients(maxConns, concurrency int) int {
	return 2*max(maxConns, concurrency) + 1000
}

// poolerConns is a temporary pooler's pool (--pooler-pool-size): the most sessions of the
// service the temporary server then holds, however many clients connect to the pooler; 0
// without one.
func poolerConns(c *plan.Plan) int {
	if c.Settings.Pooler != "pgbouncer" || c.PoolerURL != "" {
		return 0
	}
	return c.PoolerPoolSize
}

// connectQuery is what the pooler runs on each server connection it opens: the run's
// search_path and the session settings of the faults (statement-timeout, lock-timeout), which
// a pooler takes neither as startup parameters nor, in transaction mode, as a client's SET.
func (e *engine) connectQuery() string {
	parts := []string{"SET search_path TO " + pgx.Identifier{e.target.Schema()}.Sanitize()}
	for k, v := range faults.SessionSettings(e.cfg.Faults) {
		parts = append(parts, "SET "+k+" TO '"+strings.ReplaceAll(v, "'", "''")+"'")
	}
	return strings.Join(parts, "; ")
}

// attach opens the console of an existing PgBouncer (--pooler-url) and reads its mode and the
// pool size of the run's database from it.
func (p *pooler) attach(ctx context.Context, consoleURL string) error {
	con, err := pgbouncer.OpenConsole(ctx, consoleURL)
	if err != nil {
		return fmt.Errorf("--pooler-url: %w", err)
	}
	p.console, p.consoleURL, p.version = con, consoleURL, con.Version()
	settings, err := con.Settings(ctx)
	if err != nil {
		return fmt.Errorf("--pooler-url: SHOW CONFIG: %w", err)
	}
	p.mode, p.poolSize = settings["pool_mode"], atoi(settings["default_pool_size"])
	if dbs, err := con.Databases(ctx); err == nil {
		for _, d := range dbs {
			if d.Name == p.db {
				if d.Mode != "" {
					p.mode = d.Mode
				}
				if d.PoolSize > 0 {
					p.poolSize = int(d.PoolSize)
				}
			}
		}
	}
	return nil
}

// clientURL is what the service connects to: the temporary pooler's, or, with --pooler-url,
// the console's user and password on the run's database (pgbouncer.Console.ClientURL: a
// PgBouncer such as baseline pgbouncer's lets its console's user in, and its database entry
// logs in to PostgreSQL as the server's own user).
func (p *pooler) clientURL(ctx context.Context) (string, error) {
	if p.srv != nil {
		return p.srv.ClientURL(), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	u, err := p.console.ClientURL(ctx, p.db)
	if err != nil {
		return "", fmt.Errorf("--pooler-url: %w", err)
	}
	return u, nil
}

// checkPoolerSize refuses a pool of n server connections that the server cannot hold
// (pgbouncer.ConnectionLimit).
func (e *engine) checkPoolerSize(ctx context.Context, n int) error {
	limit, err := pgbouncer.ConnectionLimit(ctx, e.target.Admin())
	if err != nil {
		return err
	}
	if n > limit {
		flag := "--pooler-pool-size"
		if e.cfg.PoolerURL != "" {
			flag = "the pool size of --pooler-url's PgBouncer"
		}
		return usageError{fmt.Errorf("%s %d is above the %d connections the server's max_connections leaves to an ordinary user", flag, n, limit)}
	}
	return nil
}

// checkThroughPooler connects once through the pooler and checks it lands in the run's schema:
// a --pooler-url PgBouncer must set search_path on its server connections (connect_query, as
// baseline pgbouncer --schema does), since a pooler takes none from its clients.
func (e *engine) checkThroughPooler(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := e.target.Connect(cctx, "hotspotkit-probe")
	if err != nil {
		return usageError{fmt.Errorf("connecting through the pooler: %w", err)}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(cctx, "SELECT coalesce(current_schema(), '(none)')", pgx.QueryExecModeSimpleProtocol).Scan(&schema); err != nil {
		return usageError{fmt.Errorf("through the pooler: %w", err)}
	}
	if schema != e.target.Schema() {
		return usageError{fmt.Errorf("the pooler's server connections are in schema %q, not the run's %q: start it with baseline pgbouncer --schema %s, or give its [databases] entry connect_query='SET search_path TO %s'",
			schema, e.target.Schema(), e.target.Schema(), e.target.Schema())}
	}
	return nil
}

// sample reads the pooler's pool of the run's database (the monitor's Config.Pooler), on the
// console it reopens after a restart.
func (p *pooler) sample(ctx context.Context) (*results.PoolerSample, error) {
	var pools []pgbouncer.Pool
	err := p.onConsole(ctx, func(con *pgbouncer.Console) (err error) {
		pools, err = con.Pools(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var s results.PoolerSample
	for _, pl := range pools {
		if pl.Database != p.db {
			continue
		}
		s.ClientsActive += pl.ClActive
		s.ClientsWaiting += pl.ClWaiting
		s.ServersActive += pl.SvActive
		s.ServersIdle += pl.SvIdle + pl.SvUsed
		s.MaxWaitMs = max(s.MaxWaitMs, ms(pl.MaxWait))
	}
	return &s, nil
}

// onConsole runs f on the pooler's console connection, which it opens when there is none (at
// the start, after a restart) and drops when f fails, for the next call to open afresh. The
// monitor's samples, the runs' SHOW STATS and RECONNECT share it, one at a time; a pause
// holds a connection of its own.
func (p *pooler) onConsole(ctx context.Context, f func(*pgbouncer.Console) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.console == nil {
		con, err := pgbouncer.OpenConsole(ctx, p.consoleURL)
		if err != nil {
			return err
		}
		p.console = con
	}
	if err := f(p.console); err != nil {
		_ = p.console.Close()
		p.console = nil
		return err
	}
	return nil
}

// stats reads SHOW STATS' totals of the run's database (zero when it cannot).
func (p *pooler) stats(ctx context.Context) pgbouncer.Stats {
	var all []pgbouncer.Stats
	if p.onConsole(ctx, func(con *pgbouncer.Console) (err error) {
		all, err = con.Stats(ctx)
		return err
	}) != nil {
		return pgbouncer.Stats{}
	}
	for _, s := range all {
		if s.Database == p.db {
			return s
		}
	}
	return pgbouncer.Stats{}
}

// report is the run's Pooler: the monitor's maxima, what the pooler is, and the SHOW STATS
// totals between the run's start (at) and now.
func (p *pooler) report(ctx context.Context, maxima results.Pooler, at pgbouncer.Stats, cpu0 poolerCPU, c poolerHops) *results.Pooler {
	out := maxima
	if cpu1 := p.cpuAt(); cpu0.used > 0 && cpu1.used >= cpu0.used {
		used, wall := cpu1.used-cpu0.used, cpu1.at.Sub(cpu0.at)
		out.CPUSeconds = round1(used.Seconds()*100) / 100
		if wall > 0 {
			out.CPUShare = float64(int64(used.Seconds()/wall.Seconds()*1000+0.5)) / 1000
		}
	}
	out.Kind, out.Version, out.Managed, out.Mode, out.PoolSize = "pgbouncer", p.version, p.srv != nil, p.mode, p.poolSize
	out.PoolerRTTMs, out.DBRTTMs = c.pooler, c.db
	end := p.stats(ctx)
	if n := end.TotalXactCount - at.TotalXactCount; n > 0 && end.TotalXactCount >= at.TotalXactCount {
		out.Transactions = n
		out.AvgWaitMs = ms(end.TotalWaitTime-at.TotalWaitTime) / float64(n)
		out.AvgXactMs = ms(end.TotalXactTime-at.TotalXactTime) / float64(n)
	}
	return &out
}

// cpuAt is the temporary pooler's processor time so far and when it was read (zero without
// one, or when /proc cannot say).
func (p *pooler) cpuAt() poolerCPU {
	if p.srv == nil {
		return poolerCPU{}
	}
	return poolerCPU{used: p.srv.CPUTime(), at: time.Now()}
}

// poolerCPU is a reading of the pooler's processor time.
type poolerCPU struct {
	used time.Duration
	at   time.Time
}

// poolerHops are the round trips a run added on the pooler's two hops, in ms.
type poolerHops struct{ pooler, db float64 }

// release has the pooler close its server connections to the run's database once they are
// released (RECONNECT), after the run's pools have closed theirs, and returns their backends'
// PIDs: the run's database figures wait for them to exit, as for the sessions the service
// opened itself, since a backend flushes its statistics as it exits.
func (p *pooler) release(ctx context.Context, admin *pgx.Conn) []uint32 {
	pids, err := monitor.ServiceSessions(ctx, admin)
	if err != nil || p.onConsole(ctx, func(con *pgbouncer.Console) error { return con.Reconnect(ctx, p.db) }) != nil {
		return nil
	}
	return pids
}

// restart is the pooler-restart fault: the temporary PgBouncer SIGKILLed and started again.
func (p *pooler) restart(ctx context.Context) (string, error) {
	if p.srv == nil {
		return "", errors.New("pooler-restart needs --pooler pgbouncer (a PgBouncer this run starts)")
	}
	held := ""
	if s, err := p.sample(ctx); err == nil {
		held = fmt.Sprintf(" (it held %d clients active, %d waiting, %d server connections)", s.ClientsActive, s.ClientsWaiting, s.ServersActive+s.ServersIdle)
	}
	p.mu.Lock()
	if p.console != nil {
		_ = p.console.Close()
		p.console = nil
	}
	p.mu.Unlock()
	if err := p.srv.Restart(ctx); err != nil {
		return "", err
	}
	return "PgBouncer killed (SIGKILL) and started again on its port" + held, nil
}

// pause is the pooler-pause fault: PAUSE on the run's database for d, then RESUME, on a console
// connection of its own; RESUME is sent also when ctx ends first.
func (p *pooler) pause(ctx context.Context, d time.Duration) (string, error) {
	con, err := pgbouncer.OpenConsole(ctx, p.consoleURL)
	if err != nil {
		return "", err
	}
	defer con.Close()
	t0 := time.Now()
	if err := con.Pause(ctx, p.db); err != nil {
		return "", err
	}
	took := time.Since(t0)
	select {
	case <-ctx.Done():
	case <-time.After(d - took):
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := con.Resume(rctx, p.db); err != nil {
		return "", fmt.Errorf("RESUME: %w", err)
	}
	return fmt.Sprintf("PAUSE %s (took hold in %.0f ms: the transactions in flight finished first), RESUME after %s", p.db, ms(took), d), nil
}

// close stops the temporary pooler and the proxy before it.
func (p *pooler) close() error {
	if p == nil {
		return nil
	}
	var err error
	p.mu.Lock()
	if p.console != nil {
		err = p.console.Close()
		p.console = nil
	}
	p.mu.Unlock()
	if p.hop != nil {
		err = errors.Join(err, p.hop.Close())
	}
	if p.srv != nil {
		err = errors.Join(err, p.srv.Stop())
	}
	return err
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// poolerPath is the network faults' path on the pooler's hop.
func (e *engine) poolerPath() (faults.Path, error) {
	if e.pooler == nil || e.pooler.hop == nil {
		return nil, errors.New("no proxy on the path to the pooler")
	}
	return e.pooler.hop, nil
}
