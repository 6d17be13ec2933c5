package mariadbtest

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Options are sqldb's options for the test's database, as root, with the kit's driver
// settings (sqldb.MySQLConnector) and a pool of at most maxConns.
func (d *DB) Options(maxConns int) sqldb.MySQLOptions {
	return sqldb.MySQLOptions{Config: d.Config(), MaxConns: maxConns}
}

// Pool is a pool of sqldb's on the test's database (at most maxConns connections), closed
// when the test ends.
func (d *DB) Pool(t testing.TB, maxConns int) sqldb.Pool {
	t.Helper()
	p, err := sqldb.OpenMySQL(d.Options(maxConns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Dedicated is a connection of sqldb's of its own to the test's database (one session: its
// temporary tables last), closed when the test ends.
func (d *DB) Dedicated(t testing.TB) sqldb.Conn {
	t.Helper()
	c, err := sqldb.ConnectMySQL(context.Background(), d.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// Apply runs the files of fsys that match pattern (mysql/*.sql: a suite's MySQL tables), in
// name order, each statement on its own: a statement ends with a semicolon at the end of a
// line, as the kit's MySQL files are written.
func (d *DB) Apply(t testing.TB, fsys fs.FS, pattern string) {
	t.Helper()
	names, err := fs.Glob(fsys, pattern)
	if err != nil || len(names) == 0 {
		t.Fatalf("no files %s: %v", pattern, err)
	}
	sort.Strings(names)
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range strings.Split(string(text), ";\n") {
			st = strings.TrimSuffix(strings.TrimSpace(st), ";")
			if strings.TrimSpace(withoutComments(st)) == "" {
				continue
			}
			if _, err := d.DB.Exec(st); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, st)
			}
		}
	}
}

// withoutComments is text without its whole-line -- comments.
func withoutComments(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
