package pgbouncer

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// Console is a session on a PgBouncer's admin console (its database pgbouncer), any
// PgBouncer's, not only one this package started. The console speaks only the simple query
// protocol. Its SHOW commands' columns change between versions: they are read by name, a
// column a version lacks reads as zero, extra columns are ignored.
//
// A Console is safe for concurrent use; its calls take turns on its one connection. PAUSE
// waits until every server connection is released, which can take as long as the longest
// transaction: a sampler should have a Console of its own.
type Console struct {
	url     string
	mu      sync.Mutex
	conn    *pgx.Conn
	version string
}

// OpenConsole connects to the console at consoleURL and checks that it is one (SHOW VERSION).
// A URL that reaches something else — a plain PostgreSQL — is refused with a one-line error.
func OpenConsole(ctx context.Context, consoleURL string) (*Console, error) {
	cfg, err := pgx.ParseConfig(consoleURL)
	if err != nil {
		return nil, fmt.Errorf("PgBouncer console URL %s: %v", database.RedactURL(consoleURL), oneLine(err))
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the PgBouncer console at %s: %v", database.RedactURL(consoleURL), oneLine(err))
	}
	c := &Console{url: consoleURL, conn: conn}
	rows, err := c.show(ctx, "SHOW VERSION")
	if err == nil && (len(rows) != 1 || !strings.HasPrefix(rows[0]["version"], "PgBouncer ")) {
		err = fmt.Errorf("answered %v", rows)
	}
	if err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("%s is not a PgBouncer admin console (SHOW VERSION: %v)", database.RedactURL(consoleURL), oneLine(err))
	}
	c.version = strings.TrimPrefix(rows[0]["version"], "PgBouncer ")
	return c, nil
}

// Version is the PgBouncer's version, e.g. "1.18.0".
func (c *Console) Version() string { return c.version }

// ClientURL is the URL a service's client connects to database db ("": the one database the
// pooler serves besides its console) with the console's own user and password: PgBouncer lets
// any user of its auth_file log in to a database, and a database that forces its user — as
// the one Start configures does — pools every client in that user's one pool, whoever logged
// in. So a process given only the console's URL (--pooler-url) reaches the pool. Never print
// it (database.RedactURL).
func (c *Console) ClientURL(ctx context.Context, db string) (string, error) {
	if db == "" {
		dbs, err := c.Databases(ctx)
		if err != nil {
			return "", err
		}
		var names []string
		for _, d := range dbs {
			if d.Name != "pgbouncer" {
				names = append(names, d.Name)
			}
		}
		if len(names) != 1 {
			return "", fmt.Errorf("PgBouncer at %s serves %d databases (%s): name the one to use", database.RedactURL(c.url), len(names), strings.Join(names, ", "))
		}
		db = names[0]
	}
	u, err := url.Parse(c.url)
	if err != nil {
		return "", fmt.Errorf("PgBouncer console URL %s: %v", database.RedactURL(c.url), err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// Close ends the session.
func (c *Console) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Close(context.Background())
}

// Pool is one row of SHOW POOLS: a (database, user) pool.
type Pool struct {
	Database, User, Mode string
	// ClActive are clients linked to a server connection or idle; ClWaiting have sent a
	// query and wait for a server connection.
	ClActive, ClWaiting int64
	// Server connections: linked to a client, idle and ready, idle after use (waiting for
	// server_check_query), being tested (the reset or check query), logging in.
	SvActive, SvIdle, SvUsed, SvTested, SvLogin int64
	// MaxWait is how long the oldest waiting client has waited.
	MaxWait time.Duration
}

// Pools runs SHOW POOLS.
func (c *Console) Pools(ctx context.Context) ([]Pool, error) {
	rows, err := c.show(ctx, "SHOW POOLS")
	if err != nil {
		return nil, err
	}
	out := make([]Pool, 0, len(rows))
	for _, r := range rows {
		p := columns{m: r}
		pool := Pool{Database: r["database"], User: r["user"], Mode: r["pool_mode"],
			ClActive: p.int("cl_active"), ClWaiting: p.int("cl_waiting"),
			SvActive: p.int("sv_active"), SvIdle: p.int("sv_idle"), SvUsed: p.int("sv_used"),
			SvTested: p.int("sv_tested"), SvLogin: p.int("sv_login"),
			MaxWait: time.Duration(p.int("maxwait"))*time.Second + time.Duration(p.int("maxwait_us"))*time.Microsecond}
		if p.err != nil {
			return nil, fmt.Errorf("SHOW POOLS: %w", p.err)
		}
		out = append(out, pool)
	}
	return out, nil
}

// Stats is one row of SHOW STATS: one database's totals since the pooler started, and its
// averages over the last stats_period (a second for a pooler this package started).
type Stats struct {
	Database string
	// Transactions and queries pooled; bytes received from clients and sent to them.
	TotalXactCount, TotalQueryCount, TotalReceived, TotalSent int64
	// Time spent in transactions and queries on a server connection, and clients' time
	// waiting for one.
	TotalXactTime, TotalQueryTime, TotalWaitTime time.Duration
	// Transactions and queries per second.
	AvgXactCount, AvgQueryCount int64
	// The average transaction and query durations, and clients' average wait, as PgBouncer
	// computes them over the last period.
	AvgXactTime, AvgQueryTime, AvgWaitTime time.Duration
}

// Stats runs SHOW STATS.
func (c *Console) Stats(ctx context.Context) ([]Stats, error) {
	rows, err := c.show(ctx, "SHOW STATS")
	if err != nil {
		return nil, err
	}
	out := make([]Stats, 0, len(rows))
	for _, r := range rows {
		p := columns{m: r}
		st := Stats{Database: r["database"],
			TotalXactCount: p.int("total_xact_count"), TotalQueryCount: p.int("total_query_count"),
			TotalReceived: p.int("total_received"), TotalSent: p.int("total_sent"),
			TotalXactTime: p.micros("total_xact_time"), TotalQueryTime: p.micros("total_query_time"),
			TotalWaitTime: p.micros("total_wait_time"),
			AvgXactCount:  p.int("avg_xact_count"), AvgQueryCount: p.int("avg_query_count"),
			AvgXactTime: p.micros("avg_xact_time"), AvgQueryTime: p.micros("avg_query_time"),
			AvgWaitTime: p.micros("avg_wait_time")}
		if p.err != nil {
			return nil, fmt.Errorf("SHOW STATS: %w", p.err)
		}
		out = append(out, st)
	}
	return out, nil
}

// Settings runs SHOW CONFIG: each setting's value by name (pool_mode, default_pool_size,
// max_client_conn, …).
func (c *Console) Settings(ctx context.Context) (map[string]string, error) {
	rows, err := c.show(ctx, "SHOW CONFIG")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r["key"]] = r["value"]
	}
	return out, nil
}

// Database is one row of SHOW DATABASES: a database the pooler serves and where it leads.
type Database struct {
	Name, Host string
	Port       int64
	// Database is the upstream's name; ForceUser the user every connection logs in as.
	Database, ForceUser string
	PoolSize            int64
	Mode                string // "" when the pooler's pool_mode applies
	// MaxConnections is max_db_connections (0: none); CurrentConnections the server
	// connections open now.
	MaxConnections, CurrentConnections int64
	Paused, Disabled                   bool
}

// Databases runs SHOW DATABASES.
func (c *Console) Databases(ctx context.Context) ([]Database, error) {
	rows, err := c.show(ctx, "SHOW DATABASES")
	if err != nil {
		return nil, err
	}
	out := make([]Database, 0, len(rows))
	for _, r := range rows {
		p := columns{m: r}
		db := Database{Name: r["name"], Host: r["host"], Port: p.int("port"), Database: r["database"],
			ForceUser: r["force_user"], PoolSize: p.int("pool_size"), Mode: r["pool_mode"],
			MaxConnections: p.int("max_connections"), CurrentConnections: p.int("current_connections"),
			Paused: p.int("paused") != 0, Disabled: p.int("disabled") != 0}
		if p.err != nil {
			return nil, fmt.Errorf("SHOW DATABASES: %w", p.err)
		}
		out = append(out, db)
	}
	return out, nil
}

// Pause runs PAUSE db ("": every database): it returns once every server connection of the
// database is released — a transaction in progress first ends — and closed; from then on,
// clients' queries wait in the pooler (until Resume, or query_wait_timeout fails them).
func (c *Console) Pause(ctx context.Context, db string) error { return c.command(ctx, "PAUSE", db) }

// Resume runs RESUME db ("": every database): the waiting clients get server connections.
func (c *Console) Resume(ctx context.Context, db string) error { return c.command(ctx, "RESUME", db) }

func (c *Console) command(ctx context.Context, verb, db string) error {
	sql := verb
	if db != "" {
		sql += " " + pgx.Identifier{db}.Sanitize()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// show runs a SHOW command and returns its rows, each column's text by name (NULL: "").
func (c *Console) show(ctx context.Context, sql string) ([]map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rows, err := c.conn.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out []map[string]string
	for rows.Next() {
		raw := rows.RawValues()
		r := make(map[string]string, len(fields))
		for i, f := range fields {
			if i < len(raw) {
				r[f.Name] = string(raw[i])
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// columns reads a SHOW row's numbers by column name; the first one that does not parse is
// kept in err. A missing or NULL column reads as zero.
type columns struct {
	m   map[string]string
	err error
}

func (p *columns) int(name string) int64 {
	v := p.m[name]
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not a number", name, v)
	}
	return n
}

// micros reads a column in microseconds.
func (p *columns) micros(name string) time.Duration {
	return time.Duration(p.int(name)) * time.Microsecond
}

func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
