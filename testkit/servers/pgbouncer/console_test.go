package pgbouncer

import (
	"context"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
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

func TestCheckPoolSizeAgainstMaxConnections(t *testing.T) {
	dsn := testdb.Server(t).DSN()
	ctx := context.Background()
	if err := CheckPoolSize(ctx, dsn, 16); err != nil {
		t.Errorf("a pool of 16 on a server of 300 connections: %v", err)
	}
	err := CheckPoolSize(ctx, dsn, 1000)
	if err == nil || !strings.Contains(err.Error(), "pool size 1000 is above the 297 connections") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a pool of 1000 on a server of 300 connections (3 reserved): %v", err)
	}
	if err := CheckPoolSize(ctx, "postgres://u:secret@127.0.0.1:1/x?connect_timeout=5", 1); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("an unreachable server: %v; want an error without the password", err)
	}
}
