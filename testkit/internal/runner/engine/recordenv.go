package engine

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/hostenv"
)

// captureEnvironment records what the numbers were measured on.
func (e *engine) captureEnvironment(ctx context.Context) error {
	info, err := e.target.Info(ctx)
	if err != nil {
		return fmt.Errorf("reading server settings: %w", err)
	}
	env := hostenv.Host()
	env.DatabaseKind, env.DatabaseVersion, env.DatabaseSettings = info.Kind, info.Version, info.Settings
	env.ManagedDatabase = e.target.Managed()
	env.Schema = e.target.Schema()
	env.Durability = durability(info.Settings)
	if started, dir, ok := e.db.temporary(); ok {
		env.DatabaseStartMs = units.Ms(started)
		env.DatabaseDataFS = hostenv.FSType(dir)
	} else {
		env.DatabaseURL = e.target.RedactedURL()
	}
	env.Command = strings.Join(append([]string{e.info.Name}, redactArgs(os.Args[1:])...), " ")
	e.report.Environment = env
	return nil
}

// redactArgs hides the password of a --postgres-url, --mysql-url or --redis-url given on the
// command line.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redactArg(a)
	}
	return out
}

// redactArg hides a password in a URL flag value ("--postgres-url=postgres://u:pw@h/db").
func redactArg(a string) string {
	if strings.Contains(a, "://") {
		if i := strings.Index(a, "="); i > 0 && strings.HasPrefix(a, "--") {
			return a[:i+1] + database.RedactURL(a[i+1:])
		}
		return database.RedactURL(a)
	}
	return a
}

// durability is "on", or "unsafe" when the server's settings trade it for speed:
// PostgreSQL's fsync or synchronous_commit off, InnoDB's redo log not flushed at every commit
// (innodb_flush_log_at_trx_commit 0 or 2) or its doublewrite buffer off.
func durability(s map[string]string) string {
	switch {
	case s["fsync"] == "off", s["synchronous_commit"] == "off":
		return "unsafe"
	case s["innodb_flush_log_at_trx_commit"] == "0", s["innodb_flush_log_at_trx_commit"] == "2", s["innodb_doublewrite"] == "OFF":
		return "unsafe"
	}
	return "on"
}
