package plan

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// The run's database: its kind (--database, or --mysql-url's), the server given by URL, and the
// flags that belong to one kind only, checked against the others before anything starts.

// OnMySQL reports whether the run's database is a MySQL or MariaDB server: the temporary
// MariaDB of --database mariadb, or --mysql-url's.
func (c *Plan) OnMySQL() bool { return c.Database == "mariadb" || c.MySQLURL != "" }

// Dialect is the SQL the run's database speaks, as the flags say before any server starts.
func (c *Plan) Dialect() sqldb.Dialect {
	if c.OnMySQL() {
		return sqldb.MySQL
	}
	return sqldb.Postgres
}

// DatabaseURL is the server given by URL, of either kind: "" with a temporary server.
func (c *Plan) DatabaseURL() string {
	if c.MySQLURL != "" {
		return c.MySQLURL
	}
	return c.PostgresURL
}

// postgresOnly are the flags of PostgreSQL's alone, each with what it is: refused on MySQL.
var postgresOnly = []struct{ flag, what string }{
	{"pg-bin-dir", "the temporary PostgreSQL's binaries"},
	{"pg-dir", "where the temporary PostgreSQL is made (the temporary MariaDB's directory is made in $TMPDIR)"},
	{"pg-user", "the OS user of the temporary PostgreSQL"},
	{"pg-download-cache", "embedded-postgres's download"},
	{"pg-download-url", "embedded-postgres's download"},
	{"pg-download-version", "embedded-postgres's download"},
	{"pooler", "PgBouncer, a pooler of PostgreSQL's"},
	{"pooler-url", "PgBouncer, a pooler of PostgreSQL's"},
	{"pooler-mode", "PgBouncer's pool mode"},
	{"pooler-pool-size", "PgBouncer's pool"},
	{"pooler-rtt", "the hop to PgBouncer"},
	{"min-connections", "pgxpool's minimum (database/sql, MySQL's pool, keeps none)"},
}

// innodbFlags are InnoDB's run settings.
var innodbFlags = []string{"innodb-deadlock-detect", "innodb-lock-wait-timeout", "innodb-flush-log-at-trx-commit"}

// validateDatabase checks the database's flags against each other: one kind, one URL of its
// scheme, each kind's own flags with it only, InnoDB's settings set only on a server the run
// starts, the temporary server's binaries found.
func (c *parser) validateDatabase(bad func(string, ...any)) {
	changed := c.fs.Changed
	switch {
	case c.MySQLURL != "" && c.PostgresURL != "":
		bad("--mysql-url and --postgres-url exclude each other: one database a run")
	case c.MySQLURL != "" && changed("database"):
		bad("--database starts a temporary server; with --mysql-url the run uses that server (its kind is what it says it is)")
	case c.Database == "mariadb" && c.PostgresURL != "":
		bad("--database mariadb starts a temporary MariaDB; --postgres-url is a PostgreSQL server: use --mysql-url for a MySQL or MariaDB server of yours")
	}
	if c.PostgresURL != "" {
		if u, err := url.Parse(c.PostgresURL); err == nil && strings.Contains(c.PostgresURL, "://") && u.Scheme != "postgres" && u.Scheme != "postgresql" {
			bad("--postgres-url %s: want postgres://user:password@host:port/database (a %s:// server goes with --mysql-url)", database.RedactURL(c.PostgresURL), u.Scheme)
		}
	}
	if c.MySQLURL != "" {
		if !strings.Contains(c.MySQLURL, "://") {
			bad("--mysql-url %s: want mysql://user:password@host:port/", database.Redact(c.MySQLURL))
		} else if _, err := database.ParseMySQLURL(c.MySQLURL); err != nil {
			bad("--mysql-url: %v", err)
		}
	}
	if !c.OnMySQL() {
		for _, f := range append(innodbFlags, "mariadb-bin-dir") {
			if changed(f) {
				bad("--%s is MySQL's and MariaDB's: it needs --database mariadb or --mysql-url", f)
			}
		}
		c.checkTemporaryPostgres(bad)
		return
	}
	for _, f := range postgresOnly {
		if changed(f.flag) {
			bad("--%s is PostgreSQL's (%s): not with %s", f.flag, f.what, c.mysqlName())
		}
	}
	if c.QueueBackend == testkit.BackendRedis {
		bad("--queue-backend redis is not on MySQL yet: the Redis queue's record of applied batches (redisq's applied-ids table) is written for PostgreSQL only; --queue-backend memory runs every mode on %s", c.mysqlName())
	}
	if c.MySQLURL != "" {
		for _, f := range append(innodbFlags, "mariadb-bin-dir") {
			if changed(f) {
				bad("--%s is set on the temporary server only; a --mysql-url server's own is read and recorded (it is not the run's to change)", f)
			}
		}
	}
	if ms := c.InnoDBLockWaitTimeoutMs; ms < 1000 || ms != float64(int64(ms/1000))*1000 {
		bad("--innodb-lock-wait-timeout %s: want whole seconds, at least 1s (innodb_lock_wait_timeout)", results.Duration(ms))
	}
	if c.UnsafeNoFsync && changed("innodb-flush-log-at-trx-commit") && c.InnoDBFlushLogAtTrxCommit != "0" {
		bad("--unsafe-no-fsync flushes InnoDB's redo log once a second (innodb_flush_log_at_trx_commit 0), not %s", c.InnoDBFlushLogAtTrxCommit)
	}
	for _, f := range c.Faults {
		if f.Kind == faults.LockTimeout && f.Setting%1000 != 0 {
			bad("--fault %s: InnoDB's lock wait timeout is whole seconds (innodb_lock_wait_timeout): give a multiple of 1000 ms", f)
		}
	}
	if c.MySQLURL == "" {
		if _, err := mariadbserver.FindBinaries(c.MariaDBBinDir); err != nil {
			bad("%v", err)
		} else if err := mariadbserver.CheckDir("", ""); err != nil {
			bad("%v", err)
		}
	}
}

// mysqlName names the MySQL server of the flags in an error.
func (c *Plan) mysqlName() string {
	if c.MySQLURL != "" {
		return "--mysql-url"
	}
	return "--database mariadb"
}

// checkTemporaryPostgres checks what the temporary PostgreSQL is made with.
func (c *parser) checkTemporaryPostgres(bad func(string, ...any)) {
	switch {
	case c.PgDir != "" && c.PostgresURL != "":
		bad("--pg-dir is where the temporary server is made; with --postgres-url there is none")
	case c.PostgresURL == "" && c.PgDir != "" && !isDir(c.PgDir):
		bad("--pg-dir %s: not a directory", c.PgDir)
	case c.PostgresURL == "":
		if err := pgserver.CheckDir(c.PgDir, c.PgUser); err != nil {
			bad("%v", err)
		}
	}
	if c.PostgresURL == "" && c.PgBinDir != "" {
		if _, err := pgserver.FindBinaries(c.PgBinDir); err != nil {
			bad("%v", err)
		}
	}
}

// refusedOnMySQL says why a fault of kind cannot strike a MySQL run ("" when it can).
func (c *Plan) refusedOnMySQL(kind string) string {
	if !c.OnMySQL() {
		return ""
	}
	switch kind {
	case faults.PoolerRestart, faults.PoolerPause:
		return fmt.Sprintf("is PgBouncer's, a pooler of PostgreSQL's: not with %s", c.mysqlName())
	}
	return ""
}
