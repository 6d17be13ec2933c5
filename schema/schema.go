// Package schema owns the SQL that defines hotspotkit's tables: embedded files applied in
// name order, each idempotent, into whatever schema is first on the connection's search_path.
// It must not seed data or know about suites; suites seed their own rows.
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

// Apply runs every embedded file, in order, in one transaction.
func Apply(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, name := range Files() {
		sql, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return fmt.Errorf("schema %s: %w", name, err)
		}
	}
	return tx.Commit(ctx)
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
