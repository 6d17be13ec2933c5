package database

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/schema"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Postgres is a run's PostgreSQL: its schema, pgx's connections and pools. Its methods hand
// out pgx's own handles, for PostgreSQL's observers and tests; Target is it as the engine
// and the runs use any kind (package sqldb's handles).
type Postgres struct {
	owned
	dsn   string
	admin *pgx.Conn

	mu sync.Mutex
	// route is how the service's connections reach the server (Route); nil: directly.
	route DialFunc
	// pooler is the service's connection string when its connections go through a pooler
	// (ServeThrough); "": they reach the server itself.
	pooler string
	// sessions are the backend PIDs of the connections opened since the last TakeSessions,
	// the admin connection's excepted.
	sessions []uint32
	// pings counts the liveness pings of NewPool's pools (Pings).
	pings atomic.Int64
	// sockets are the live sockets of the connections opened for the service (CutSockets).
	sockets sockets
}

// Open starts or reaches a PostgreSQL server, creates the run's schema and applies the SQL.
// On error nothing it started is left behind.
func Open(ctx context.Context, opts Options) (*Postgres, error) {
	return open(ctx, opts, func(o owned, url string) *Postgres { return &Postgres{owned: o, dsn: url} }, (*Postgres).open)
}

func (t *Postgres) open(ctx context.Context) error {
	conn, err := dialPostgresAdmin(ctx, t.dsn, t.opts.ConnectTimeout)
	if err != nil {
		return err
	}
	t.admin = conn
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, t.Schema()).Scan(&exists); err != nil {
		return err
	}
	if exists && !t.opts.ReuseSchema {
		return fmt.Errorf("schema %q already exists (left by an interrupted run?): drop it (DROP SCHEMA %s CASCADE), or pick another --schema, or join it on purpose with --reuse-schema", t.Schema(), t.Schema())
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{t.Schema()}.Sanitize()); err != nil {
			return fmt.Errorf("creating schema %s: %w", t.Schema(), err)
		}
		t.createdBy = true
	}
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{t.Schema()}.Sanitize()); err != nil {
		return err
	}
	if t.server != nil {
		// Diagnostics only; the run does not depend on it.
		_, _ = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public")
		_, _ = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{t.Schema()}.Sanitize())
	}
	return schema.Apply(ctx, sqldb.PgxConn(conn), t.opts.SQL)
}

// dialPostgresAdmin opens the admin connection to the server of dsn.
func dialPostgresAdmin(ctx context.Context, dsn string, timeout time.Duration) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("--postgres-url: %s", Redact(err.Error()))
	}
	cfg.ConnectTimeout = timeout
	cfg.RuntimeParams["application_name"] = adminApp
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %s", RedactURL(dsn), Redact(err.Error()))
	}
	return conn, nil
}

// DSN is the connection string (with password); never print it, use RedactedURL.
func (t *Postgres) DSN() string { return t.dsn }

// RedactedURL is the server's URL with the password replaced.
func (t *Postgres) RedactedURL() string { return RedactURL(t.dsn) }

// Admin is the target's own connection, for setup, resets and verification (never the load's).
func (t *Postgres) Admin() *pgx.Conn { return t.admin }

// Dialect is the SQL the target's server speaks: PostgreSQL's (its connections and pools are
// pgx's; the kit's suites and queues see them as package sqldb's handles).
func (t *Postgres) Dialect() sqldb.Dialect { return sqldb.Postgres }

// Route is Target.Route: the service's connections through dial from now on (nil: directly).
func (t *Postgres) Route(dial DialFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.route = dial
}

// ServeThrough sends the connections the target opens for the service from now on through the
// pooler at dsn (a PgBouncer's client URL) instead of the server: the Route, if any, then
// carries them to the pooler. The pooler sets the run's search_path and session settings on
// its own server connections (PgBouncer's connect_query): a pooler takes neither as a startup
// parameter, and a SET on a client connection would reach whichever server connection the
// pooler lends it next. The admin connection, ConnectDirect's and the pools of
// PoolOptions.Direct keep reaching the server directly.
//
// Through a pooler the service's statements run in pgx's QueryExecModeCacheDescribe: the
// extended protocol with an unnamed statement, its description cached by the client, so one
// round trip a statement, as the default mode, and no named prepared statement, which a
// transaction-mode pooler cannot keep (the next transaction may run on another server
// connection that never saw it; PgBouncer tracks them only from 1.21). The cache stays
// right because the run's tables do not change shape while it runs.
func (t *Postgres) ServeThrough(dsn string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pooler = dsn
}

// Pooled reports whether the service's connections go through a pooler (ServeThrough).
func (t *Postgres) Pooled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pooler != ""
}

// ConnConfig returns a connection config for this run: search_path = the run's schema only,
// through the Route when there is one (and the pooler, ServeThrough).
func (t *Postgres) ConnConfig(appName string) (*pgx.ConnConfig, error) {
	return t.connConfig(appName, false)
}

func (t *Postgres) connConfig(appName string, direct bool) (*pgx.ConnConfig, error) {
	dsn, pooled := t.dsn, false
	var route DialFunc
	if !direct {
		t.mu.Lock()
		route = t.route
		if t.pooler != "" {
			dsn, pooled = t.pooler, true
		}
		t.mu.Unlock()
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = t.opts.ConnectTimeout
	cfg.RuntimeParams["application_name"] = appName
	if pooled {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe // see ServeThrough
	} else {
		cfg.RuntimeParams["search_path"] = t.Schema()
	}
	if route != nil {
		// The host, port and TLS settings stay the server's: the route only carries bytes.
		routeConfig(cfg, route)
	}
	if appName != adminApp {
		cfg.DialFunc = t.sockets.dial(cfg.DialFunc)
	}
	return cfg, nil
}

// Connect opens a dedicated connection of the service (a flusher's), through the Route.
func (t *Postgres) Connect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.connect(ctx, appName, false)
}

// ConnectDirect opens a dedicated connection that reaches the server directly whatever the
// Route (the monitor's, a fault injector's, a probe of the direct path).
func (t *Postgres) ConnectDirect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.connect(ctx, appName, true)
}

// ConnectVia opens a dedicated connection to the server itself, never through the pooler or
// the Route, carried by dial (nil: directly): a probe of one hop of a pooled path.
func (t *Postgres) ConnectVia(ctx context.Context, appName string, dial DialFunc) (*pgx.Conn, error) {
	return t.connectWith(ctx, appName, true, dial)
}

func (t *Postgres) connect(ctx context.Context, appName string, direct bool) (*pgx.Conn, error) {
	return t.connectWith(ctx, appName, direct, nil)
}

func (t *Postgres) connectWith(ctx context.Context, appName string, direct bool, dial DialFunc) (*pgx.Conn, error) {
	cfg, err := t.connConfig(appName, direct)
	if err != nil {
		return nil, err
	}
	if dial != nil {
		routeConfig(cfg, dial)
		cfg.DialFunc = t.sockets.dial(cfg.DialFunc)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, errors.New(Redact(err.Error()))
	}
	if appName != adminApp {
		t.track(conn)
	}
	return conn, nil
}

func (t *Postgres) track(conn *pgx.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sessions = append(t.sessions, conn.PgConn().PID())
}

// TakeSessions returns the backend PIDs of the connections opened (by Connect or a pool of
// NewPool) since the last call, and forgets them. The run's database figures wait for these
// backends to exit: only then are their statistics flushed.
func (t *Postgres) TakeSessions() []uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions
	t.sessions = nil
	return s
}

// NewPool opens a pool of at most MaxConns connections for this run.
func (t *Postgres) NewPool(ctx context.Context, o PoolOptions) (*pgxpool.Pool, error) {
	cc, err := t.connConfig(o.AppName, o.Direct)
	if err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	pc.ConnConfig = cc
	pc.MaxConns = o.MaxConns
	pc.MinConns = o.MinConns
	pc.MaxConnLifetime = o.MaxConnLifetime // pgxpool: 0 is never
	pc.MaxConnLifetimeJitter = time.Duration(float64(o.MaxConnLifetime) * LifetimeJitter)
	pc.MaxConnIdleTime = o.MaxConnIdle
	if o.MaxConnIdle == 0 {
		pc.MaxConnIdleTime = math.MaxInt64 // pgxpool's 0 closes every idle connection
	}
	pc.HealthCheckPeriod = healthCheckPeriod(o.MaxConnLifetime, o.MaxConnIdle)
	pc.ConnConfig.Tracer = o.Tracer
	if o.Direct || !t.Pooled() { // through a pooler, its connect_query sets them (ServeThrough)
		for k, v := range o.Settings {
			pc.ConnConfig.RuntimeParams[k] = v
		}
	}
	// pgxpool's own rule (ping a connection idle for over a second when it is acquired),
	// counted, since each ping is a transaction of the server's (Pings) — with a connection's
	// idle time counted from when it was open, not from when the pool began to open it:
	// pgxpool counts the set-up as idle time, so a connection that took over a second to open
	// (64 opened at once on a busy machine) was pinged at once, and the pings of a pool warmed
	// before a run reached the run's figures later (PostgreSQL holds a busy backend's counters
	// up to 10 s): 40–50 commits that were not the run's.
	pc.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		idle := p.IdleDuration
		cd := p.Conn.PgConn().CustomData()
		if opened, ok := cd[openedKey].(time.Time); ok { // never handed out before
			delete(cd, openedKey)
			idle = time.Since(opened)
		}
		if idle > time.Second {
			t.pings.Add(1)
			return true
		}
		return false
	}
	var seats sessionSeats
	pc.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		t.track(conn)
		conn.PgConn().CustomData()[seatKey] = seats.take()
		conn.PgConn().CustomData()[openedKey] = time.Now()
		if o.Connected != nil {
			o.Connected()
		}
		return nil
	}
	pc.BeforeClose = func(conn *pgx.Conn) {
		if i, ok := conn.PgConn().CustomData()[seatKey].(int); ok {
			seats.free(i)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, errors.New(Redact(err.Error()))
	}
	return pool, nil
}

// healthCheckPeriod is how often a pool looks at its idle connections: pgxpool closes those
// past their lifetime or idle time only then (a connection in use, past its lifetime, closes
// when it is given back), and opens what MinConns lacks. A quarter of the shorter of the two,
// between 100 ms and pgxpool's default minute, so that they act within a run.
func healthCheckPeriod(lifetime, idle time.Duration) time.Duration {
	shortest := time.Minute
	for _, d := range []time.Duration{lifetime, idle} {
		if d > 0 {
			shortest = min(shortest, d/4)
		}
	}
	return max(shortest, 100*time.Millisecond)
}

// Pings is how many liveness pings the pools of NewPool have sent so far: a pool pings a
// connection that was idle for over a second when it hands it out, with an empty query, which
// the server counts as a committed transaction (pg_stat_database.xact_commit): commits that
// are not the run's work.
func (t *Postgres) Pings() int64 { return t.pings.Load() }

// seatKey keys a pooled connection's seat in its pgconn CustomData; openedKey, until the pool
// first hands it out, when it was open.
const (
	seatKey   = "hotspotkit.seat"
	openedKey = "hotspotkit.opened"
)

// EnsureAdmin reconnects the admin connection when it was lost (the server restarted, or
// a fault terminated it).
func (t *Postgres) EnsureAdmin(ctx context.Context) error {
	if t.admin != nil && !t.admin.IsClosed() {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := t.admin.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		_ = t.admin.Close(ctx)
	}
	conn, err := t.connect(ctx, adminApp, true) // the admin observes: never through the Route
	if err != nil {
		return fmt.Errorf("reconnecting: %w", err)
	}
	t.admin = conn
	return nil
}

// Reset empties every table of the run's schema.
func (t *Postgres) Reset(ctx context.Context) error { return schema.Reset(ctx, sqldb.PgxConn(t.admin)) }

// Info reads the server version and the settings that shape the numbers.
func (t *Postgres) Info(ctx context.Context) (ServerInfo, error) {
	info := ServerInfo{Kind: KindPostgres, Settings: map[string]string{}}
	if err := t.admin.QueryRow(ctx, "SHOW server_version").Scan(&info.Version); err != nil {
		return info, err
	}
	for _, name := range []string{"max_connections", "shared_buffers", "fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_preload_libraries"} {
		var v string
		if err := t.admin.QueryRow(ctx, "SELECT current_setting($1, true)", name).Scan(&v); err == nil {
			info.Settings[name] = v
		}
	}
	return info, nil
}

// Close drops the schema (unless kept, or not created by this process), closes the admin
// connection and stops a managed server. It is safe to call more than once.
func (t *Postgres) Close() error { return t.CloseWithin(30 * time.Second) }

// CloseWithin is Close with the schema's drop and the admin connection's goodbye bounded by d:
// a server that no longer answers leaves the schema behind, and the error says how to drop it.
func (t *Postgres) CloseWithin(d time.Duration) error {
	ident := pgx.Identifier{t.Schema()}.Sanitize()
	return t.close(d, t.admin != nil, func(ctx context.Context) error {
		if _, err := t.admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
			return fmt.Errorf("dropping schema %s (left on the server: DROP SCHEMA %s CASCADE): %w", t.Schema(), ident, err)
		}
		return nil
	}, func(ctx context.Context) {
		_ = t.admin.Close(ctx)
		t.admin = nil
	})
}

// Addr is the server's TCP address (ErrNeedsTCP for a Unix socket's path).
func (t *Postgres) Addr() (string, error) {
	cfg, err := pgx.ParseConfig(t.dsn)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(cfg.Host, "/") {
		return "", ErrNeedsTCP
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), nil
}

// Terminate ends the live sessions of the run's database named one of apps
// (pg_terminate_backend), but its own.
func (t *Postgres) Terminate(ctx context.Context, apps ...string) (int, error) {
	conn, err := t.ConnectDirect(ctx, "hotspotkit-faults")
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = ANY($1)`, apps).Scan(&n)
	return n, err
}

// TerminateSessionOf ends the backend h (a pgx handle of this target's, or package sqldb's
// over one) runs on (pg_terminate_backend, waiting up to 5 s until it is gone).
func (t *Postgres) TerminateSessionOf(ctx context.Context, h any) (string, error) {
	pid, ok := backendPID(h)
	if !ok {
		return "", fmt.Errorf("not a PostgreSQL session: %T", h)
	}
	conn, err := t.ConnectDirect(ctx, "hotspotkit-faults")
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ok2 bool
	if err := conn.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", int64(pid)).Scan(&ok2); err != nil || !ok2 {
		return "", fmt.Errorf("terminating backend %d: %v (terminated: %v)", pid, err, ok2)
	}
	return fmt.Sprintf("backend %d", pid), nil
}

// backendPID is the PID of the backend h runs on.
func backendPID(h any) (uint32, bool) {
	if p, ok := sqldb.AsPgx(h); ok {
		h = p
	}
	switch p := h.(type) {
	case pgx.Tx:
		return p.Conn().PgConn().PID(), true
	case *pgxpool.Conn:
		return p.Conn().PgConn().PID(), true
	case *pgx.Conn:
		return p.PgConn().PID(), true
	}
	return 0, false
}

// AsPostgres is the PostgreSQL target under t (for PostgreSQL's own observers: the monitor,
// the statistics, the pooler, the calibration); false when t is another kind's.
func AsPostgres(t Target) (*Postgres, bool) {
	if p, ok := t.(pgTarget); ok {
		return p.Postgres, true
	}
	return nil, false
}

// Target is p as a Target: its connections and pools as package sqldb's handles.
func (t *Postgres) Target() Target { return pgTarget{t} }

// pgTarget is a Postgres as a Target: the methods that hand out pgx's handles hand out
// package sqldb's over them.
type pgTarget struct{ *Postgres }

func (p pgTarget) Admin() sqldb.Conn {
	if p.admin == nil {
		return nil
	}
	return sqldb.PgxConn(p.admin)
}

func (p pgTarget) Connect(ctx context.Context, appName string) (sqldb.Conn, error) {
	c, err := p.Postgres.Connect(ctx, appName)
	if err != nil {
		return nil, err
	}
	return sqldb.PgxConn(c), nil
}

func (p pgTarget) ConnectDirect(ctx context.Context, appName string) (sqldb.Conn, error) {
	c, err := p.Postgres.ConnectDirect(ctx, appName)
	if err != nil {
		return nil, err
	}
	return sqldb.PgxConn(c), nil
}

func (p pgTarget) NewPool(ctx context.Context, o PoolOptions) (Pool, error) {
	pool, err := p.Postgres.NewPool(ctx, o)
	if err != nil {
		return nil, err
	}
	return pgPool{Pool: sqldb.PgxPool(pool), p: pool}, nil
}

func (p pgTarget) TakeSessions() []int64 {
	pids := p.Postgres.TakeSessions()
	out := make([]int64, len(pids))
	for i, pid := range pids {
		out[i] = int64(pid)
	}
	return out
}

// pgPool is a pgx pool as a Pool.
type pgPool struct {
	sqldb.Pool
	p *pgxpool.Pool
}

func (p pgPool) Reset() { p.p.Reset() }

func (p pgPool) SQL() sqldb.Pool { return p.Pool }
