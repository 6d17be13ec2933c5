package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/pgbouncertest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

func TestPgBouncerBadUsage(t *testing.T) {
	dsn := testdb.Server(t).DSN()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--schema", "s"}, "--postgres-url and --schema are required"},
		{[]string{"--postgres-url", dsn}, "--postgres-url and --schema are required"},
		{[]string{"--postgres-url", dsn, "--schema", "s", "--pool-mode", "statement"}, `--pool-mode "statement"`},
		{[]string{"--postgres-url", dsn, "--schema", "s", "--pool-size", "0"}, "--pool-size 0"},
		{[]string{"--postgres-url", dsn, "--schema", "s", "--pool-size", "1000"}, "pool size 1000 is above"},
		{[]string{"--postgres-url", "postgres://u:secret@127.0.0.1:1/x?connect_timeout=5", "--schema", "s"}, "connecting to"},
	} {
		var out, errb strings.Builder
		code := run(append([]string{"pgbouncer"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 ||
			strings.Contains(errb.String(), "secret") || out.Len() > 0 {
			t.Errorf("pgbouncer %v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

// TestPgBouncerServesASchemaUntilStopped runs baseline pgbouncer until its context ends (as
// SIGINT ends it): the console URL it writes reaches a pooler whose clients see --schema.
func TestPgBouncerServesASchemaUntilStopped(t *testing.T) {
	pgbouncertest.Need(t)
	target := testdb.New(t)
	urlFile := filepath.Join(t.TempDir(), "pooler")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb strings.Builder
	exit := make(chan int, 1)
	go func() {
		exit <- servePgBouncer(ctx, []string{"--postgres-url", testdb.Server(t).DSN(), "--schema", target.Schema(),
			"--pool-size", "4", "--url-file", urlFile}, &out, &errb)
	}()
	var consoleURL string
	for deadline := time.Now().Add(30 * time.Second); consoleURL == ""; time.Sleep(50 * time.Millisecond) {
		select {
		case code := <-exit:
			t.Fatalf("baseline pgbouncer ended: exit %d, %s", code, errb.String())
		default:
		}
		if b, err := os.ReadFile(urlFile); err == nil && strings.HasSuffix(string(b), "\n") {
			consoleURL = strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("no URL file within 30s")
		}
	}
	con, err := pgbouncer.OpenConsole(ctx, consoleURL)
	if err != nil {
		t.Fatal(err)
	}
	set, err := con.Settings(ctx)
	if err != nil || set["pool_mode"] != pgbouncer.ModeTransaction || set["max_db_connections"] != "4" {
		t.Errorf("SHOW CONFIG: pool_mode %q, max_db_connections %q, %v", set["pool_mode"], set["max_db_connections"], err)
	}
	clientURL, err := con.ClientURL(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	_ = con.Close()
	conn, err := pgx.Connect(ctx, clientURL)
	if err != nil {
		t.Fatal(err)
	}
	var path string
	err = conn.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&path)
	_ = conn.Close(ctx)
	if err != nil || path != target.Schema() {
		t.Errorf("search_path through the pooler: %q, %v; want %q", path, err, target.Schema())
	}
	cancel()
	if code := <-exit; code != exitOK {
		t.Errorf("exit %d after the end: %s", code, errb.String())
	}
	if strings.TrimSpace(out.String()) != consoleURL {
		t.Errorf("stdout %q; want the console URL", out.String())
	}
	if _, err := os.Stat(urlFile); err == nil {
		t.Error("the URL file was left")
	}
	u, _ := pgx.ParseConfig(consoleURL)
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(u.Host, strconv.Itoa(int(u.Port))), time.Second); err == nil {
		c.Close()
		t.Error("the pooler still listens after baseline pgbouncer ended")
	}
}
