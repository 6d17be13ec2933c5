// Package schema owns the SQL that defines hotspotkit's shared tables — the core gateway rows
// and counter tables, package counters' own outbox, claims and openings, and the registry of a
// run split over several processes (the Redis backend's applied ids are queue/redisq's own table) —
// and applies them, then the files a suite names (testkit.Info.SQL: each suite package embeds
// its own tables), each idempotent, in name order, into whatever schema is first on the
// connection's search_path. It must not seed data or know about any one suite.
package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/*.sql
var files embed.FS

// Files lists the embedded SQL files in the order they are applied.
func Files() []string {
	names, err := fs.Glob(files, "sql/*.sql")
	if err != nil {
		panic(err) // the pattern is constant
	}
	sort.Strings(names)
	return names
}

// SuiteFiles lists the *.sql files at the root of a suite's file system, in the order they
// are applied.
func SuiteFiles(suite fs.FS) ([]string, error) {
	names, err := fs.Glob(suite, "*.sql")
	sort.Strings(names)
	return names, err
}

// Apply runs every shared file, then every *.sql file at the root of each suite file system
// (nil ones are skipped), in order, in one transaction.
func Apply(ctx context.Context, conn *pgx.Conn, suites ...fs.FS) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := exec(ctx, tx, files, Files()); err != nil {
		return err
	}
	for _, suite := range suites {
		if suite == nil {
			continue
		}
		names, err := SuiteFiles(suite)
		if err != nil {
			return err
		}
		if err := exec(ctx, tx, suite, names); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func exec(ctx context.Context, tx pgx.Tx, fsys fs.FS, names []string) error {
	for _, name := range names {
		sql, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("schema %s: %w", name, err)
		}
	}
	return nil
}

// Tables lists the tables the schema creates, for resets between runs.
func Tables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `
		SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY c.relname`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Reset empties every table of the current schema and restarts its sequences.
func Reset(ctx context.Context, conn *pgx.Conn) error {
	tables, err := Tables(ctx, conn)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return nil
	}
	ids := make([]string, len(tables))
	for i, t := range tables {
		ids[i] = pgx.Identifier{t}.Sanitize()
	}
	_, err = conn.Exec(ctx, "TRUNCATE "+strings.Join(ids, ", ")+" RESTART IDENTITY")
	return err
}
