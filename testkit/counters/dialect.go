package counters

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// dialect is the package's statements in one database's SQL: how deltas are written
// (compacted and one by one), how the outbox is written and flushed, how slots are seeded and
// openings recorded, and how verification reads a table. PostgreSQL's (postgresSQL) use arrays,
// pipelined batches and COPY through pgx; MySQL's and MariaDB's (mysqlSQL, mysql.go) use
// derived tables of the rows, multi-row INSERTs and JSON arrays of texts. A run picks one,
// once (statementsFor); the package's functions that take a handle pick by its Dialect.
type dialect interface {
	// ready fails, saying why, when the server lacks what the statements use.
	ready(ctx context.Context, conn sqldb.Querier) error
	// apply writes deltas merged per row, one UPDATE per table (Apply); applyEach writes each
	// as its own single-row UPDATE, in order (ApplyEach). Both return the statements sent.
	apply(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error)
	applyEach(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error)
	// insertOutbox records deltas in counter_outbox, in one statement (InsertOutbox).
	insertOutbox(ctx context.Context, tx sqldb.Tx, deltas []Delta) error
	// flusherSession readies a flush loop's new connection.
	flusherSession(ctx context.Context, conn sqldb.Conn) error
	// claimOutbox locks up to limit pending outbox rows, oldest first, skipping those another
	// flush holds, and calls each with every one; markProcessed marks rows processed.
	claimOutbox(ctx context.Context, tx sqldb.Tx, limit int, each func(outboxRow) error) error
	markProcessed(ctx context.Context, tx sqldb.Tx, ids []int64) error
	// seedSlots splits t's seeded rows into n slots (SeedSlots, n > 1).
	seedSlots(ctx context.Context, conn sqldb.Querier, n int, t *Table) error
	// snapshot records the openings of t's logical rows (snapshot).
	snapshot(ctx context.Context, conn sqldb.Querier, t *Table) error
	// reads are the statements verification reads a table's rows with (expectedTable.read).
	reads() rowReads
	// describe lists a table's columns from the catalog, as package function describe reads
	// them (Describe).
	describe(ctx context.Context, conn sqldb.Querier, table string) (sqldb.Rows, error)
	// quote quotes a name.
	quote(name string) string
}

// dialectOf is the package's statements for d.
func dialectOf(d sqldb.Dialect) (dialect, error) {
	switch d {
	case sqldb.Postgres:
		return postgresSQL{}, nil
	case sqldb.MySQL:
		return mysqlSQL{}, nil
	}
	return nil, fmt.Errorf("counters: no statements for the %s dialect", d)
}

// dialectFor is the package's statements for the dialect of h, a handle of package sqldb's
// (the dialects sqldb knows all have them).
func dialectFor(h interface{ Dialect() sqldb.Dialect }) dialect {
	d, err := dialectOf(h.Dialect())
	if err != nil {
		panic(err)
	}
	return d
}

// postgresSQL is PostgreSQL's statements.
type postgresSQL struct{}

func (postgresSQL) ready(context.Context, sqldb.Querier) error { return nil }

func (postgresSQL) apply(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	return applyPostgres(ctx, tx, deltas)
}

func (postgresSQL) applyEach(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	return applyEachPostgres(ctx, tx, deltas)
}

func (postgresSQL) insertOutbox(ctx context.Context, tx sqldb.Tx, deltas []Delta) error {
	return insertOutboxPostgres(ctx, tx, deltas)
}

func (postgresSQL) flusherSession(context.Context, sqldb.Conn) error { return nil }

func (postgresSQL) claimOutbox(ctx context.Context, tx sqldb.Tx, limit int, each func(outboxRow) error) error {
	return claimOutboxPostgres(ctx, tx, limit, each)
}

func (postgresSQL) markProcessed(ctx context.Context, tx sqldb.Tx, ids []int64) error {
	_, err := tx.Exec(ctx, `UPDATE counter_outbox SET processed_at = now() WHERE id = ANY($1)`, ids)
	return err
}

func (postgresSQL) seedSlots(ctx context.Context, conn sqldb.Querier, n int, t *Table) error {
	return seedSlotsPostgres(ctx, conn, n, t)
}

func (postgresSQL) snapshot(ctx context.Context, conn sqldb.Querier, t *Table) error {
	return snapshotPostgres(ctx, conn, t)
}

func (postgresSQL) reads() rowReads { return pgReads{} }

func (postgresSQL) describe(ctx context.Context, conn sqldb.Querier, table string) (sqldb.Rows, error) {
	return describePostgres(ctx, conn, table)
}

func (postgresSQL) quote(name string) string { return ident(name) }
