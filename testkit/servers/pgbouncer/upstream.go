package pgbouncer

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// UpstreamConfig is a Config whose upstream (host, port, database, user, password) is the
// PostgreSQL that postgresURL names (a URL or a keyword/value string, as pgx reads it: its
// first host; a password from ~/.pgpass when the URL has none). The pooler reaches that
// server without TLS.
func UpstreamConfig(postgresURL string) (Config, error) {
	cfg, err := pgx.ParseConfig(postgresURL)
	if err != nil {
		return Config{}, fmt.Errorf("PostgreSQL URL %s: %v", database.RedactURL(postgresURL), oneLine(err))
	}
	return Config{UpstreamHost: cfg.Host, UpstreamPort: int(cfg.Port), DBName: cfg.Database,
		User: cfg.User, Password: cfg.Password}, nil
}

// CheckPoolSize connects to the PostgreSQL postgresURL names and fails, in one line, when a
// pool of poolSize server connections would not fit in what it lets an ordinary user open
// (ConnectionLimit), or when it cannot be reached.
func CheckPoolSize(ctx context.Context, postgresURL string, poolSize int) error {
	conn, err := pgx.Connect(ctx, postgresURL)
	if err != nil {
		return fmt.Errorf("connecting to %s: %v", database.RedactURL(postgresURL), oneLine(err))
	}
	defer conn.Close(context.Background())
	limit, err := ConnectionLimit(ctx, conn)
	if err != nil {
		return fmt.Errorf("reading max_connections of %s: %v", database.RedactURL(postgresURL), oneLine(err))
	}
	if poolSize > limit {
		return fmt.Errorf("pool size %d is above the %d connections %s lets an ordinary user open (max_connections less the reserved ones)", poolSize, limit, database.RedactURL(postgresURL))
	}
	return nil
}

// ConnectionLimit is how many connections the server of conn lets an ordinary user open: its
// max_connections less superuser_reserved_connections and reserved_connections (PostgreSQL
// 16; read as 0 where it does not exist). A pooler's pool above it cannot all connect.
func ConnectionLimit(ctx context.Context, conn *pgx.Conn) (int, error) {
	var limit int
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- current_setting('superuser_reserved_connections')::int
		- coalesce(current_setting('reserved_connections', true), '0')::int`).Scan(&limit)
	return limit, err
}
