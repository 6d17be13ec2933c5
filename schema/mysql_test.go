package schema_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }

// TestMySQLFiles: every shared file has its MySQL dialect under the same name, and the MySQL
// files apply on MariaDB, twice (each statement is idempotent), creating every table and view.
func TestMySQLFiles(t *testing.T) {
	pg, _ := filepath.Glob("sql/*.sql")
	my, _ := filepath.Glob("mysql/*.sql")
	for i := range pg {
		pg[i] = filepath.Base(pg[i])
	}
	for i := range my {
		my[i] = filepath.Base(my[i])
	}
	if len(pg) == 0 || !slices.Equal(pg, my) {
		t.Fatalf("PostgreSQL's files %v, MySQL's %v: want the same names", pg, my)
	}
	d := mariadbtest.New(t)
	for range 2 {
		d.Apply(t, os.DirFS("."), "mysql/*.sql")
	}
	var tables, views int
	if err := d.QueryRow(`SELECT SUM(TABLE_TYPE = 'BASE TABLE'), SUM(TABLE_TYPE = 'VIEW') FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE()`).Scan(&tables, &views); err != nil {
		t.Fatal(err)
	}
	if tables != 13 || views != 7 {
		t.Errorf("%d tables and %d views, want 13 and 7", tables, views)
	}
}
