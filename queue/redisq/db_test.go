package redisq

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// testDB is a kind of database the tests' queues write to, with the statements of the
// tests' own tables in its dialect: PostgreSQL (testdb's shared server, a schema per test) or
// MariaDB (mariadbtest's, a database per test).
type testDB struct {
	name string
	// open gives e its pool (16 connections), its admin handle and its schema.
	open func(e *env)
	// counts creates q_counts; addCounts adds a record to it (countsWriter); totals sums it.
	counts, addCounts, totals string
	// tableExists says whether table $1 exists (a name, schema-qualified or not).
	tableExists string
	// anotherStreamsID inserts an applied id of a stream no test queue reads.
	anotherStreamsID string
	// inStreams is a condition on the stream column: one of streams.
	inStreams func(streams []string) (string, []any)
	// limited opens a pool as a user who may read and write q_counts and nothing else;
	// grantApplied lets that user read, write and delete the applied-ids table.
	limited      func(e *env) sqldb.Pool
	grantApplied func(e *env)
}

var postgres = &testDB{
	name: "postgresql",
	open: func(e *env) {
		target := testdb.New(e.t)
		pool, err := target.NewPool(context.Background(), database.PoolOptions{MaxConns: 16, AppName: "redisq-test"})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(pool.Close)
		e.pgPool, e.pool, e.admin, e.schema = pool, sqldb.PgxPool(pool), sqldb.PgxConn(target.Admin()), target.Schema()
	},
	counts: `CREATE TABLE q_counts (slot int PRIMARY KEY, total bigint NOT NULL, records bigint NOT NULL)`,
	addCounts: `INSERT INTO q_counts (slot, total, records) VALUES ($1, $2, $3)
			ON CONFLICT (slot) DO UPDATE SET total = q_counts.total + excluded.total, records = q_counts.records + excluded.records`,
	totals:           `SELECT coalesce(sum(total), 0)::int8, coalesce(sum(records), 0)::int8 FROM q_counts`,
	tableExists:      `SELECT to_regclass($1) IS NOT NULL`,
	anotherStreamsID: `INSERT INTO queue_applied_entries VALUES ('another stream', '1-1')`,
	inStreams: func(streams []string) (string, []any) {
		return `stream = ANY($1)`, []any{streams}
	},
	limited: func(e *env) sqldb.Pool {
		ctx := context.Background()
		schema := sqldb.Postgres.QuoteIdent(e.schema)
		role := limitedUser(e)
		e.mustExec(`CREATE ROLE `+role+` LOGIN PASSWORD 'limited'`,
			`GRANT USAGE ON SCHEMA `+schema+` TO `+role,
			`GRANT SELECT, INSERT, UPDATE ON q_counts TO `+role)
		e.t.Cleanup(func() {
			_, _ = e.admin.Exec(context.Background(), `DROP OWNED BY `+role)
			_, _ = e.admin.Exec(context.Background(), `DROP ROLE `+role)
		})
		cfg, err := pgxpool.ParseConfig(e.pgPool.Config().ConnString())
		if err != nil {
			e.t.Fatal(err)
		}
		cfg.ConnConfig.User, cfg.ConnConfig.Password = role, "limited"
		cfg.ConnConfig.RuntimeParams["search_path"] = e.schema
		limited, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(limited.Close)
		return sqldb.PgxPool(limited)
	},
	grantApplied: func(e *env) {
		e.mustExec(`GRANT SELECT, INSERT, DELETE ON queue_applied_entries TO ` + limitedUser(e))
	},
}

var mariadb = &testDB{
	name: "mariadb",
	open: func(e *env) {
		d := mariadbtest.New(e.t)
		e.pool, e.admin, e.schema, e.maria = d.Pool(e.t, 16), sqldb.MySQLDB(d.DB), d.Name, d
	},
	counts: `CREATE TABLE q_counts (slot int PRIMARY KEY, total bigint NOT NULL, records bigint NOT NULL)`,
	addCounts: `INSERT INTO q_counts (slot, total, records) VALUES ($1, $2, $3)
			ON DUPLICATE KEY UPDATE total = total + VALUES(total), records = records + VALUES(records)`,
	totals: `SELECT CAST(COALESCE(SUM(total), 0) AS SIGNED), CAST(COALESCE(SUM(records), 0) AS SIGNED) FROM q_counts`,
	tableExists: `SELECT COUNT(*) > 0 FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name = $1`,
	anotherStreamsID: `INSERT INTO queue_applied_entries VALUES ('another stream', 1, 1, 0)`,
	inStreams: func(streams []string) (string, []any) {
		marks := make([]string, len(streams))
		args := make([]any, len(streams))
		for i, s := range streams {
			marks[i], args[i] = "?", s
		}
		return `stream IN (` + strings.Join(marks, ", ") + `)`, args
	},
	limited: func(e *env) sqldb.Pool {
		user := "'" + limitedUser(e) + "'@'%'"
		e.mustExec(`CREATE USER `+user+` IDENTIFIED BY 'limited'`,
			`GRANT SELECT, INSERT, UPDATE ON `+sqldb.MySQL.QuoteIdent(e.schema, "q_counts")+` TO `+user)
		e.t.Cleanup(func() { _, _ = e.admin.Exec(context.Background(), `DROP USER IF EXISTS `+user) })
		cfg := e.maria.Config()
		cfg.User, cfg.Passwd = limitedUser(e), "limited"
		pool, err := sqldb.OpenMySQL(sqldb.MySQLOptions{Config: cfg, MaxConns: 16})
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(pool.Close)
		return pool
	},
	grantApplied: func(e *env) {
		e.mustExec(`GRANT SELECT, INSERT, DELETE ON ` + sqldb.MySQL.QuoteIdent(e.schema, "queue_applied_entries") +
			` TO '` + limitedUser(e) + `'@'%'`)
	},
}

// limitedUser names the limited role or user of e's test.
func limitedUser(e *env) string { return "redisq_test_" + strings.TrimPrefix(e.stream, "test:") }

func (e *env) mustExec(statements ...string) {
	e.t.Helper()
	for _, s := range statements {
		if _, err := e.admin.Exec(context.Background(), s); err != nil {
			e.t.Fatalf("%s: %v", s, err)
		}
	}
}

// everyDB runs f on PostgreSQL against both Redis backends (backends), and on MariaDB against
// the shared redis-server: the tests whose outcome rests on the database's side of the queue
// (the applied ids, the writes) run on both databases, those of Redis's side on one.
func everyDB(t *testing.T, f func(t *testing.T, rdb *redis.Client, db *testDB)) {
	backends(t, func(t *testing.T, rdb *redis.Client) { f(t, rdb, postgres) })
	t.Run(mariadb.name, func(t *testing.T) { f(t, onRedisServer(t), mariadb) })
}
