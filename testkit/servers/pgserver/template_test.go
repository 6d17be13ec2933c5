package pgserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
)

// The other tests of this package initialise their servers with initdb, whatever the
// environment says; TestServersFromATemplate sets the template directory itself.
func TestMain(m *testing.M) {
	os.Unsetenv(TemplateDirEnv)
	os.Exit(m.Run())
}

// Two servers started with TemplateDirEnv set: the template is made once, each server runs on
// its own copy (what one writes the other does not see), the template's password works, and
// stopping them leaves the template and nothing else.
func TestServersFromATemplate(t *testing.T) {
	dir := serverproctest.ReachableDir(t, "hotspotkit-pg-templates-")
	t.Setenv(TemplateDirEnv, dir)
	a := startForTest(t, Config{Unsafe: true})
	b := startForTest(t, Config{Unsafe: true})
	if a.Dir() == b.Dir() || a.password != b.password {
		t.Fatalf("servers in %s and %s, passwords equal %v: want two directories, the template's password", a.Dir(), b.Dir(), a.password == b.password)
	}
	conn, err := pgx.Connect(t.Context(), a.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())
	if got := query(t, b.DSN(), "SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'"); got != "0" {
		t.Errorf("b sees a's table: %s", got)
	}
	if got := query(t, a.DSN(), "SELECT current_database()"); got != "hotspot" {
		t.Errorf("database %q, want hotspot", got)
	}
	templates, _ := filepath.Glob(filepath.Join(dir, "pg*-uid*-hotspot"))
	if len(templates) != 1 {
		t.Fatalf("templates %v, want one", templates)
	}
	for _, s := range []*Server{a, b} {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 2 { // the template and its lock file
		t.Errorf("left in the template directory: %v", left)
	}
	c := startForTest(t, Config{}) // from the template left
	if got := query(t, c.DSN(), "SELECT count(*) FROM pg_class WHERE relname = 'only_in_a'"); got != "0" {
		t.Errorf("a later server sees a's table: %s", got)
	}
}
