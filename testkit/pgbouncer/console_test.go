package pgbouncer

import (
	"context"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

func TestOpenConsoleRefusesAPlainPostgreSQL(t *testing.T) {
	dsn := testdb.Server(t).DSN()
	_, err := OpenConsole(context.Background(), dsn)
	if err == nil || !strings.Contains(err.Error(), "is not a PgBouncer admin console (SHOW VERSION: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("OpenConsole on PostgreSQL: %v; want one line saying it is not a PgBouncer console", err)
	}
	if pw := strings.Split(strings.Split(dsn, "@")[0], ":")[2]; strings.Contains(err.Error(), pw) {
		t.Errorf("the error shows the password: %v", err)
	}
}
