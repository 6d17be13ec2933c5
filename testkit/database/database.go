// Package database owns where a run's data lives: a server this process started (the engine's
// temporary one, handed in as a Server) or an existing one given by URL, the run's own schema inside it,
// the pools and dedicated connections that load, flushers and observers use, and what the
// report says about the server.
// With --postgres-url nothing outside the run's schema is ever read or written: every connection
// has search_path set to that schema alone, and the schema is dropped at the end unless kept.
package database

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/schema"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Server is a server this process started (testkit/servers/pgserver's): the target connects
// to its DSN and stops it at Close.
type Server interface {
	DSN() string
	Stop() error
}

// Options says which server to use and how.
type Options struct {
	// URL of an existing server; ignored with Server.
	URL string
	// Server is a server this process started, which the target owns from Open on: it is
	// stopped at Close, or when Open fails.
	Server Server
	// Schema is the run's schema; empty picks hotspot_<random>.
	Schema string
	// KeepSchema leaves the schema in place at Close (URL servers; a managed server goes away anyway).
	KeepSchema bool
	// ReuseSchema accepts a schema that already exists (several processes sharing one run).
	ReuseSchema bool
	// ConnectTimeout bounds reaching the server (default 10s).
	ConnectTimeout time.Duration
	// SQL holds the suite's own tables (*.sql at its root), created after the shared ones of
	// package schema; nil: the shared tables only.
	SQL fs.FS
}

// Target is an open database for a run.
type Target struct {
	opts      Options
	server    Server
	stopped   bool // server stopped (Close)
	dsn       string
	schema    string
	createdBy bool
	admin     *pgx.Conn

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

// adminApp is the application_name of the target's own connection.
const adminApp = "hotspotkit-admin"

// SchemaPrefix starts every schema name hotspotkit generates.
const SchemaPrefix = "hotspot_"

var schemaNameRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// ValidateSchemaName rejects names that are not plain lower-case identifiers.
func ValidateSchemaName(name string) error {
	if !schemaNameRe.MatchString(name) {
		return fmt.Errorf("schema name %q: use lower-case letters, digits and _ (at most 63)", name)
	}
	if name == "public" || strings.HasPrefix(name, "pg_") || name == "information_schema" {
		return fmt.Errorf("schema name %q is reserved; hotspotkit works only inside its own schema", name)
	}
	return nil
}

// Open starts or reaches the server, creates the run's schema and applies the SQL.
// On error nothing it started is left behind.
func Open(ctx context.Context, opts Options) (*Target, error) {
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.Schema == "" {
		opts.Schema = SchemaPrefix + randomHex(4)
	}
	t := &Target{opts: opts, schema: opts.Schema, server: opts.Server, dsn: opts.URL}
	if err := ValidateSchemaName(opts.Schema); err != nil {
		return nil, errors.Join(err, t.Close())
	}
	if t.server != nil {
		t.dsn = t.server.DSN()
	}
	if err := t.open(ctx); err != nil {
		return nil, errors.Join(err, t.Close())
	}
	return t, nil
}

func (t *Target) open(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(t.dsn)
	if err != nil {
		return fmt.Errorf("--postgres-url: %s", Redact(err.Error()))
	}
	cfg.ConnectTimeout = t.opts.ConnectTimeout
	cfg.RuntimeParams["application_name"] = adminApp
	cctx, cancel := context.WithTimeout(ctx, t.opts.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return fmt.Errorf("connecting to %s: %s", RedactURL(t.dsn), Redact(err.Error()))
	}
	t.admin = conn
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, t.schema).Scan(&exists); err != nil {
		return err
	}
	if exists && !t.opts.ReuseSchema {
		return fmt.Errorf("schema %q already exists (left by an interrupted run?): drop it (DROP SCHEMA %s CASCADE), or pick another --schema, or join it on purpose with --reuse-schema", t.schema, t.schema)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{t.schema}.Sanitize()); err != nil {
			return fmt.Errorf("creating schema %s: %w", t.schema, err)
		}
		t.createdBy = true
	}
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{t.schema}.Sanitize()); err != nil {
		return err
	}
	if t.server != nil {
		// Diagnostics only; the run does not depend on it.
		_, _ = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public")
		_, _ = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{t.schema}.Sanitize())
	}
	return schema.Apply(ctx, conn, t.opts.SQL)
}

// Schema is the run's schema name.
func (t *Target) Schema() string { return t.schema }

// Managed reports whether the server was started by this process.
func (t *Target) Managed() bool { return t.server != nil }

// DSN is the connection string (with password); never print it, use RedactedURL.
func (t *Target) DSN() string { return t.dsn }

// RedactedURL is the server's URL with the password replaced.
func (t *Target) RedactedURL() string { return RedactURL(t.dsn) }

// Admin is the target's own connection, for setup, resets and verification (never the load's).
func (t *Target) Admin() *pgx.Conn { return t.admin }

// Dialect is the SQL the target's server speaks: PostgreSQL's (its connections and pools are
// pgx's; the kit's suites and queues see them as package sqldb's handles).
func (t *Target) Dialect() sqldb.Dialect { return sqldb.Postgres }

// DialFunc opens a connection to the server (pgx's ConnConfig.DialFunc).
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Route sends the connections the target opens for the service from now on (Connect's, and
// the pools of NewPool) through dial, which carries them to the server (a delaying proxy's,
// testkit/servers/netdelay); nil connects them directly again. The admin connection,
// ConnectDirect's and the pools of PoolOptions.Direct keep reaching the server directly: they
// observe the machine, they are not the service.
func (t *Target) Route(dial DialFunc) {
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
func (t *Target) ServeThrough(dsn string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pooler = dsn
}

// Pooled reports whether the service's connections go through a pooler (ServeThrough).
func (t *Target) Pooled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pooler != ""
}

// ConnConfig returns a connection config for this run: search_path = the run's schema only,
// through the Route when there is one (and the pooler, ServeThrough).
func (t *Target) ConnConfig(appName string) (*pgx.ConnConfig, error) {
	return t.connConfig(appName, false)
}

func (t *Target) connConfig(appName string, direct bool) (*pgx.ConnConfig, error) {
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
		cfg.RuntimeParams["search_path"] = t.schema
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
func (t *Target) Connect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.connect(ctx, appName, false)
}

// ConnectDirect opens a dedicated connection that reaches the server directly whatever the
// Route (the monitor's, a fault injector's, a probe of the direct path).
func (t *Target) ConnectDirect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.connect(ctx, appName, true)
}

// ConnectVia opens a dedicated connection to the server itself, never through the pooler or
// the Route, carried by dial (nil: directly): a probe of one hop of a pooled path.
func (t *Target) ConnectVia(ctx context.Context, appName string, dial DialFunc) (*pgx.Conn, error) {
	return t.connectWith(ctx, appName, true, dial)
}

func (t *Target) connect(ctx context.Context, appName string, direct bool) (*pgx.Conn, error) {
	return t.connectWith(ctx, appName, direct, nil)
}

func (t *Target) connectWith(ctx context.Context, appName string, direct bool, dial DialFunc) (*pgx.Conn, error) {
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

func (t *Target) track(conn *pgx.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sessions = append(t.sessions, conn.PgConn().PID())
}

// TakeSessions returns the backend PIDs of the connections opened (by Connect or a pool of
// NewPool) since the last call, and forgets them. The run's database figures wait for these
// backends to exit: only then are their statistics flushed.
func (t *Target) TakeSessions() []uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessions
	t.sessions = nil
	return s
}

// PoolOptions shapes a pool.
type PoolOptions struct {
	MaxConns int32
	// MinConns is the pool's minimum (pgxpool's MinConns): open, idle or not.
	MinConns int32
	// MaxConnLifetime closes a connection once it has been open this long, plus up to
	// LifetimeJitter of it at random (pgxpool's MaxConnLifetime and MaxConnLifetimeJitter);
	// MaxConnIdle closes one idle this long, not below MinConns (MaxConnIdleTime). 0: never.
	MaxConnLifetime, MaxConnIdle time.Duration
	// Connected, when set, is called for each connection the pool opens, once it is set up.
	Connected func()
	AppName   string
	// Settings are server settings for every session (e.g. statement_timeout).
	Settings map[string]string
	// Direct reaches the server directly whatever the Route (the calibration's pool).
	Direct bool
	// Tracer, when set, traces every connection's statements (pgx.ConnConfig.Tracer).
	Tracer pgx.QueryTracer
}

// NewPool opens a pool of at most MaxConns connections for this run.
func (t *Target) NewPool(ctx context.Context, o PoolOptions) (*pgxpool.Pool, error) {
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

// LifetimeJitter is the share of PoolOptions.MaxConnLifetime by which each connection's
// lifetime is longer, drawn at random (pgxpool's MaxConnLifetimeJitter): connections opened
// together do not all close together, as a service's pool spreads its reconnections.
const LifetimeJitter = 0.1

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
func (t *Target) Pings() int64 { return t.pings.Load() }

// seatKey keys a pooled connection's seat in its pgconn CustomData; openedKey, until the pool
// first hands it out, when it was open.
const (
	seatKey   = "hotspotkit.seat"
	openedKey = "hotspotkit.opened"
)

// Seat is the seat in its pool of the connection h is or runs on (a *pgx.Conn, a
// *pgxpool.Conn, a pgx.Tx, or a package sqldb handle over one of them): the lowest seat free
// when it connected, given back when it closes, so the pool's open connections always hold
// distinct seats, 0..MaxConns-1, and a replacement (after a fault killed a session) takes the
// seat its predecessor left — or, if it connects before the pool has closed its predecessor,
// the next one past them until it is itself replaced. -1 for a connection no pool of NewPool
// opened, and for any other h.
func Seat(h any) int {
	if p, ok := sqldb.AsPgx(h); ok {
		h = p
	}
	var conn *pgx.Conn
	switch p := h.(type) {
	case pgx.Tx:
		conn = p.Conn()
	case *pgxpool.Conn:
		conn = p.Conn()
	case *pgx.Conn:
		conn = p
	default:
		return -1
	}
	if i, ok := conn.PgConn().CustomData()[seatKey].(int); ok {
		return i
	}
	return -1
}

// sessionSeats hands out the lowest free seat.
type sessionSeats struct {
	mu    sync.Mutex
	taken []bool
}

func (s *sessionSeats) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range s.taken {
		if !t {
			s.taken[i] = true
			return i
		}
	}
	s.taken = append(s.taken, true)
	return len(s.taken) - 1
}

func (s *sessionSeats) free(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= 0 && i < len(s.taken) {
		s.taken[i] = false
	}
}

// EnsureAdmin reconnects the admin connection when it was lost (the server restarted, or
// a fault terminated it).
func (t *Target) EnsureAdmin(ctx context.Context) error {
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
func (t *Target) Reset(ctx context.Context) error { return schema.Reset(ctx, t.admin) }

// ServerInfo is what the report records about the server.
type ServerInfo struct {
	Version  string
	Settings map[string]string
}

// Info reads the server version and the settings that shape the numbers.
func (t *Target) Info(ctx context.Context) (ServerInfo, error) {
	info := ServerInfo{Settings: map[string]string{}}
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
func (t *Target) Close() error { return t.CloseWithin(30 * time.Second) }

// CloseWithin is Close with the schema's drop and the admin connection's goodbye bounded by d:
// a server that no longer answers leaves the schema behind, and the error says how to drop it.
func (t *Target) CloseWithin(d time.Duration) error {
	var err error
	if t.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		if t.server == nil && t.createdBy && !t.opts.KeepSchema {
			if _, e := t.admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{t.schema}.Sanitize()+" CASCADE"); e != nil {
				err = errors.Join(err, fmt.Errorf("dropping schema %s (left on the server: DROP SCHEMA %s CASCADE): %w",
					t.schema, pgx.Identifier{t.schema}.Sanitize(), e))
			}
		}
		_ = t.admin.Close(ctx)
		cancel()
		t.admin = nil
	}
	if t.server != nil && !t.stopped {
		t.stopped = true
		err = errors.Join(err, t.server.Stop())
	}
	return err
}

var passwordInText = regexp.MustCompile(`(?i)(password=)\S+|(://[^:/@\s]*:)[^@\s]*@`)

// Redact removes passwords from a DSN, URL or error message.
func Redact(s string) string {
	return passwordInText.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "password=") {
			return "password=REDACTED"
		}
		i := strings.LastIndex(m, ":")
		return m[:i+1] + "REDACTED@"
	})
}

// RedactURL returns the URL with its password replaced (or the redacted text if it is not a URL).
func RedactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return Redact(dsn)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
