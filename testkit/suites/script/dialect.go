package script

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// dialect is the suite's own SQL in one database's: how the script is scanned and its
// statements' catalog read, what an init file made and how it is dropped and recorded, how a
// request is claimed and its statements sent in sync, how the appended rows are written with
// their claim in the queue modes, and how verification compares them. PostgreSQL's
// (postgresSQL) uses its catalog, pipelined batches, arrays and COPY through pgx; MySQL's and
// MariaDB's (mysqlSQL, mysql.go) information_schema, multi-row INSERTs and CHECKSUM TABLE. A
// run picks one, once (dialectFor); the script's own statements are the user's, in the
// database's SQL.
type dialect interface {
	// lexicon is how the script and the init file are scanned.
	lexicon() pgscript.Dialect
	// quote quotes a name.
	quote(name string) string
	// catalog reads what the analysis knows of the tables of schema.
	catalog(ctx context.Context, admin sqldb.Querier, schema string) (*sqlshape.Catalog, error)
	// objects lists the objects of schema an init file may create.
	objects(ctx context.Context, q sqldb.Querier, schema string) ([]object, error)
	// drop drops objects the init file made, before it runs again.
	drop(ctx context.Context, q sqldb.Querier, objs []object) error
	// copyTable records table's rows in a new table, copy.
	copyTable(ctx context.Context, q sqldb.Querier, copy, table string) error
	// checksum is a digest of every row of table, whatever their order.
	checksum(ctx context.Context, q sqldb.Querier, table string) (string, error)
	// args are st's arguments as the driver sends them (nil: NULL), in dst (len(st.Args) long).
	args(dst []any, st *pgscript.Statement) []any
	// recompute fails sync request i, before it runs, where the database would write what
	// the kit cannot recompute.
	recompute(i int64) error
	// claimSync claims request i (its one part) in tx, sending statement st (nil: none)
	// with the claim where the dialect can in one round trip, or after it; it returns
	// testkit.ErrAlreadyWritten when an earlier try claimed the request.
	claimSync(ctx context.Context, tx sqldb.Tx, i int64, st *pgscript.Statement, sc *scratch) error
	// prepareAppend composes the INSERT of w's appended rows, its columns cols.
	prepareAppend(w *write, cols []appendColumn)
	// appendRows writes the rows requests append by w in tx.
	appendRows(ctx context.Context, tx sqldb.Tx, w *write, requests []int64) error
	// claimOwn inserts the rows of the script's claiming INSERT for batch, skipping those
	// there already, and says which it inserted, by the batch's index.
	claimOwn(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]bool, error)
	// claimIndex is the SQL expression of a claim row's request index, held in column.
	claimIndex(column string) string
	// compareAppended compares table's rows (columns names) with seed's and expected:
	// how many more rows it has than seed, how many of them are no expected row, and how
	// many expected rows are missing. cols are the compared columns.
	compareAppended(ctx context.Context, conn sqldb.Conn, table, seed string, cols []appendColumn,
		expected [][]*string) (got, extra, missing int64, err error)
}

// dialectFor is the suite's SQL for a run of p in dialect d.
func dialectFor(d sqldb.Dialect, p *prepared) (dialect, error) {
	switch d {
	case sqldb.Postgres:
		return postgresSQL{p}, nil
	case sqldb.MySQL:
		return mysqlSQL{p}, nil
	}
	return nil, fmt.Errorf("the script suite has no statements for the %s dialect", d)
}

// postgresSQL is PostgreSQL's.
type postgresSQL struct{ p *prepared }

func (postgresSQL) lexicon() pgscript.Dialect { return pgscript.Postgres }

func (postgresSQL) quote(name string) string { return sqldb.Postgres.QuoteIdent(name) }

func (postgresSQL) catalog(ctx context.Context, admin sqldb.Querier, schema string) (*sqlshape.Catalog, error) {
	pg, err := sqldb.RequirePgx(admin) // its catalog is read through pgx (arrays, oids)
	if err != nil {
		return nil, err
	}
	return sqlshape.LoadCatalog(ctx, pg, schema, nil)
}

// objectsSQL lists the schema's objects an init file may create.
const objectsSQL = `
	SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view'
	                      WHEN 'm' THEN 'materialized view' ELSE 'sequence' END, c.relname
	FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
	UNION ALL
	SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, p.oid::regprocedure::text
	FROM pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prokind IN ('f', 'p')
	UNION ALL
	SELECT 'type', format_type(t.oid, NULL)
	FROM pg_type t WHERE t.typnamespace = $1::regnamespace AND t.typtype IN ('d', 'e', 'r')`

func (d postgresSQL) objects(ctx context.Context, q sqldb.Querier, schema string) ([]object, error) {
	return listObjects(ctx, q, objectsSQL, d.quote(schema))
}

// listObjects lists the objects query returns, as (kind, name) rows.
func listObjects(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]object, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing the schema's objects: %w", err)
	}
	var out []object
	var o object
	err = sqldb.ForEachRow(rows, []any{&o.kind, &o.name}, func() error { out = append(out, o); return nil })
	return out, err
}

func (d postgresSQL) drop(ctx context.Context, q sqldb.Querier, objs []object) error {
	for _, o := range objs { // tables first: their views and sequences go with them
		name := o.name
		if o.kind == "table" || o.kind == "view" || o.kind == "materialized view" || o.kind == "sequence" {
			name = d.quote(o.name)
		}
		if _, err := q.Exec(ctx, "DROP "+o.kind+" IF EXISTS "+name+" CASCADE"); err != nil {
			return fmt.Errorf("dropping %s %s before the init file runs again: %w", o.kind, o.name, err)
		}
	}
	return nil
}

func (d postgresSQL) copyTable(ctx context.Context, q sqldb.Querier, copy, table string) error {
	_, err := q.Exec(ctx, "CREATE TABLE "+copy+" AS TABLE "+d.quote(table))
	return err
}

func (d postgresSQL) checksum(ctx context.Context, q sqldb.Querier, table string) (string, error) {
	var sum *string
	err := q.QueryRow(ctx, `SELECT md5(string_agg(r::text, E'\n' ORDER BY r::text)) FROM `+d.quote(table)+` r`).Scan(&sum)
	if err != nil {
		return "", fmt.Errorf("checksumming %s: %w", table, err)
	}
	if sum == nil {
		return "empty", nil
	}
	return *sum, nil
}

// args are st's arguments as text, as pgbench's extended and prepared modes send them: the
// server reads each as its parameter's type (an integer variable into a text column is '7').
func (postgresSQL) args(dst []any, st *pgscript.Statement) []any {
	for k, a := range st.Args {
		dst[k] = nil
		if a.Kind() != pgscript.Null {
			dst[k] = a.Text()
		}
	}
	return dst
}

// recompute: PostgreSQL refuses for itself what the kit could not recompute.
func (postgresSQL) recompute(int64) error { return nil }

// syncClaimSQL is the claim of request $1 (its one part): it inserts nothing when the request
// was claimed before.
const syncClaimSQL = `INSERT INTO counter_claims (request_index, part) VALUES ($1::int8, 0) ON CONFLICT DO NOTHING`

// claimSync sends the claim and st in one round trip, pipelined.
func (d postgresSQL) claimSync(ctx context.Context, tx sqldb.Tx, i int64, st *pgscript.Statement, sc *scratch) error {
	ptx, err := sqldb.RequirePgx(tx)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(syncClaimSQL, i)
	if st != nil {
		b.Queue(st.Command.SQL, d.p.args(st, sc)...)
	}
	br := ptx.SendBatch(ctx, &b)
	tag, err := br.Exec()
	if err != nil {
		br.Close()
		return fmt.Errorf("claiming request %d: %w", i, err)
	}
	if st != nil {
		rows, err := br.Query()
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			br.Close()
			return fmt.Errorf("line %d: %w", st.Command.Line, err)
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return testkit.ErrAlreadyWritten
	}
	return nil
}

// prepareAppend composes one INSERT … SELECT for a batch's rows of w: each client-valued
// column's values as one text array, unnested and cast to the column's type, a server time
// taken as the batch lands.
func (d postgresSQL) prepareAppend(w *write, cols []appendColumn) {
	ins := w.insert
	names := make([]string, len(cols))
	sel := make([]string, len(cols))
	var arrays, aliases []string
	for k, c := range cols {
		names[k] = d.quote(c.col.Name)
		if c.param == 0 {
			sel[k] = c.server
			continue
		}
		alias := "c" + strconv.Itoa(c.param)
		sel[k] = "u." + alias + "::" + c.col.TypeName
		arrays = append(arrays, "$"+strconv.Itoa(c.param)+"::text::text[]")
		aliases = append(aliases, alias)
	}
	w.sql = "INSERT INTO " + d.quote(ins.Table.Name) + " (" + strings.Join(names, ", ") + ")\n\tSELECT " +
		strings.Join(sel, ", ")
	if len(arrays) > 0 {
		w.sql += "\n\tFROM unnest(" + strings.Join(arrays, ", ") + ") AS u(" + strings.Join(aliases, ", ") + ")"
	} else {
		w.sql += "\n\tFROM generate_series(1, $1::int)" // every column a server time or default: one row per source row
	}
}

func (d postgresSQL) appendRows(ctx context.Context, tx sqldb.Tx, w *write, requests []int64) error {
	args, _, err := d.p.appendArgs(w, requests)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, w.sql, args...)
	return err
}

// claimOwn inserts the batch's rows with ON CONFLICT DO NOTHING, and reads back the request
// index of those it inserted.
func (d postgresSQL) claimOwn(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]bool, error) {
	c := d.p.claimBy
	args, _, err := d.p.appendArgs(c.write, appendRequests(batch))
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(c.key))
	for k, col := range c.key {
		keys[k] = d.quote(col)
	}
	rows, err := tx.Query(ctx, c.sql+"\n\tON CONFLICT ("+strings.Join(keys, ", ")+") DO NOTHING RETURNING "+
		d.claimIndex(c.column), args...)
	if err != nil {
		return nil, err
	}
	inserted, err := sqldb.CollectRows[int64](rows)
	if err != nil {
		return nil, err
	}
	isNew := make(map[int64]bool, len(inserted))
	for _, i := range inserted {
		isNew[i] = true
	}
	out := make([]bool, len(batch))
	for k, src := range batch {
		if isNew[src.Request] {
			delete(isNew, src.Request) // a request repeated in the batch is claimed once
			out[k] = true
		}
	}
	return out, nil
}

func (d postgresSQL) claimIndex(column string) string { return d.quote(column) + "::int8" }

// compareAppended loads the expected rows, as text, into a temporary table of a transaction
// of its own with COPY, and compares with EXCEPT ALL, casting them to the columns' types.
func (d postgresSQL) compareAppended(ctx context.Context, conn sqldb.Conn, table, seed string, cols []appendColumn,
	expected [][]*string) (got, extra, missing int64, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	defer sqldb.Rollback(ctx, tx)
	ptx, err := sqldb.RequirePgx(tx) // the expected rows go in with COPY
	if err != nil {
		return 0, 0, 0, err
	}
	names := make([]string, len(cols))
	typed := make([]string, len(cols))
	defs := make([]string, len(cols))
	copyCols := make([]string, len(cols))
	for n, col := range cols {
		names[n] = d.quote(col.col.Name)
		typed[n] = "e.c" + strconv.Itoa(n) + "::" + col.col.TypeName
		defs[n] = "c" + strconv.Itoa(n) + " text"
		copyCols[n] = "c" + strconv.Itoa(n)
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE script_expected ("+strings.Join(defs, ", ")+") ON COMMIT DROP"); err != nil {
		return 0, 0, 0, err
	}
	rows := make([][]any, len(expected))
	for k, e := range expected {
		rows[k] = make([]any, len(cols))
		for n, s := range e {
			if s != nil {
				rows[k][n] = *s
			}
		}
	}
	if _, err := ptx.CopyFrom(ctx, pgx.Identifier{"script_expected"}, copyCols, pgx.CopyFromRows(rows)); err != nil {
		return 0, 0, 0, fmt.Errorf("loading %s's expected rows: %w", table, err)
	}
	list := strings.Join(names, ", ")
	id := d.quote(table)
	want := "SELECT " + list + " FROM " + seed + " UNION ALL SELECT " + strings.Join(typed, ", ") + " FROM script_expected e"
	err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+id+`) - (SELECT count(*) FROM `+seed+`),
		(SELECT count(*) FROM (SELECT `+list+` FROM `+id+` EXCEPT ALL (`+want+`)) x),
		(SELECT count(*) FROM ((`+want+`) EXCEPT ALL SELECT `+list+` FROM `+id+`) x)`).Scan(&got, &extra, &missing)
	return got, extra, missing, err
}
