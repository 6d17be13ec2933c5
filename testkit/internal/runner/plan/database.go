package plan

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// The run's database: its kind (--database, or --mysql-url's), the server given by URL, and the
// flags that belong to one kind only, checked against the others before anything starts. A
// ladder over the kinds (--databases) runs each kind on a temporary server of its own or on
// the server a URL gives for it.

// OnMySQL reports whether the run's database is a MySQL or MariaDB server: the temporary
// MariaDB of --database mariadb, --mysql-url's, or a kind's of a ladder that is one.
func (c *Plan) OnMySQL() bool { return mysqlKind(c.Database) || c.MySQLURL != "" }

// mysqlKind says kind is MySQL's or MariaDB's.
func mysqlKind(kind string) bool { return kind == "mariadb" || kind == "mysql" }

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

// Kinds are the kinds of database a ladder over them runs on, one after the other
// (--databases, in the axis's order); nil without one (the one kind of --database or a URL).
func (c *Plan) Kinds() []string {
	var out []string
	for _, v := range c.Ladder[results.AxisDatabase.Name] {
		out = append(out, v.Text)
	}
	return out
}

// urlFor is the server given by URL that kind runs on in a ladder over the kinds, "" for a
// temporary server of its own: --postgres-url is postgres's, --mysql-url is mariadb's or
// mysql's, and mysql's when both are on the axis (mariadb's server is then the temporary
// MariaDB: the kit starts no MySQL).
func (c *Plan) urlFor(kind string) string {
	switch {
	case kind == "postgres":
		return c.PostgresURL
	case kind == "mariadb" && slices.Contains(c.Kinds(), "mysql"):
		return ""
	case mysqlKind(kind):
		return c.MySQLURL
	}
	return ""
}

// ByKind is the plan of each kind of database the invocation runs on, in turn: with
// --databases, one per kind, its database that kind (its server, dialect, retry classes, the
// URL it records) and its rungs that kind's (Rungs); else the plan itself. The engine runs
// each on a server of its own, opened when its runs begin and closed after them: the URL's
// given for the kind (urlFor), else a temporary one.
func (c *Plan) ByKind() []*Plan {
	kinds := c.Kinds()
	if len(kinds) == 0 {
		return []*Plan{c}
	}
	out := make([]*Plan, 0, len(kinds))
	for _, k := range kinds {
		p := *c
		p.Database, p.kind = k, k
		p.PostgresURL, p.MySQLURL = "", ""
		if k == "postgres" {
			p.PostgresURL = c.urlFor(k)
		} else {
			p.MySQLURL = c.urlFor(k)
		}
		p.recordDatabase(&p.recorded)
		p.RetryClasses = retryClasses(c.retryClassesRaw, c.Faults, p.Dialect(), func(string, ...any) {}) // checked in validate
		out = append(out, &p)
	}
	return out
}

// ServedAs is the plan with each kind on its axis that a server given by URL runs on named
// as what that server is: kindAt reaches the server of url (of MySQL's protocol or
// PostgreSQL's) and says its kind, before anything starts. A MySQL reached by --mysql-url is
// mysql on the axis and in every run's config and label, a MariaDB mariadb, whichever of the
// two --databases named; notes say what was renamed. Without a ladder, or without a URL on
// it, it is c. An error is bad input: a server that does not answer, or one whose kind is
// another on the axis (--databases mariadb,mysql with a MariaDB by URL).
func (c *Plan) ServedAs(kindAt func(url string, mysql bool) (string, error)) (*Plan, []string, error) {
	kinds := c.Kinds()
	renamed := map[string]string{}
	var notes []string
	for _, k := range kinds {
		url := c.urlFor(k)
		if url == "" {
			continue
		}
		is, err := kindAt(url, k != "postgres")
		switch {
		case err != nil:
			return nil, nil, err
		case is == k:
			continue
		case slices.Contains(kinds, is):
			return nil, nil, fmt.Errorf("--mysql-url %s is a %s server, not a %s: with mariadb and mysql in --databases it is the MySQL (mariadb's is a temporary MariaDB)",
				database.RedactURL(url), results.KindName(is), results.KindName(k))
		}
		renamed[k] = is
		notes = append(notes, fmt.Sprintf("%s in --databases is %s's server, a %s: its runs are %s's", k, flagOf(k), results.KindName(is), is))
	}
	if len(renamed) == 0 {
		return c, nil, nil
	}
	p := *c
	p.Ladder = maps.Clone(c.Ladder)
	values := slices.Clone(c.Ladder[results.AxisDatabase.Name])
	for i, v := range values {
		if is, ok := renamed[v.Text]; ok {
			values[i] = results.Text(is)
		}
	}
	slices.SortFunc(values, results.Value.Compare) // in the order the flag's are (ParseList)
	p.Ladder[results.AxisDatabase.Name] = values
	return &p, notes, nil
}

// flagOf is the flag of the URL that gives kind's server.
func flagOf(kind string) string {
	if kind == "postgres" {
		return "--postgres-url"
	}
	return "--mysql-url"
}

// validateKinds checks the database's flags for each kind the invocation runs on: a URL given
// is a kind's on the axis (--postgres-url postgres's, --mysql-url mariadb's or mysql's),
// mysql is only ever a server given by URL, a ladder runs no search (--advise tries
// configurations on one server), and every kind takes the flags given (a PostgreSQL-only
// flag is refused with mariadb among them, a temporary server's flag with its URL).
func (c *parser) validateKinds(bad func(string, ...any)) {
	kinds := c.Kinds()
	list := strings.Join(kinds, ",")
	switch {
	case len(kinds) == 0:
		c.validateDatabase(bad)
		return
	case c.Advice.On:
		bad("--databases and --advise exclude each other: a search tries configurations on one database (run it once per --database)")
		return
	case c.PostgresURL != "" && !slices.Contains(kinds, "postgres"):
		bad("--postgres-url is the server of postgres in --databases, and --databases %s has none (add postgres, or leave the URL out)", list)
		return
	case c.MySQLURL != "" && !slices.ContainsFunc(kinds, mysqlKind):
		bad("--mysql-url is the server of mariadb or mysql in --databases, and --databases %s has neither (add the kind it is, or leave the URL out)", list)
		return
	case slices.Contains(kinds, "mysql") && c.MySQLURL == "":
		bad("mysql in --databases is a MySQL server of yours, given by --mysql-url: the kit starts no MySQL (its temporary server is MariaDB: mariadb)")
		return
	}
	for _, p := range c.ByKind() {
		k := *c
		k.Plan = p
		k.validateDatabase(bad)
	}
}

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
			if changed(f) && !slices.ContainsFunc(c.Kinds(), mysqlKind) { // a ladder's MySQL or MariaDB checks them
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
	switch {
	case c.MySQLURL != "":
		return "--mysql-url"
	case len(c.Kinds()) > 0:
		return "mariadb in --databases"
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
