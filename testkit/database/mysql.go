package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/schema"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// MySQL is a run's MySQL or MariaDB server: the run's own database on it, and
// go-sql-driver/mysql's connections and pools (package sqldb's MySQL handles, with the kit's
// driver settings: sqldb.MySQLConnector).
//
// Every connection it opens is a session it keeps track of (session): its connection id, read
// once as it opens; its seat in its pool (Seat, for --slot-pick session); its end of life (a
// pool's lifetime, with pgxpool's jitter: database/sql has none); whether it is the service's
// or an observer's. So the faults end the service's sessions by id (KILL CONNECTION), not by a
// name only performance_schema would show, and the lock view keeps the service's sessions by
// id (ServiceSessions) whether performance_schema is on or not.
//
// The observers' connections (ConnectDirect's, ObserverConnector's) ask performance_schema not
// to instrument them, where the account may (UPDATE on performance_schema.threads): their
// statements are then not counted as the run's digests or its tables' reads.
type MySQL struct {
	owned
	cfg     *mysql.Config // the server and the account; DBName is the run's database
	url     string        // as given (redact before printing), or the managed server's DSN
	admin   sqldb.Conn
	version string

	mu sync.Mutex
	// route is how the service's connections reach the server (Route); nil: directly.
	route DialFunc
	// opened are the sessions opened since TakeSessions; live every session open now.
	opened []int64
	live   map[*session]struct{}
	// sockets are the live sockets of the connections opened for the service (CutSockets).
	sockets sockets
}

// OpenMySQL starts or reaches a MySQL or MariaDB server, creates the run's database and
// applies the SQL of the MySQL dialect. On error nothing it started is left behind.
func OpenMySQL(ctx context.Context, opts Options) (*MySQL, error) {
	return open(ctx, opts, func(o owned, url string) *MySQL { return &MySQL{owned: o, url: url, live: map[*session]struct{}{}} }, (*MySQL).open)
}

// ParseMySQLURL reads mysql://user:password@host[:port]/[database][?params] (mariadb:// too):
// the server, the account and the driver's parameters (go-sql-driver/mysql's DSN parameters:
// tls, timeouts, ...; socket=PATH reaches it over a Unix socket). The database in the path, if
// any, is only where the connection starts: a run works in a database of its own. A managed
// server's DSN (go-sql-driver's form) is read as well.
func ParseMySQLURL(s string) (*mysql.Config, error) {
	if !strings.Contains(s, "://") {
		cfg, err := mysql.ParseDSN(s)
		if err != nil {
			return nil, errors.New(Redact(err.Error()))
		}
		return cfg, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %s", Redact(err.Error()))
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("%s: want mysql://user:password@host:port/", RedactURL(s))
	}
	q := u.Query()
	sock := q.Get("socket")
	q.Del("socket")
	// The parameters through the driver's own parser (each checked there), escaped.
	cfg, err := mysql.ParseDSN("/?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("%s: %s", RedactURL(s), Redact(err.Error()))
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	switch {
	case sock != "":
		cfg.Net, cfg.Addr = "unix", sock
	case u.Hostname() == "":
		return nil, fmt.Errorf("%s: no host", RedactURL(s))
	default:
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(u.Hostname(), port)
	}
	return cfg, nil
}

func (t *MySQL) open(ctx context.Context) error {
	cfg, err := ParseMySQLURL(t.url)
	if err != nil {
		return fmt.Errorf("--mysql-url: %w", err)
	}
	t.cfg = cfg
	conn, version, err := dialMySQLAdmin(ctx, cfg, t.url, t.opts.ConnectTimeout)
	if err != nil {
		return err
	}
	t.admin, t.version = conn, version
	name := t.opts.Schema
	var n int
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = $1", name).Scan(&n); err != nil {
		return err
	}
	ident := sqldb.MySQL.QuoteIdent(name)
	switch {
	case n > 0 && t.server != nil:
		t.createdBy = true // the managed server made it at our request (its Config.Database)
	case n > 0 && !t.opts.ReuseSchema:
		return fmt.Errorf("database %q already exists (left by an interrupted run?): drop it (DROP DATABASE %s), or pick another --schema, or join it on purpose with --reuse-schema", name, ident)
	case n == 0:
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident+" CHARACTER SET utf8mb4"); err != nil {
			return fmt.Errorf("creating database %s: %w", name, err)
		}
		t.createdBy = true
	}
	if _, err := conn.Exec(ctx, "USE "+ident); err != nil {
		return err
	}
	t.cfg.DBName = name
	return schema.Apply(ctx, conn, t.opts.SQL)
}

// dialMySQLAdmin opens the admin connection to the server of cfg (url as given, for the
// error), outside any database, and reads the server's @@version.
func dialMySQLAdmin(ctx context.Context, cfg *mysql.Config, url string, timeout time.Duration) (sqldb.Conn, string, error) {
	cfg.Timeout = timeout
	boot := cfg.Clone()
	boot.DBName = ""
	boot.ConnectionAttributes = "program_name:" + adminApp
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := sqldb.ConnectMySQL(cctx, sqldb.MySQLOptions{Config: boot, Session: sessionBase})
	if err != nil {
		why := Redact(err.Error())
		if cctx.Err() != nil && ctx.Err() == nil { // the driver says only "invalid connection"
			why = fmt.Sprintf("no answer within %s (%s)", timeout, why)
		}
		return nil, "", fmt.Errorf("connecting to %s: %s", RedactURL(url), why)
	}
	var version string
	if err := conn.QueryRow(ctx, "SELECT @@version").Scan(&version); err != nil {
		conn.Close(context.Background())
		return nil, "", err
	}
	return conn, version, nil
}

// sessionBase are the session variables of every connection: timestamps in UTC (the kit's
// DATETIME(6) columns hold UTC, as PostgreSQL's timestamptz do).
var sessionBase = map[string]string{"time_zone": "'+00:00'"}

// Dialect is MySQL's.
func (t *MySQL) Dialect() sqldb.Dialect { return sqldb.MySQL }

// RedactedURL is the server's URL (or a managed server's DSN) with the password replaced.
func (t *MySQL) RedactedURL() string { return RedactURL(t.url) }

// Version is the server's @@version ("10.11.19-MariaDB-0+deb12u1", "8.0.36").
func (t *MySQL) Version() string { return t.version }

// Kind is KindMariaDB when the server says it is MariaDB, else KindMySQL.
func (t *MySQL) Kind() string { return mysqlKind(t.version) }

// mysqlKind is the kind of a MySQL or MariaDB server of @@version v.
func mysqlKind(v string) string {
	if sqldb.IsMariaDB(v) {
		return KindMariaDB
	}
	return KindMySQL
}

// Admin is the target's own connection.
func (t *MySQL) Admin() sqldb.Conn { return t.admin }

// Route is Target.Route.
func (t *MySQL) Route(dial DialFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.route = dial
}

// Addr is the server's TCP address (ErrNeedsTCP over a Unix socket).
func (t *MySQL) Addr() (string, error) {
	if t.cfg.Net != "tcp" {
		return "", ErrNeedsTCP
	}
	return t.cfg.Addr, nil
}

// DriverConfig is the driver's configuration of a connection of the run named appName (its
// program_name connection attribute), in the run's database, reaching the server directly:
// for an observer that opens its own (Observer). Each call returns a new one. Never print
// its password.
func (t *MySQL) DriverConfig(appName string) *mysql.Config {
	c := t.cfg.Clone()
	c.ConnectionAttributes = "program_name:" + appName
	return c
}

// hasTransactionIsolation says whether the server names the isolation level
// transaction_isolation (MySQL, MariaDB 11.1 and later) rather than tx_isolation alone
// (MariaDB before 11.1): a setting by the first name reaches the second on such a server.
func (t *MySQL) hasTransactionIsolation() bool {
	ok, err := sqldb.MySQLAtLeast(t.version, [3]int{}, [3]int{11, 1, 0})
	return ok || err != nil
}

// connOptions are sqldb's options for a connection named appName: the Route unless direct.
func (t *MySQL) connOptions(appName string, direct bool, settings map[string]string) sqldb.MySQLOptions {
	t.mu.Lock()
	route := t.route
	t.mu.Unlock()
	if direct || route == nil {
		route = (&net.Dialer{}).DialContext
	}
	session := map[string]string{}
	for k, v := range sessionBase {
		session[k] = v
	}
	for k, v := range settings {
		if k == "transaction_isolation" && !t.hasTransactionIsolation() {
			k = "tx_isolation"
		}
		session[k] = v
	}
	return sqldb.MySQLOptions{Config: t.DriverConfig(appName), Dial: t.sockets.dial(route), Session: session}
}

// connector is a connector of sessions the target keeps track of.
func (t *MySQL) connector(appName string, direct bool, settings map[string]string, pool *poolSessions) (driver.Connector, error) {
	c, err := sqldb.MySQLConnector(t.connOptions(appName, direct, settings))
	if err != nil {
		return nil, err
	}
	return &tracking{Connector: c, t: t, app: appName, observer: direct, pool: pool}, nil
}

// Connect opens a dedicated connection of the service, through the Route.
func (t *MySQL) Connect(ctx context.Context, appName string) (sqldb.Conn, error) {
	return t.connect(ctx, appName, false)
}

// ConnectDirect opens a dedicated connection of an observer, directly.
func (t *MySQL) ConnectDirect(ctx context.Context, appName string) (sqldb.Conn, error) {
	return t.connect(ctx, appName, true)
}

func (t *MySQL) connect(ctx context.Context, appName string, direct bool) (sqldb.Conn, error) {
	c, err := t.connector(appName, direct, nil, nil)
	if err != nil {
		return nil, err
	}
	conn, err := sqldb.ConnectMySQLOn(ctx, c)
	if err != nil {
		return nil, errors.New(Redact(err.Error()))
	}
	return conn, nil
}

// ObserverConnector is a connector for an observer's own connections (the lock view's):
// directly to the server, in the run's database, its sessions left out of the service's and,
// where the account may, of performance_schema's instruments.
func (t *MySQL) ObserverConnector(appName string) (driver.Connector, error) {
	return t.connector(appName, true, nil, nil)
}

// NewPool opens a pool of at most MaxConns connections (MinConns is not read: database/sql
// keeps no minimum).
func (t *MySQL) NewPool(_ context.Context, o PoolOptions) (Pool, error) {
	ps := &poolSessions{lifetime: o.MaxConnLifetime, connected: o.Connected, firstUse: o.FirstUse}
	c, err := t.connector(o.AppName, o.Direct, o.Settings, ps)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(int(o.MaxConns))
	db.SetMaxIdleConns(int(o.MaxConns))
	db.SetConnMaxIdleTime(o.MaxConnIdle) // 0: never
	return mysqlPool{Pool: sqldb.MySQLDB(db), db: db, idle: int(o.MaxConns)}, nil
}

// mysqlPool is a database/sql pool as a Pool.
type mysqlPool struct {
	sqldb.Pool
	db   *sql.DB
	idle int
}

func (p mysqlPool) Reset() {
	p.db.SetMaxIdleConns(-1) // closes the idle ones, and each given back from now on
	p.db.SetMaxIdleConns(p.idle)
}

func (p mysqlPool) SQL() sqldb.Pool { return p.Pool }

// TakeSessions returns the connection ids of the sessions opened since the last call.
func (t *MySQL) TakeSessions() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.opened
	t.opened = nil
	return s
}

// ServiceSessions are the connection ids of the sessions open now that take the service's
// path (the load's, the flushers', a suite's workers'; not an observer's), but those named one
// of except: the ones the lock view keeps.
func (t *MySQL) ServiceSessions(except ...string) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []int64
	for s := range t.live {
		if !s.observer && !slices.Contains(except, s.app) {
			ids = append(ids, s.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Terminate ends (KILL CONNECTION) the live sessions the target opened under one of apps.
func (t *MySQL) Terminate(ctx context.Context, apps ...string) (int, error) {
	t.mu.Lock()
	var ids []int64
	for s := range t.live {
		if slices.Contains(apps, s.app) {
			ids = append(ids, s.id)
		}
	}
	t.mu.Unlock()
	conn, err := t.ConnectDirect(ctx, "hotspotkit-faults")
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	n := 0
	for _, id := range ids {
		if err := kill(ctx, conn, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// errUnknownThread is ER_NO_SUCH_THREAD: the session ended before the KILL reached it.
const errUnknownThread = 1094

// kill ends session id; one already gone is no error.
func kill(ctx context.Context, conn sqldb.Querier, id int64) error {
	_, err := conn.Exec(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10))
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == errUnknownThread {
		return nil
	}
	return err
}

// TerminateSessionOf ends (KILL CONNECTION) the session h runs on and waits, up to 5 s, until
// the server no longer lists it.
func (t *MySQL) TerminateSessionOf(ctx context.Context, h any) (string, error) {
	c, ok := sqldb.SQLConn(h)
	if !ok {
		return "", fmt.Errorf("not a MySQL session of a connection the target lent: %T", h)
	}
	id := int64(-1)
	_ = c.Raw(func(dc any) error {
		if s, ok := dc.(*session); ok {
			id = s.id
		}
		return nil
	})
	if id < 0 {
		return "", errors.New("the session was not opened by this run's target")
	}
	conn, err := t.ConnectDirect(ctx, "hotspotkit-faults")
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := kill(ctx, conn, id); err != nil {
		return "", fmt.Errorf("killing session %d: %w", id, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		var n int
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = $1", id).Scan(&n); err != nil {
			return "", err
		}
		if n == 0 {
			return fmt.Sprintf("session %d", id), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("session %d still listed 5 s after KILL CONNECTION", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Pings is 0: database/sql pings no connection it hands out (the driver checks an idle
// connection's socket, with no round trip).
func (t *MySQL) Pings() int64 { return 0 }

// CutSockets is Target.CutSockets.
func (t *MySQL) CutSockets() int { return t.sockets.cutAll() }

// RestoreSockets is Target.RestoreSockets.
func (t *MySQL) RestoreSockets() { t.sockets.restore() }

// EnsureAdmin reconnects the admin connection when it was lost.
func (t *MySQL) EnsureAdmin(ctx context.Context) error {
	if t.admin != nil && !t.admin.IsClosed() {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var one int
		err := t.admin.QueryRow(pctx, "SELECT 1").Scan(&one)
		cancel()
		if err == nil {
			return nil
		}
		_ = t.admin.Close(ctx)
	}
	cfg := t.cfg.Clone()
	cfg.ConnectionAttributes = "program_name:" + adminApp
	conn, err := sqldb.ConnectMySQL(ctx, sqldb.MySQLOptions{Config: cfg, Session: sessionBase})
	if err != nil {
		return fmt.Errorf("reconnecting: %s", Redact(err.Error()))
	}
	t.admin = conn
	return nil
}

// Reset empties every table of the run's database.
func (t *MySQL) Reset(ctx context.Context) error { return schema.Reset(ctx, t.admin) }

// mysqlSettings are the server variables that shape the numbers, as the report records them.
var mysqlSettings = []string{"innodb_flush_log_at_trx_commit", "innodb_deadlock_detect", "innodb_lock_wait_timeout",
	"sync_binlog", "log_bin", "max_connections", "innodb_buffer_pool_size", "transaction_isolation",
	"innodb_doublewrite", "performance_schema", "max_statement_time"}

// Info reads the server's kind, version and the settings of mysqlSettings it has
// (transaction_isolation is tx_isolation before MariaDB 11.1).
func (t *MySQL) Info(ctx context.Context) (ServerInfo, error) {
	info := ServerInfo{Kind: t.Kind(), Version: t.version, Settings: map[string]string{}}
	names := append(slices.Clone(mysqlSettings), "tx_isolation")
	args := make([]any, len(names))
	marks := make([]string, len(names))
	for i, n := range names {
		args[i], marks[i] = n, "$"+strconv.Itoa(i+1)
	}
	rows, err := t.admin.Query(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("+strings.Join(marks, ", ")+")", args...)
	if err != nil {
		return info, err
	}
	var name, value string
	err = sqldb.ForEachRow(rows, []any{&name, &value}, func() error {
		info.Settings[strings.ToLower(name)] = value
		return nil
	})
	if v, ok := info.Settings["tx_isolation"]; ok {
		if _, has := info.Settings["transaction_isolation"]; !has {
			info.Settings["transaction_isolation"] = v
		}
		delete(info.Settings, "tx_isolation")
	}
	return info, err
}

// Close is CloseWithin 30 s.
func (t *MySQL) Close() error { return t.CloseWithin(30 * time.Second) }

// CloseWithin drops the run's database (unless kept, or not created by this process, or on a
// temporary server), closes the admin connection and stops a temporary server, the drop and the
// goodbye bounded by d.
func (t *MySQL) CloseWithin(d time.Duration) error {
	ident := sqldb.MySQL.QuoteIdent(t.Schema())
	return t.close(d, t.admin != nil, func(ctx context.Context) error {
		if _, err := t.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident); err != nil {
			return fmt.Errorf("dropping database %s (left on the server: DROP DATABASE %s): %w", t.Schema(), ident, err)
		}
		return nil
	}, func(ctx context.Context) {
		_ = t.admin.Close(ctx)
		t.admin = nil
	})
}

// poolSessions is what a pool's sessions share: their seats, their lifetime, and who is told
// of each one opened and of each one's first use.
type poolSessions struct {
	seats     sessionSeats
	lifetime  time.Duration
	connected func()
	firstUse  func(ctx context.Context)
}

// tracking is a connector whose connections are sessions the target keeps track of.
type tracking struct {
	driver.Connector
	t        *MySQL
	app      string
	observer bool
	pool     *poolSessions // nil outside a pool of NewPool
}

// untrack is what an observer's session runs first: performance_schema no longer instruments
// it (where the account may update performance_schema.threads; elsewhere, or with
// performance_schema off, nothing changes, and the observer's statements on the run's tables
// stay in the counts).
const untrack = "UPDATE performance_schema.threads SET INSTRUMENTED = 'NO' WHERE PROCESSLIST_ID = CONNECTION_ID()"

// connectionID reads the session's id. Through information_schema, so that the statement is
// an observer's to the run's figures (innodb's digests leave out what reads it), not one of
// the run's statements.
const connectionID = "SELECT ID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"

func (c *tracking) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	dc, ok := conn.(*sqldb.MySQLDriverConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("not a connection of sqldb.MySQLConnector: %T", conn)
	}
	s := &session{MySQLDriverConn: dc, t: c.t, app: c.app, observer: c.observer, seat: -1}
	if c.observer {
		_, _ = dc.ExecContext(ctx, untrack, nil)
	}
	if s.id, err = readID(ctx, dc); err != nil {
		_ = dc.Close()
		return nil, err
	}
	if p := c.pool; p != nil {
		s.pool = p
		s.seat = p.seats.take()
		if p.lifetime > 0 {
			jitter := time.Duration(rand.Float64() * float64(p.lifetime) * LifetimeJitter)
			s.expires = time.Now().Add(p.lifetime + jitter)
		}
	}
	c.t.mu.Lock()
	c.t.live[s] = struct{}{}
	c.t.opened = append(c.t.opened, s.id)
	c.t.mu.Unlock()
	if p := c.pool; p != nil && p.connected != nil {
		p.connected()
	}
	return s, nil
}

// readID reads a new driver connection's session id.
func readID(ctx context.Context, dc driver.Conn) (int64, error) {
	qc, ok := dc.(driver.QueryerContext)
	if !ok {
		return 0, fmt.Errorf("the driver's connection %T cannot query", dc)
	}
	rows, err := qc.QueryContext(ctx, connectionID, nil)
	if err != nil {
		return 0, fmt.Errorf("reading the session's id: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, fmt.Errorf("reading the session's id: %w", err)
	}
	switch x := v[0].(type) {
	case int64:
		return x, nil
	case uint64:
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	}
	return 0, fmt.Errorf("reading the session's id: a %T", v[0])
}

// session is a connection the target opened, as database/sql's driver connection: sqldb's
// (every interface of the driver's handed through), its id, and its place in its pool.
type session struct {
	*sqldb.MySQLDriverConn
	t        *MySQL
	id       int64
	app      string
	observer bool
	pool     *poolSessions
	seat     int
	expires  time.Time // zero: never
	once     sync.Once
	// used: the session ran a statement (database/sql uses a connection from one goroutine at
	// a time).
	used bool
}

// use tells the pool of the session's first use, with ctx (PoolOptions.FirstUse).
func (s *session) use(ctx context.Context) {
	if s.used {
		return
	}
	s.used = true
	if s.pool != nil && s.pool.firstUse != nil {
		s.pool.firstUse(ctx)
	}
}

// expired says the session is past its lifetime: database/sql then closes it when it is
// given back or taken, as pgxpool does a connection past MaxConnLifetime.
func (s *session) expired() bool { return !s.expires.IsZero() && time.Now().After(s.expires) }

func (s *session) Close() error {
	s.once.Do(func() {
		s.t.mu.Lock()
		delete(s.t.live, s)
		s.t.mu.Unlock()
		if s.pool != nil {
			s.pool.seats.free(s.seat)
		}
	})
	return s.MySQLDriverConn.Close()
}

func (s *session) IsValid() bool { return s.MySQLDriverConn.IsValid() && !s.expired() }

func (s *session) ResetSession(ctx context.Context) error {
	if s.expired() {
		return driver.ErrBadConn
	}
	return s.MySQLDriverConn.ResetSession(ctx)
}

func (s *session) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	s.use(ctx)
	return s.MySQLDriverConn.BeginTx(ctx, opts)
}

func (s *session) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s.use(ctx)
	return s.MySQLDriverConn.PrepareContext(ctx, query)
}

func (s *session) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s.use(ctx)
	return s.MySQLDriverConn.ExecContext(ctx, query, args)
}

func (s *session) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s.use(ctx)
	return s.MySQLDriverConn.QueryContext(ctx, query, args)
}

// The interfaces of go-sql-driver/mysql's connection a session hands through (sqldb's, and
// Interrupt: a transaction's COMMIT and ROLLBACK end with their context).
var (
	_ sqldb.Interrupter         = (*session)(nil)
	_ driver.ConnBeginTx        = (*session)(nil)
	_ driver.ConnPrepareContext = (*session)(nil)
	_ driver.ExecerContext      = (*session)(nil)
	_ driver.QueryerContext     = (*session)(nil)
	_ driver.Pinger             = (*session)(nil)
	_ driver.SessionResetter    = (*session)(nil)
	_ driver.Validator          = (*session)(nil)
	_ driver.NamedValueChecker  = (*session)(nil)
)
