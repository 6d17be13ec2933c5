package script

import (
	"context"
	"fmt"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// mysqlSQL is MySQL's and MariaDB's (MariaDB 10.6 and MySQL 8.0.31 and later: EXCEPT ALL,
// CHECK constraints). Where PostgreSQL's pipelines a request's claim with its first
// statement, MySQL's claim is a statement of its own (database/sql sends one statement a
// round trip): sync costs one round trip more a request than the script's statements.
type mysqlSQL struct{ p *prepared }

// mysqlRowsPerInsert bounds the rows of one multi-row INSERT (the appended rows of a batch,
// the expected rows of a verification), to keep a statement well below max_allowed_packet.
const mysqlRowsPerInsert = 500

func (mysqlSQL) lexicon() pgscript.Dialect { return pgscript.MySQL }

func (mysqlSQL) quote(name string) string { return sqldb.MySQL.QuoteIdent(name) }

func (mysqlSQL) catalog(ctx context.Context, admin sqldb.Querier, schema string) (*sqlshape.Catalog, error) {
	return sqlshape.LoadMySQLCatalog(ctx, admin, schema, nil)
}

func (mysqlSQL) objects(ctx context.Context, q sqldb.Querier, schema string) ([]object, error) {
	return listObjects(ctx, q, `
		SELECT CASE TABLE_TYPE WHEN 'VIEW' THEN 'view' WHEN 'SEQUENCE' THEN 'sequence' ELSE 'table' END, TABLE_NAME
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = $1
		UNION ALL
		SELECT LOWER(ROUTINE_TYPE), ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = $1`, schema)
}

// drop drops the objects with the session's foreign key checks off: MySQL has no DROP …
// CASCADE, and a table referenced by another could not go first.
func (d mysqlSQL) drop(ctx context.Context, q sqldb.Querier, objs []object) (err error) {
	if _, err := q.Exec(ctx, "SET FOREIGN_KEY_CHECKS = 0"); err != nil {
		return err
	}
	defer func() {
		if _, e := q.Exec(ctx, "SET FOREIGN_KEY_CHECKS = 1"); err == nil {
			err = e
		}
	}()
	for _, o := range objs {
		if _, err := q.Exec(ctx, "DROP "+strings.ToUpper(o.kind)+" IF EXISTS "+d.quote(o.name)); err != nil {
			return fmt.Errorf("dropping %s %s before the init file runs again: %w", o.kind, o.name, err)
		}
	}
	return nil
}

func (d mysqlSQL) copyTable(ctx context.Context, q sqldb.Querier, copy, table string) error {
	_, err := q.Exec(ctx, "CREATE TABLE "+copy+" AS SELECT * FROM "+d.quote(table))
	return err
}

// checksum is CHECKSUM TABLE … EXTENDED: every row read, the rows' checksums added up
// whatever their order.
func (d mysqlSQL) checksum(ctx context.Context, q sqldb.Querier, table string) (string, error) {
	var name string
	var sum *string
	if err := q.QueryRow(ctx, "CHECKSUM TABLE "+d.quote(table)+" EXTENDED").Scan(&name, &sum); err != nil {
		return "", fmt.Errorf("checksumming %s: %w", table, err)
	}
	if sum == nil {
		return "", fmt.Errorf("checksumming %s: no such table", table)
	}
	return *sum, nil
}

// args are st's arguments typed, as the driver writes them into the statement: an integer
// as an integer literal, a double as its shortest decimal (an exact DECIMAL literal in MySQL,
// as the kit reads it), a boolean as 1 or 0, a string quoted. Text for every one (as
// PostgreSQL's are sent) would make MySQL compute c + '5' in floating point.
func (mysqlSQL) args(dst []any, st *pgscript.Statement) []any {
	for k, a := range st.Args {
		dst[k] = a.Any()
	}
	return dst
}

// recompute fails a sync request the kit cannot recompute, before it runs: MySQL writes it
// where PostgreSQL refuses (a decimal rounded into an integer column, a string added in
// floating point), and its verification could not say what it wrote.
func (d mysqlSQL) recompute(i int64) error {
	if d.p.core == nil {
		return nil // not recomputed: its verification says so
	}
	_, err := d.p.evaluate(i)
	return err
}

// claimSync claims the request with a statement of its own, then sends st.
func (d mysqlSQL) claimSync(ctx context.Context, tx sqldb.Tx, i int64, st *pgscript.Statement, sc *scratch) error {
	n, err := tx.Exec(ctx, "INSERT IGNORE INTO counter_claims (request_index, part) VALUES (?, 0)", i)
	if err != nil {
		return fmt.Errorf("claiming request %d: %w", i, err)
	}
	if n == 0 {
		return testkit.ErrAlreadyWritten
	}
	if st == nil {
		return nil
	}
	return d.p.run(ctx, tx, st, sc)
}

// prepareAppend composes a multi-row INSERT … VALUES for a batch's rows of w: w.sql its head
// and w.sqlRow one row, its client values as text (MySQL converts each to its column's type
// as it would the script's own INSERT), a server time taken as the batch lands.
func (d mysqlSQL) prepareAppend(w *write, cols []appendColumn) {
	names := make([]string, len(cols))
	row := make([]string, len(cols))
	for k, c := range cols {
		names[k] = d.quote(c.col.Name)
		row[k] = "?"
		if c.param == 0 {
			row[k] = c.server
		}
	}
	w.sql = "INSERT INTO " + d.quote(w.insert.Table.Name) + " (" + strings.Join(names, ", ") + ") VALUES "
	w.sqlRow = "(" + strings.Join(row, ", ") + ")"
}

// inserts are the multi-row INSERTs of rows, at most per rows each: head then each row's
// placeholders (row).
func inserts(head, row string, rows [][]any, per int) (stmts []string, args [][]any) {
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		var b strings.Builder
		b.WriteString(head)
		var a []any
		for k := start; k < end; k++ {
			if k > start {
				b.WriteString(", ")
			}
			b.WriteString(row)
			a = append(a, rows[k]...)
		}
		stmts, args = append(stmts, b.String()), append(args, a)
	}
	return stmts, args
}

func (d mysqlSQL) appendRows(ctx context.Context, tx sqldb.Tx, w *write, requests []int64) error {
	rows, err := d.p.appendValues(w, requests)
	if err != nil {
		return err
	}
	stmts, args := inserts(w.sql, w.sqlRow, rows, mysqlRowsPerInsert)
	for k, q := range stmts {
		if _, err := tx.Exec(ctx, q, args[k]...); err != nil {
			return err
		}
	}
	return nil
}

// claimOwn inserts the batch's rows of the claiming INSERT (one per request) with
// counters.ClaimRowsMySQL: one multi-row INSERT, row by row after a duplicate key.
func (d mysqlSQL) claimOwn(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]bool, error) {
	w := d.p.claimBy.write
	rows, err := d.p.appendValues(w, appendRequests(batch))
	if err != nil {
		return nil, err
	}
	if len(rows) != len(batch) {
		return nil, fmt.Errorf("line %d appends %d rows for %d requests: a claiming INSERT appends one", w.line, len(rows), len(batch))
	}
	isNew, _, err := counters.ClaimRowsMySQL(ctx, tx, len(rows), func(from, to int) (string, []any) {
		stmts, args := inserts(w.sql, w.sqlRow, rows[from:to], to-from)
		return stmts[0], args[0]
	})
	return isNew, err
}

func (d mysqlSQL) claimIndex(column string) string { return "CAST(" + d.quote(column) + " AS SIGNED)" }

// compareAppended loads the expected rows, as text, into a temporary table of the session
// whose columns are the table's own (created from it: the texts are converted as the
// appended rows were), and compares with EXCEPT ALL, one statement for each count (a
// temporary table is read once a statement in MySQL).
func (d mysqlSQL) compareAppended(ctx context.Context, conn sqldb.Conn, table, seed string, cols []appendColumn,
	expected [][]*string) (got, extra, missing int64, err error) {
	names := make([]string, len(cols))
	marks := make([]string, len(cols))
	for n, col := range cols {
		names[n] = d.quote(col.col.Name)
		marks[n] = "?"
	}
	list := strings.Join(names, ", ")
	id := d.quote(table)
	if _, err := conn.Exec(ctx, "CREATE TEMPORARY TABLE script_expected AS SELECT "+list+" FROM "+id+" LIMIT 0"); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if _, e := conn.Exec(ctx, "DROP TEMPORARY TABLE IF EXISTS script_expected"); err == nil {
			err = e
		}
	}()
	rows := make([][]any, len(expected))
	for k, e := range expected {
		rows[k] = make([]any, len(cols))
		for n, s := range e {
			if s != nil {
				rows[k][n] = *s
			}
		}
	}
	stmts, args := inserts("INSERT INTO script_expected ("+list+") VALUES ", "("+strings.Join(marks, ", ")+")", rows,
		mysqlRowsPerInsert)
	for k, q := range stmts {
		if _, err := conn.Exec(ctx, q, args[k]...); err != nil {
			return 0, 0, 0, fmt.Errorf("loading %s's expected rows: %w", table, err)
		}
	}
	want := "SELECT " + list + " FROM " + seed + " UNION ALL SELECT " + list + " FROM script_expected"
	for _, c := range []struct {
		dest  *int64
		query string
	}{
		{&got, "SELECT (SELECT COUNT(*) FROM " + id + ") - (SELECT COUNT(*) FROM " + seed + ")"},
		{&extra, "SELECT COUNT(*) FROM (SELECT " + list + " FROM " + id + " EXCEPT ALL (" + want + ")) x"},
		{&missing, "SELECT COUNT(*) FROM ((" + want + ") EXCEPT ALL SELECT " + list + " FROM " + id + ") x"},
	} {
		if err := conn.QueryRow(ctx, c.query).Scan(c.dest); err != nil {
			return 0, 0, 0, fmt.Errorf("comparing %s's rows: %w", table, err)
		}
	}
	return got, extra, missing, nil
}
