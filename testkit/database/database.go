// Package database owns where a run's data lives, whichever kind of server holds it: a server
// this process started (the engine's temporary PostgreSQL or MariaDB, handed in as a Server)
// or an existing one given by URL (--postgres-url, --mysql-url); the run's own place inside it
// (a schema on PostgreSQL, a database on MySQL and MariaDB), created with the kit's tables for
// the server's dialect and dropped at the end unless kept; the pools and dedicated connections
// that load, flushers and observers use, as package sqldb's handles; the sessions they opened
// (for the run's figures and the faults that end them); and what the report says about the
// server.
//
// Target is that, as the engine, a run and a suite use it; Postgres (pgx) and MySQL
// (database/sql with go-sql-driver/mysql) are its two kinds, each opened by its own Open.
// PostgreSQL's observers that need pgx itself (the monitor's pg_locks, pg_stat_statements,
// the pooler, COPY) take the *Postgres (AsPostgres); MySQL's take the *MySQL's driver
// configuration.
//
// On a server given by URL nothing outside the run's place is ever read or written: on
// PostgreSQL every connection has search_path set to the run's schema alone; on MySQL every
// connection's default database is the run's own, and the kit's statements name no other.
package database

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
)

// Target is an open database for a run, of either kind.
type Target interface {
	// Dialect is the SQL the server speaks.
	Dialect() sqldb.Dialect
	// Schema is the run's place on the server: its schema (PostgreSQL) or database (MySQL).
	Schema() string
	// Managed reports whether the server was started by this process.
	Managed() bool
	// Created reports whether this process created the run's schema; false when it joined an
	// existing one (ReuseSchema), as the second and later processes of a split run do.
	Created() bool
	// RedactedURL is the server's URL with the password replaced.
	RedactedURL() string
	// Admin is the target's own connection, for setup, resets and verification (never the
	// load's). The target owns it: a caller does not close it.
	Admin() sqldb.Conn
	// EnsureAdmin reconnects the admin connection when it was lost (the server restarted, or
	// a fault ended it).
	EnsureAdmin(ctx context.Context) error
	// Reset empties every table of the run's schema.
	Reset(ctx context.Context) error
	// Connect opens a dedicated connection of the service (a flusher's), through the Route.
	Connect(ctx context.Context, appName string) (sqldb.Conn, error)
	// ConnectDirect opens a dedicated connection that reaches the server directly whatever
	// the Route (an observer's, a fault injector's).
	ConnectDirect(ctx context.Context, appName string) (sqldb.Conn, error)
	// NewPool opens a pool of at most MaxConns connections for this run.
	NewPool(ctx context.Context, o PoolOptions) (Pool, error)
	// TakeSessions returns the server's ids of the sessions opened (by Connect or a pool of
	// NewPool) since the last call, and forgets them: a PostgreSQL backend's PID, a MySQL
	// connection id.
	TakeSessions() []int64
	// Terminate ends, from a connection of the target's own, every live session that a
	// connection of the target named appName in apps opened (a fault's work), and says how many.
	Terminate(ctx context.Context, apps ...string) (int, error)
	// TerminateSessionOf ends the session h (a handle of this target's) runs on, from a
	// connection of the target's own, and waits until it is gone; it says which it was.
	TerminateSessionOf(ctx context.Context, h any) (string, error)
	// Pings is how many liveness pings the pools of NewPool have sent so far (each a
	// transaction of the server's that is not the run's work).
	Pings() int64
	// Route sends the connections the target opens for the service from now on (Connect's,
	// and the pools of NewPool) through dial, which carries them to the server (a delaying
	// proxy's, testkit/servers/netdelay); nil connects them directly again. The admin
	// connection, ConnectDirect's and the pools of PoolOptions.Direct keep reaching the server
	// directly: they observe the machine, they are not the service.
	Route(dial DialFunc)
	// Addr is the server's TCP address (host:port), for a proxy in front of it; ErrNeedsTCP
	// when the server is reached over a Unix socket.
	Addr() (string, error)
	// CutSockets closes, at the socket, every connection the target opened for the service or
	// its observers (not the admin connection), as a load balancer that drops the flows
	// would; until RestoreSockets, new ones fail at once. It returns how many it cut.
	CutSockets() int
	RestoreSockets()
	// Info reads the server's kind, version and the settings that shape the numbers.
	Info(ctx context.Context) (ServerInfo, error)
	// Close drops the schema (unless kept, or not created by this process), closes the admin
	// connection and stops a managed server. It is safe to call more than once. CloseWithin
	// bounds the drop and the goodbye by d: a server that no longer answers leaves the schema
	// behind, and the error says how to drop it.
	Close() error
	CloseWithin(d time.Duration) error
}

// Pool is a pool of the run's connections.
type Pool interface {
	sqldb.Pool
	// SQL is the pool as package sqldb's adapter hands it out, whose escape hatches (AsPgx,
	// AsSQL) reach the driver's pool: what a run's suite, its queue and the monitor are given.
	SQL() sqldb.Pool
	// Reset closes every connection (one lent out once it is given back) and stays usable:
	// their sessions end, so that the run's figures are read once they have.
	Reset()
}

// Server is a server this process started (testkit/servers/pgserver's, mariadbserver's): the
// target connects to its DSN and stops it at Close.
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
	// Schema is the run's schema (its database on MySQL); empty picks hotspot_<random>.
	Schema string
	// KeepSchema leaves the schema in place at Close (URL servers; a managed server goes away anyway).
	KeepSchema bool
	// ReuseSchema accepts a schema that already exists (several processes sharing one run).
	ReuseSchema bool
	// ConnectTimeout bounds reaching the server (DefaultConnectTimeout when 0).
	ConnectTimeout time.Duration
	// SQL holds the suite's own tables, created after the shared ones of package schema: its
	// *.sql files on PostgreSQL, its mysql/*.sql files on MySQL; nil: the shared tables only.
	SQL fs.FS
}

// withDefaults fills in Options' defaults and checks the schema's name.
func (o Options) withDefaults() (Options, error) {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Schema == "" {
		o.Schema = SchemaPrefix + randomHex(4)
	}
	return o, ValidateSchemaName(o.Schema)
}

// owned is what a target of either kind owns: its options, the temporary server it stops, and
// whether it created the run's schema, which it drops.
type owned struct {
	opts      Options
	server    Server
	stopped   bool
	createdBy bool
}

// Managed reports whether the server was started by this process.
func (o *owned) Managed() bool { return o.server != nil }

// Created reports whether this process created the run's schema; false when it joined an
// existing one (ReuseSchema), as the second and later processes of a split run do.
func (o *owned) Created() bool { return o.createdBy }

// Schema is the run's schema (its database on MySQL).
func (o *owned) Schema() string { return o.opts.Schema }

// open is how both kinds' Open begin: opts with their defaults and checked, the server's DSN
// or the URL given, and the kind's own open; on any error Close leaves nothing behind.
func open[T interface{ Close() error }](ctx context.Context, opts Options, build func(o owned, url string) T, openIt func(T, context.Context) error) (T, error) {
	opts, err := opts.withDefaults()
	url := opts.URL
	if opts.Server != nil {
		url = opts.Server.DSN()
	}
	t := build(owned{opts: opts, server: opts.Server}, url)
	if err == nil {
		err = openIt(t, ctx)
	}
	if err != nil {
		var none T
		return none, errors.Join(err, t.Close())
	}
	return t, nil
}

// close is how both kinds' CloseWithin end, d bounding the drop and the goodbye: when admin,
// drop drops the run's schema (unless kept, not created by this process, or on a temporary
// server, which goes away anyway; its error says how to drop it by hand), bye closes the admin
// connection; then a temporary server is stopped, once.
func (o *owned) close(d time.Duration, admin bool, drop func(context.Context) error, bye func(context.Context)) error {
	var err error
	if admin {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		if o.server == nil && o.createdBy && !o.opts.KeepSchema {
			err = drop(ctx)
		}
		bye(ctx)
		cancel()
	}
	if o.server != nil && !o.stopped {
		o.stopped = true
		err = errors.Join(err, o.server.Stop())
	}
	return err
}

// PoolOptions shapes a pool.
type PoolOptions struct {
	MaxConns int32
	// MinConns is the pool's minimum (pgxpool's MinConns): open, idle or not. PostgreSQL
	// only (database/sql keeps no minimum).
	MinConns int32
	// MaxConnLifetime closes a connection once it has been open this long, plus up to
	// LifetimeJitter of it at random (pgxpool's MaxConnLifetime and MaxConnLifetimeJitter);
	// MaxConnIdle closes one idle this long, not below MinConns (MaxConnIdleTime). 0: never.
	MaxConnLifetime, MaxConnIdle time.Duration
	// Connected, when set, is called for each connection the pool opens, once it is set up.
	Connected func()
	AppName   string
	// Settings are server settings for every session (statement_timeout; on MySQL session
	// variables, each value a SQL literal).
	Settings map[string]string
	// Direct reaches the server directly whatever the Route (the calibration's pool).
	Direct bool
	// Tracer, when set, traces every connection's statements (pgx.ConnConfig.Tracer); on
	// PostgreSQL only: MySQL's pools time no statement on the client.
	Tracer pgx.QueryTracer
	// FirstUse, when set, is called with the context of the first statement or transaction
	// each connection of a MySQL pool runs (on PostgreSQL the Tracer sees it: package stmttime
	// marks that request as one on a cold session).
	FirstUse func(ctx context.Context)
}

// LifetimeJitter is the share of PoolOptions.MaxConnLifetime by which each connection's
// lifetime is longer, drawn at random (pgxpool's MaxConnLifetimeJitter): connections opened
// together do not all close together, as a service's pool spreads its reconnections.
const LifetimeJitter = 0.1

// ServerInfo is what the report records about the server.
type ServerInfo struct {
	// Kind is "postgres", "mariadb" or "mysql".
	Kind    string
	Version string
	// Settings are the server's settings that shape the numbers, by name.
	Settings map[string]string
}

// DefaultConnectTimeout bounds reaching a server when Options give no ConnectTimeout.
const DefaultConnectTimeout = 10 * time.Second

// KindAt reaches the server of a URL given by the user and says what it is (KindPostgres,
// KindMariaDB or KindMySQL; mysql says which protocol it speaks: --mysql-url's or
// --postgres-url's), within timeout, and leaves: nothing on the server is read or written.
// It is for an invocation that names its servers before it opens any (a ladder over the
// kinds). The error says why it did not answer, the password redacted.
func KindAt(ctx context.Context, url string, mysql bool, timeout time.Duration) (string, error) {
	if !mysql {
		conn, err := dialPostgresAdmin(ctx, url, timeout)
		if err != nil {
			return "", err
		}
		return KindPostgres, conn.Close(ctx)
	}
	cfg, err := ParseMySQLURL(url)
	if err != nil {
		return "", fmt.Errorf("--mysql-url: %w", err)
	}
	conn, version, err := dialMySQLAdmin(ctx, cfg, url, timeout)
	if err != nil {
		return "", err
	}
	return mysqlKind(version), conn.Close(ctx)
}

// The kinds of server (ServerInfo.Kind).
const (
	KindPostgres = "postgres"
	KindMariaDB  = "mariadb"
	KindMySQL    = "mysql"
)

// DialFunc opens a connection to the server (pgx's ConnConfig.DialFunc, go-sql-driver's
// Config.DialFunc).
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// ErrNeedsTCP refuses a proxy on a server reached over a Unix socket: bad input.
var ErrNeedsTCP = fmt.Errorf("--db-rtt, --rtt-levels and the network faults on pg need the database over TCP, not a Unix socket")

// adminApp is the application_name (program_name on MySQL) of the target's own connection.
const adminApp = "hotspotkit-admin"

// SchemaPrefix starts every schema name hotspotkit generates.
const SchemaPrefix = "hotspot_"

var schemaNameRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// reservedSchemas are the servers' own: PostgreSQL's public and catalogs, MySQL's system
// databases.
var reservedSchemas = []string{"public", "information_schema", "mysql", "performance_schema", "sys"}

// ValidateSchemaName rejects names that are not plain lower-case identifiers, or that name a
// server's own schema.
func ValidateSchemaName(name string) error {
	if !schemaNameRe.MatchString(name) {
		return fmt.Errorf("schema name %q: use lower-case letters, digits and _ (at most 63)", name)
	}
	for _, r := range reservedSchemas {
		if name == r {
			return fmt.Errorf("schema name %q is reserved; hotspotkit works only inside its own schema", name)
		}
	}
	if strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("schema name %q is reserved; hotspotkit works only inside its own schema", name)
	}
	return nil
}

// Seat is the seat in its pool of the connection h is or runs on (a *pgx.Conn, a
// *pgxpool.Conn, a pgx.Tx, or a package sqldb handle over one of them or over a MySQL pool's
// connection): the lowest seat free when it connected, given back when it closes, so the
// pool's open connections always hold distinct seats, 0..MaxConns-1, and a replacement (after
// a fault killed a session) takes the seat its predecessor left — or, if it connects before
// the pool has closed its predecessor, the next one past them until it is itself replaced. -1
// for a connection no pool of NewPool opened, for a MySQL transaction a pool began on a
// connection of its choosing (not on one lent out by Acquire), and for any other h.
func Seat(h any) int {
	if c, ok := sqldb.SQLConn(h); ok {
		return mysqlSeat(c)
	}
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

// mysqlSeat is the seat of the session under c (a session of a MySQL pool of NewPool's).
func mysqlSeat(c *sql.Conn) int {
	seat := -1
	_ = c.Raw(func(dc any) error {
		if s, ok := dc.(*session); ok {
			seat = s.seat
		}
		return nil
	})
	return seat
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

var passwordInText = regexp.MustCompile(`(?i)(password=)\S+|(://[^:/@\s]*:)[^@\s]*@`)

// Redact removes passwords from a DSN, URL or error message: a URL's (postgres://,
// mysql://), a key=value DSN's, and go-sql-driver/mysql's DSN's (user:password@tcp(...)/db).
func Redact(s string) string {
	s = passwordInText.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "password=") {
			return "password=REDACTED"
		}
		i := strings.LastIndex(m, ":")
		return m[:i+1] + "REDACTED@"
	})
	if strings.Contains(s, "://") {
		return s // a URL's password is out; its user:REDACTED@ is no DSN's to redact again
	}
	return mariadbserver.RedactDSN(s)
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
