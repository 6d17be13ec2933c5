// Package schema owns the SQL that defines hotspotkit's shared tables — the core gateway rows
// and counter tables, package counters' own outbox, claims and openings, and the registry of a
// run split over several processes (the Redis backend's applied ids are queue/redisq's own table) —
// in each dialect the kit runs on, and applies them, then the files a suite names
// (testkit.Info.SQL: each suite package embeds its own tables), each idempotent, in name
// order, into the run's place: whatever schema is first on the connection's search_path on
// PostgreSQL, the connection's default database on MySQL. It must not seed data or know about
// any one suite.
//
// The files of a dialect: PostgreSQL's are sql/*.sql here and *.sql at the root of a suite's
// file system; MySQL's (and MariaDB's) are mysql/*.sql here and mysql/*.sql in a suite's
// (one //go:embed *.sql mysql/*.sql). A MySQL file holds statements separated by semicolons at
// the end of a line; no procedure bodies, no DELIMITER. PostgreSQL applies every file in one
// transaction; MySQL commits each DDL statement on its own (its DDL is not transactional), so
// a failed file there leaves the tables before it in place, which Reset and the run's drop
// treat as any other.
package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

//go:embed sql/*.sql mysql
var files embed.FS

// dir is where a dialect's files are, here and in a suite's file system ("" at its root).
func dir(d sqldb.Dialect) string {
	if d == sqldb.MySQL {
		return "mysql"
	}
	return ""
}

// Files lists the embedded SQL files of dialect d in the order they are applied.
func Files(d sqldb.Dialect) []string {
	pattern := "sql/*.sql"
	if d == sqldb.MySQL {
		pattern = "mysql/*.sql"
	}
	names, err := fs.Glob(files, pattern)
	if err != nil {
		panic(err) // the pattern is constant
	}
	sort.Strings(names)
	return names
}

// SuiteFiles lists the *.sql files of dialect d in a suite's file system (at its root for
// PostgreSQL, in mysql/ for MySQL), in the order they are applied.
func SuiteFiles(suite fs.FS, d sqldb.Dialect) ([]string, error) {
	pattern := "*.sql"
	if sub := dir(d); sub != "" {
		pattern = sub + "/" + pattern
	}
	names, err := fs.Glob(suite, pattern)
	sort.Strings(names)
	return names, err
}

// Apply runs every shared file of conn's dialect, then every file of that dialect in each
// suite file system (nil ones are skipped), in order: on PostgreSQL in one transaction.
func Apply(ctx context.Context, conn sqldb.Conn, suites ...fs.FS) error {
	d := conn.Dialect()
	type file struct {
		fsys fs.FS
		name string
	}
	var all []file
	for _, name := range Files(d) {
		all = append(all, file{files, name})
	}
	for _, suite := range suites {
		if suite == nil {
			continue
		}
		names, err := SuiteFiles(suite, d)
		if err != nil {
			return err
		}
		for _, name := range names {
			all = append(all, file{suite, name})
		}
	}
	run := func(q sqldb.Querier) error {
		for _, f := range all {
			text, err := fs.ReadFile(f.fsys, f.name)
			if err != nil {
				return err
			}
			statements := []string{string(text)} // PostgreSQL takes a file as one simple query
			if d == sqldb.MySQL {
				statements = Statements(string(text))
			}
			for _, st := range statements {
				if _, err := q.Exec(ctx, st); err != nil {
					return fmt.Errorf("schema %s: %w", f.name, err)
				}
			}
		}
		return nil
	}
	if d == sqldb.MySQL {
		return run(conn)
	}
	return sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error { return run(tx) })
}

// Statements splits a MySQL file into its statements: at each semicolon outside a quoted
// string or name and outside a comment. Empty statements (and those of comments only) are
// left out.
func Statements(text string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if st := strings.TrimSpace(text[start:end]); st != "" && !onlyComments(st) {
			out = append(out, st)
		}
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(text, i, c)
		case c == '#' || (c == '-' && strings.HasPrefix(text[i:], "-- ")):
			i = skipLine(text, i)
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(text)
			}
		case c == ';':
			add(i)
			start = i + 1
		}
	}
	add(len(text))
	return out
}

// skipQuoted returns the index of the quote that closes the one at i (a doubled quote, or one
// after a backslash in a string, does not close it).
func skipQuoted(text string, i int, q byte) int {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return len(text)
}

// skipLine returns the index of the end of the line at i.
func skipLine(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// onlyComments reports whether st holds nothing but comments.
func onlyComments(st string) bool {
	for _, line := range strings.Split(st, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, "#") {
			return false
		}
	}
	return true
}

// Tables lists the tables of the run's place (the schema first on the search path, or the
// connection's database), for resets between runs.
func Tables(ctx context.Context, conn sqldb.Querier) ([]string, error) {
	query := `
		SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY c.relname`
	if conn.Dialect() == sqldb.MySQL {
		query = `SELECT TABLE_NAME FROM information_schema.TABLES
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`
	}
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	return sqldb.CollectRows[string](rows)
}

// Reset empties every table of the run's place and restarts its sequences: one TRUNCATE of
// them all on PostgreSQL; on MySQL a TRUNCATE a table (each restarts its AUTO_INCREMENT), with
// the session's foreign key checks off meanwhile (InnoDB refuses to truncate a table that
// another references).
func Reset(ctx context.Context, conn sqldb.Conn) error {
	tables, err := Tables(ctx, conn)
	if err != nil || len(tables) == 0 {
		return err
	}
	d := conn.Dialect()
	if d != sqldb.MySQL {
		ids := make([]string, len(tables))
		for i, t := range tables {
			ids[i] = d.QuoteIdent(t)
		}
		_, err = conn.Exec(ctx, "TRUNCATE "+strings.Join(ids, ", ")+" RESTART IDENTITY")
		return err
	}
	if _, err := conn.Exec(ctx, "SET foreign_key_checks = 0"); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SET foreign_key_checks = 1") //nolint:errcheck // the connection stays the target's
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "TRUNCATE TABLE "+d.QuoteIdent(t)); err != nil {
			return err
		}
	}
	return nil
}
