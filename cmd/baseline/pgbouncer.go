package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

const pgbouncerUsage = `Usage: baseline pgbouncer --postgres-url URL --schema S [--pool-mode transaction] [--pool-size 16]
       [--max-client-conn 10000] [--host 127.0.0.1] [--connect-query SQL] [--url-file FILE]

Starts one temporary PgBouncer (from PATH, /usr/sbin, or $HOTSPOTKIT_PGBOUNCER) in front of the
PostgreSQL at --postgres-url, for the processes of a split run to share (the many-replicas
case: each process has its own pool, all of them go through one pooler). Every new server
connection sets search_path to --schema (PgBouncer does not pass search_path from a client),
the schema the processes share with --schema S --reuse-schema, then runs --connect-query.
It prints the pooler's admin console URL on stdout (the processes pass it as --pooler-url;
the password is in it: keep it private), and runs in the foreground until Ctrl-C (SIGINT) or
SIGTERM, when it stops the pooler and removes its directory (a watchdog does the same if this
process is killed). PostgreSQL never sees more than --pool-size connections from it. It binds
--host: 127.0.0.1 serves this machine only; the machine's own address serves other hosts.

Example:
  baseline pgbouncer --postgres-url "$PG" --schema shared --pool-size 16 --url-file /tmp/pooler &
  B=bin/usage_counter_hotspot_baseline
  $B --postgres-url "$PG" --schema shared --reuse-schema --pooler-url "$(cat /tmp/pooler)" ... --role producer

Flags:
`

// runPgBouncer is baseline pgbouncer: it runs until SIGINT or SIGTERM.
func runPgBouncer(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return servePgBouncer(ctx, args, stdout, stderr)
}

// servePgBouncer is baseline pgbouncer until ctx ends.
func servePgBouncer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("pgbouncer", pgbouncerUsage, stdout, stderr)
	postgresURL := c.flags.String("postgres-url", "", "the PostgreSQL the pooler leads to (required)")
	schema := c.flags.String("schema", "", "the schema every server connection's search_path names (required)")
	mode := c.flags.String("pool-mode", pgbouncer.ModeTransaction, "the pool mode: "+strings.Join(pgbouncer.Modes, " or "))
	poolSize := c.flags.Int("pool-size", pgbouncer.DefaultPoolSize, "server connections: at most this many to PostgreSQL")
	maxClients := c.flags.Int("max-client-conn", pgbouncer.DefaultMaxClientConn, "client connections the pooler accepts")
	host := c.flags.String("host", "127.0.0.1", "the address the pooler listens on")
	connectQuery := c.flags.String("connect-query", "", "more SQL every new server connection runs, after setting search_path")
	urlFile := c.flags.String("url-file", "", "also write the console URL to this file (mode 0600), removed on exit")
	if code, done := c.parse(args); done {
		return code
	}
	switch {
	case c.flags.NArg() > 0:
		return c.usageError("unexpected arguments")
	case *postgresURL == "" || *schema == "":
		return c.usageError("--postgres-url and --schema are required")
	case !slices.Contains(pgbouncer.Modes, *mode):
		return c.usageError(fmt.Sprintf("--pool-mode %q: want %s", *mode, strings.Join(pgbouncer.Modes, " or ")))
	case *poolSize < 1 || *maxClients < 1:
		return c.usageError(fmt.Sprintf("--pool-size %d --max-client-conn %d: want at least 1 of each", *poolSize, *maxClients))
	}
	cfg, err := pgbouncer.UpstreamConfig(*postgresURL)
	if err != nil {
		return c.fail(err)
	}
	if err := pgbouncer.CheckPoolSize(ctx, *postgresURL, *poolSize); err != nil {
		return c.fail(err)
	}
	cfg.Mode, cfg.PoolSize, cfg.MaxClientConn, cfg.Host = *mode, *poolSize, *maxClients, *host
	cfg.ConnectQuery = "SET search_path TO " + pgx.Identifier{*schema}.Sanitize()
	if *connectQuery != "" {
		cfg.ConnectQuery += "; " + *connectQuery
	}
	s, err := pgbouncer.Start(ctx, cfg)
	if err != nil {
		return c.fail(err)
	}
	defer s.Stop()
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(s.ConsoleURL()+"\n"), 0o600); err != nil {
			return c.fail(err)
		}
		defer os.Remove(*urlFile)
	}
	fmt.Fprintln(stdout, s.ConsoleURL())
	fmt.Fprintf(stderr, "baseline pgbouncer: PgBouncer %s at %s:%d, %s mode, %d server connections to %s (search_path %s); Ctrl-C stops it\n",
		s.Version(), s.Host(), s.Port(), s.Mode(), s.PoolSize(), database.RedactURL(*postgresURL), *schema)
	<-ctx.Done()
	if err := s.Stop(); err != nil {
		return c.fail(err)
	}
	return exitOK
}
