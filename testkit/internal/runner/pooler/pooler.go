// Package pooler owns the pooler between the service and PostgreSQL as an invocation runs
// through it (--pooler, --pooler-url): a temporary PgBouncer in front of the server, or an
// existing one whose console it reads, with every connection of the service sent through it
// (database.Target.ServeThrough); its console read for the monitor's samples, a run's SHOW
// STATS totals and the RECONNECT that releases its server connections after a run; the faults
// that strike it (a restart, a PAUSE); and the round trips on its two hops: --pooler-rtt
// between the service and the pooler (an in-process proxy of its own, testkit/servers/netdelay)
// and --db-rtt between the pooler and PostgreSQL (the service's proxy, which the pooler then
// dials: Config.Upstream). A run's view of it is a Window (window.go).
//
// An invocation without a pooler holds a nil *Pooler: every method says "no pooler" (zero
// values, nil, or an error for a fault that needs one), so that no caller asks whether there is
// one. It knows nothing of suites, modes or the load.
package pooler

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

	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

// Config is the pooler an invocation puts in place.
type Config struct {
	// URL is --pooler-url, an existing PgBouncer's admin console; "" starts a temporary one.
	URL string
	// Mode and PoolSize are the temporary pooler's (--pooler-mode, --pooler-pool-size); an
	// existing one's are read from its console.
	Mode     string
	PoolSize int
	// ServiceConns is the most connections the service opens at once (its largest pool, or
	// its workers): the temporary pooler's max_client_conn is made from it (maxClients).
	ServiceConns int
	// Settings are the session settings of the faults (statement-timeout, lock-timeout), which
	// the temporary pooler sets on each server connection it opens (connectQuery).
	Settings map[string]string
	// TempDir is where the temporary pooler's directory goes ("" the system's).
	TempDir string
	// Upstream, when set, is the address the temporary pooler dials to reach PostgreSQL ("":
	// the server's own): a listener of --db-rtt's proxy (netdelay.Proxy.Listen).
	Upstream func() (string, error)
	// ProxyHop puts the service's hop to the pooler through a proxy of round trip RTT
	// (--pooler-rtt, or a network fault on that hop).
	ProxyHop bool
	RTT      time.Duration
}

// BadInput is an error of the pooler given or of the flags, found before any run: the engine
// exits with its usage code on one.
type BadInput struct{ error }

func (b BadInput) Unwrap() error { return b.error }

// Pooler is the invocation's pooler.
type Pooler struct {
	srv        *pgbouncer.Server // nil with --pooler-url
	consoleURL string
	db         string // the database the service asks the pooler for (its pool in SHOW POOLS)
	version    string
	mode       string
	poolSize   int
	// hop is the proxy between the service and the pooler (Config.ProxyHop); nil without.
	hop *netdelay.Proxy

	mu      sync.Mutex
	console *pgbouncer.Console // the monitor's (Sample), reopened after a restart
}

// Start puts the pooler in place, once target is open and before the service connects: a
// temporary PgBouncer, or the one of Config.URL, checked; the service's connections to target
// then go through it. Errors that are the input's are BadInput. On an error nothing it
// started is left.
func Start(ctx context.Context, target *database.Postgres, c Config) (_ *Pooler, err error) {
	cfg, err := pgx.ParseConfig(target.DSN())
	if err != nil {
		return nil, err
	}
	p := &Pooler{db: cfg.Database}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.Close())
		}
	}()
	if c.URL != "" {
		if err := p.attach(ctx, c.URL); err != nil {
			return nil, BadInput{err}
		}
		if err := checkSize(ctx, target, p.poolSize, "the pool size of --pooler-url's PgBouncer"); err != nil {
			return nil, err
		}
	} else {
		if err := checkSize(ctx, target, c.PoolSize, "--pooler-pool-size"); err != nil { // before anything starts
			return nil, err
		}
		host, port := cfg.Host, int(cfg.Port)
		if c.Upstream != nil { // --db-rtt: the pooler's hop to PostgreSQL goes through the proxy
			addr, err := c.Upstream()
			if err != nil {
				return nil, err
			}
			if addr != "" {
				h, ps, _ := net.SplitHostPort(addr)
				host, port = h, atoi(ps)
			}
		}
		srv, err := pgbouncer.Start(ctx, pgbouncer.Config{UpstreamHost: host, UpstreamPort: port, DBName: cfg.Database,
			User: cfg.User, Password: cfg.Password, Mode: c.Mode, PoolSize: c.PoolSize,
			MaxClientConn: maxClients(c.ServiceConns), ConnectQuery: connectQuery(target.Schema(), c.Settings), TempDir: c.TempDir})
		if err != nil {
			return nil, err
		}
		p.srv, p.consoleURL, p.mode, p.poolSize, p.version = srv, srv.ConsoleURL(), c.Mode, c.PoolSize, srv.Version()
		if p.console, err = pgbouncer.OpenConsole(ctx, p.consoleURL); err != nil {
			return nil, err
		}
	}
	clientURL, err := p.clientURL(ctx)
	if err != nil {
		return nil, BadInput{err}
	}
	if c.ProxyHop {
		hp, err := url.Parse(clientURL)
		if err != nil {
			return nil, err
		}
		if p.hop, err = netdelay.New(netdelay.Config{Upstream: hp.Host, RTT: c.RTT}); err != nil {
			return nil, err
		}
		target.Route(p.hop.DialContext)
	} else {
		target.Route(nil) // --db-rtt's proxy is the pooler's now, not the service's
	}
	target.ServeThrough(clientURL)
	return p, checkThrough(ctx, target)
}

// maxClients is the pooler's max_client_conn: twice every connection the service may open,
// and room for its flushers, a suite's workers, a storm and the probes. Twice, because a
// connection the load gives up on (--request-timeout) is closed and replaced, and its cancel
// request is a client connection of its own for a moment: at 6,000 workers a wave of timeouts
// otherwise met "no more connections allowed (max_client_conn)" at the pooler.
func maxClients(serviceConns int) int {
	return 2*serviceConns + 1000
}

// connectQuery is what the pooler runs on each server connection it opens: the run's
// search_path and the session settings of the faults (statement-timeout, lock-timeout), which
// a pooler takes neither as startup parameters nor, in transaction mode, as a client's SET.
func connectQuery(schema string, settings map[string]string) string {
	parts := []string{"SET search_path TO " + pgx.Identifier{schema}.Sanitize()}
	for k, v := range settings {
		parts = append(parts, "SET "+k+" TO '"+strings.ReplaceAll(v, "'", "''")+"'")
	}
	return strings.Join(parts, "; ")
}

// attach opens the console of an existing PgBouncer (--pooler-url) and reads its mode and the
// pool size of the run's database from it.
func (p *Pooler) attach(ctx context.Context, consoleURL string) error {
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
func (p *Pooler) clientURL(ctx context.Context) (string, error) {
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

// checkSize refuses a pool of n server connections that target's server cannot hold
// (pgbouncer.ConnectionLimit); what names the pool size in the refusal.
func checkSize(ctx context.Context, target *database.Postgres, n int, what string) error {
	limit, err := pgbouncer.ConnectionLimit(ctx, target.Admin())
	if err != nil {
		return err
	}
	if n > limit {
		return BadInput{fmt.Errorf("%s %d is above the %d connections the server's max_connections leaves to an ordinary user", what, n, limit)}
	}
	return nil
}

// checkThrough connects once through the pooler and checks it lands in the run's schema: a
// --pooler-url PgBouncer must set search_path on its server connections (connect_query, as
// baseline pgbouncer --schema does), since a pooler takes none from its clients.
func checkThrough(ctx context.Context, target *database.Postgres) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := target.Connect(cctx, "hotspotkit-probe")
	if err != nil {
		return BadInput{fmt.Errorf("connecting through the pooler: %w", err)}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(cctx, "SELECT coalesce(current_schema(), '(none)')", pgx.QueryExecModeSimpleProtocol).Scan(&schema); err != nil {
		return BadInput{fmt.Errorf("through the pooler: %w", err)}
	}
	if schema != target.Schema() {
		return BadInput{fmt.Errorf("the pooler's server connections are in schema %q, not the run's %q: start it with baseline pgbouncer --schema %s, or give its [databases] entry connect_query='SET search_path TO %s'",
			schema, target.Schema(), target.Schema(), target.Schema())}
	}
	return nil
}

// Mode is the pooler's pool mode ("" without a pooler): a temporary one's as configured,
// --pooler-url's as its console says.
func (p *Pooler) Mode() string {
	if p == nil {
		return ""
	}
	return p.mode
}

// PoolSize is the pooler's pool of server connections for the run's database (0 without a
// pooler, or when --pooler-url's console does not say).
func (p *Pooler) PoolSize() int {
	if p == nil {
		return 0
	}
	return p.poolSize
}

// Path is the network faults' path on the service's hop to the pooler (its proxy).
func (p *Pooler) Path() (faults.Path, error) {
	if p == nil || p.hop == nil {
		return nil, errors.New("no proxy on the path to the pooler")
	}
	return p.hop, nil
}

// onConsole runs f on the pooler's console connection, which it opens when there is none (at
// the start, after a restart) and drops when f fails, for the next call to open afresh. The
// monitor's samples, the runs' SHOW STATS and RECONNECT share it, one at a time; a pause
// holds a connection of its own.
func (p *Pooler) onConsole(ctx context.Context, f func(*pgbouncer.Console) error) error {
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

// Release has the pooler close its server connections to the run's database once they are
// released (RECONNECT), after the run's pools have closed theirs, and returns their backends'
// PIDs, read on admin: the run's database figures wait for them to exit, as for the sessions
// the service opened itself, since a backend flushes its statistics as it exits. Nil without a
// pooler, or when it cannot.
func (p *Pooler) Release(ctx context.Context, admin *pgx.Conn) []uint32 {
	if p == nil {
		return nil
	}
	pids, err := monitor.ServiceSessions(ctx, admin)
	if err != nil || p.onConsole(ctx, func(con *pgbouncer.Console) error { return con.Reconnect(ctx, p.db) }) != nil {
		return nil
	}
	return pids
}

// Restart is the pooler-restart fault: the temporary PgBouncer SIGKILLed and started again.
func (p *Pooler) Restart(ctx context.Context) (string, error) {
	if p == nil || p.srv == nil {
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

// Pause is the pooler-pause fault: PAUSE on the run's database for d, then RESUME, on a console
// connection of its own; RESUME is sent also when ctx ends first.
func (p *Pooler) Pause(ctx context.Context, d time.Duration) (string, error) {
	if p == nil {
		return "", errors.New("pooler-pause needs --pooler pgbouncer or --pooler-url")
	}
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
	return fmt.Sprintf("PAUSE %s (took hold in %.0f ms: the transactions in flight finished first), RESUME after %s", p.db, units.Ms(took), d), nil
}

// Close stops the temporary pooler and the proxy before it.
func (p *Pooler) Close() error {
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

// StopAll stops every temporary pooler this process started and has not stopped (a panic's
// way out).
func StopAll() error { return pgbouncer.StopAll() }

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}
