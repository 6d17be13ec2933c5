package counters

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// MySQL's and MariaDB's statements (the dialect mysqlSQL), for the tables of package
// schema's mysql/*.sql: a key column of text is a VARCHAR in utf8mb4_bin (compared by its
// bytes, as the kit compares keys), an amount a DECIMAL(…, 8), a time a DATETIME(6) holding
// UTC, and counter_outbox's and counter_openings' values are JSON arrays of texts. What
// differs from PostgreSQL's, and why:
//   - No arrays to send a batch's rows in: a compacted UPDATE joins JSON_TABLE over one
//     parameter, a JSON array of the rows (chosen by BenchmarkMySQLCompacted over a derived
//     table of one SELECT per row, UNION ALL, and a VALUES table constructor: as little of the
//     server's time as either or less at every size, the least of the client's, one statement
//     text whatever the rows, and MySQL 8's as well as MariaDB's), read first (STRAIGHT_JOIN)
//     and finding each row by the primary key (FORCE INDEX), so that a row is locked in the
//     order the rows are sent, which is key order, and no other row is (a small table would
//     otherwise be scanned, every row of it locked). A value has its column's type in SQL (the
//     single-row UPDATE casts its parameters): MySQL adds a number and a string as doubles.
//   - MySQL's GREATEST and LEAST are NULL when one argument is: COALESCE keeps the other, as
//     PostgreSQL's ignore a NULL. MySQL assigns a single-table UPDATE's SET list left to
//     right, each assignment seeing the ones before it: the only SET expression that reads
//     another column, a FollowsNewest column's test of the Greatest column it follows, gives
//     the same answer with that column's old value or its new one.
//   - The server's time is UTC_TIMESTAMP(6), whatever the session's time zone.
//   - No pipelining: each statement is a round trip, and a claim is one multi-row INSERT that
//     fails on a duplicate key (1062; MySQL rolls back the statement, not the transaction),
//     then, only after that, one INSERT per row (ClaimRowsMySQL).
//   - The flush loop reads the outbox in READ COMMITTED: under REPEATABLE READ its locking
//     read would hold the gap at the end of the pending rows, and every request's INSERT
//     into the outbox would wait for the flush to commit.

// mysqlSQL is MySQL's and MariaDB's statements (FOR UPDATE SKIP LOCKED: MariaDB 10.6, MySQL
// 8.0; JSON_VALUE: MariaDB 10.2, MySQL 8.0.21).
type mysqlSQL struct{}

// ready refuses a server older than the statements: MariaDB before 10.6 or MySQL before 8.0.4
// (JSON_TABLE; FOR UPDATE SKIP LOCKED).
func (mysqlSQL) ready(ctx context.Context, conn sqldb.Querier) error {
	var version string
	if err := conn.QueryRow(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return err
	}
	return mysqlVersionReady(version)
}

// mysqlVersionReady is ready's rule on a server's VERSION().
func mysqlVersionReady(version string) error {
	mysql, mariadb := [3]int{8, 0, 4}, [3]int{10, 6, 0}
	least, server := mysql, "MySQL"
	if sqldb.IsMariaDB(version) {
		least, server = mariadb, "MariaDB"
	}
	ok, err := sqldb.MySQLAtLeast(version, mysql, mariadb)
	switch {
	case err != nil:
		return fmt.Errorf("counters: %w", err)
	case !ok:
		return fmt.Errorf("counters: %s %s is older than the statements (JSON_TABLE, FOR UPDATE SKIP LOCKED): %d.%d.%d or newer",
			server, version, least[0], least[1], least[2])
	}
	return nil
}

// myIdent quotes a name for MySQL.
func myIdent(name string) string { return sqldb.MySQL.QuoteIdent(name) }

func (mysqlSQL) quote(name string) string { return myIdent(name) }

// HotSetsMySQL is a derived table, s, of the numbers 0..$1-1 in its column h: what a
// declaration's MySQL seed selects its rows from where PostgreSQL's calls generate_series(0,
// $1 - 1). It counts in thousands and units, so that no recursion goes deeper than 999
// (MySQL's cte_max_recursion_depth and MariaDB's max_recursive_iterations are 1000 by
// default), up to a million.
const HotSetsMySQL = `(WITH RECURSIVE lo(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM lo WHERE n < LEAST(999, $1 - 1)),
		hi(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM hi WHERE n < ($1 - 1) DIV 1000)
		SELECT hi.n * 1000 + lo.n AS h FROM hi, lo WHERE hi.n * 1000 + lo.n < $1) AS s`

// mysqlCast is the CAST a parameter of type typ takes ("": none, a text).
func mysqlCast(typ Type) string {
	switch typ {
	case TypeInteger:
		return "SIGNED"
	case TypeNumeric:
		return "DECIMAL(65, 8)"
	case TypeTimestamptz:
		return "DATETIME(6)"
	}
	return ""
}

// cast is expr cast to typ (mysqlCast).
func cast(expr string, typ Type) string {
	if c := mysqlCast(typ); c != "" {
		return "CAST(" + expr + " AS " + c + ")"
	}
	return expr
}

// mysqlTimeLayout is how a time is sent: DATETIME(6)'s text, in UTC.
const mysqlTimeLayout = "2006-01-02 15:04:05.000000"

// MySQLValue is v as a MySQL parameter (the driver interpolates it: an amount goes as its exact
// text, a time as DATETIME's).
func MySQLValue(v Value) any {
	switch v.typ {
	case TypeInteger:
		return v.n
	case TypeNumeric:
		return decimal.Decimal(v.n).String()
	case TypeTimestamptz:
		return v.Time().Format(mysqlTimeLayout)
	}
	return v.s
}

// mysqlArgs appends d's parameters of key's UPDATE (Table.params) to args.
func (t *Table) mysqlArgs(args []any, key statementKey, d Delta) []any {
	args = t.appendKeyArgs(args, d.Row)
	for i, c := range t.spec.Columns {
		if key.union&(1<<i) == 0 || c.Op == ServerTime {
			continue
		}
		switch p := d.Change.pos[i]; {
		case p >= 0:
			args = append(args, MySQLValue(d.Values[p]))
		case c.Op == Add: // a delta that leaves an Add column out adds nothing
			args = append(args, MySQLValue(Value{typ: t.types[i]}))
		default:
			args = append(args, nil)
		}
	}
	for i, c := range t.spec.Columns {
		if key.partial&(1<<i) != 0 && c.Op == ServerTime {
			args = append(args, d.Change.mask&(1<<i) != 0)
		}
	}
	if key.slotted {
		args = append(args, int64(d.Slot))
	}
	return args
}

// mysqlSetter is MySQL's setter: the row t, the delta's values dc (a derived table's
// columns, or a single-row UPDATE's parameters); GREATEST and LEAST made to ignore a NULL, as
// PostgreSQL's do.
func mysqlSetter(dc func(name string) string) setter {
	return setter{
		lhs: func(name string) string { return "t." + myIdent(name) },
		tc:  func(name string) string { return "t." + myIdent(name) },
		dc:  dc,
		extreme: func(fn, a, b string) string {
			return "COALESCE(" + fn + "(" + a + ", " + b + "), " + a + ", " + b + ")"
		},
		now: "UTC_TIMESTAMP(6)",
	}
}

// mysqlScalarUpdate is key's single-row UPDATE, a hand-written service's: its parameters are
// mysqlArgs' of one delta, each cast to its column's type where it is used.
func (t *Table) mysqlScalarUpdate(key statementKey) string {
	params := t.params(key)
	at := make(map[string]string, len(params))
	for i, p := range params {
		at[p.name] = cast("$"+strconv.Itoa(i+1), p.typ)
	}
	set := t.setList(key, mysqlSetter(func(name string) string { return at[name] }))
	where := make([]string, 0, len(t.spec.Key)+1)
	for _, k := range t.spec.Key {
		where = append(where, "t."+myIdent(k.Name)+" = "+at[k.Name])
	}
	if key.slotted {
		where = append(where, "t.slot = "+at["slot"])
	}
	return "UPDATE " + myIdent(t.spec.Name) + " AS t SET " + set + "\n\tWHERE " + strings.Join(where, " AND ")
}

// mysqlJSONType is the type JSON_TABLE reads a parameter of type typ as.
func mysqlJSONType(typ Type) string {
	switch typ {
	case TypeInteger:
		return "BIGINT"
	case TypeNumeric:
		return "DECIMAL(65, 8)"
	case TypeTimestamptz:
		return "DATETIME(6)"
	}
	return "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
}

// mysqlJSONUpdate is key's UPDATE of many rows at once: the rows' relation d is JSON_TABLE
// over one parameter, a JSON array of the rows (mysqlRows), each an array of its parameters
// (Table.params, mysqlArgs); the statement is the same whatever the number of rows.
func (t *Table) mysqlJSONUpdate(key statementKey) string {
	params := t.params(key)
	cols := make([]string, len(params))
	for i, p := range params {
		cols[i] = fmt.Sprintf("%s %s PATH '$[%d]'", myIdent(p.name), mysqlJSONType(p.typ), i)
	}
	return t.mysqlJoinUpdate(key, "JSON_TABLE($1, '$[*]' COLUMNS ("+strings.Join(cols, ", ")+"))")
}

// mysqlRows is the JSON array of ds's rows for key's mysqlJSONUpdate: each row an array of
// its parameters (mysqlArgs), a flag as 1 or 0.
func (t *Table) mysqlRows(key statementKey, ds []Delta) string {
	b := make([]byte, 0, 64*len(ds))
	b = append(b, '[')
	var args []any
	for k, d := range ds {
		if k > 0 {
			b = append(b, ',')
		}
		args = t.mysqlArgs(args[:0], key, d)
		b = append(b, '[')
		for i, a := range args {
			if i > 0 {
				b = append(b, ',')
			}
			switch a := a.(type) {
			case nil:
				b = append(b, "null"...)
			case int64:
				b = strconv.AppendInt(b, a, 10)
			case bool:
				b = append(b, '0')
				if a {
					b[len(b)-1] = '1'
				}
			case string:
				b = appendJSONString(b, a)
			default:
				panic(fmt.Sprintf("counters: no JSON of a %T parameter", a))
			}
		}
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// appendJSONString appends s to b as a JSON string: quoted, with a quote, a backslash and
// every control character escaped, and each byte that is not UTF-8 the replacement character,
// as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, fmt.Sprintf(`\u%04x`, r)...)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// mysqlJoinUpdate is key's UPDATE of t from source, a relation of the rows whose columns are
// named as Table.params names them: source read first, each row of t found by its primary key.
func (t *Table) mysqlJoinUpdate(key statementKey, source string) string {
	on := make([]string, 0, len(t.spec.Key)+1)
	for _, k := range t.spec.Key {
		on = append(on, "t."+myIdent(k.Name)+" = d."+myIdent(k.Name))
	}
	if key.slotted {
		on = append(on, "t.slot = d.slot")
	}
	set := t.setList(key, mysqlSetter(func(name string) string { return "d." + myIdent(name) }))
	return "UPDATE " + source + " AS d\n\tSTRAIGHT_JOIN " + myIdent(t.spec.Name) + " AS t FORCE INDEX (PRIMARY) ON " +
		strings.Join(on, " AND ") + "\n\tSET " + set
}

// mysqlStatement is t's MySQL UPDATE of key, composed on first use: of many rows (key.arrays:
// mysqlJSONUpdate) or of one (mysqlScalarUpdate).
func (t *Table) mysqlStatement(key statementKey) string {
	return t.composed(&t.mysqlStatements, key, func(key statementKey) string {
		if key.arrays {
			return t.mysqlJSONUpdate(key)
		}
		return t.mysqlScalarUpdate(key)
	})
}

func (mysqlSQL) applyEach(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	for i, d := range deltas {
		t := d.Change.table
		key := statementKey{union: d.Change.mask, slotted: d.slotted()}
		n, err := tx.Exec(ctx, t.mysqlStatement(key), t.mysqlArgs(nil, key, d)...)
		if err == nil {
			err = checkAffected(deltas[i:i+1], n)
		}
		if err != nil {
			return i + 1, fmt.Errorf("applying a delta to %s: %w", t.FormatKey(d.Key), err)
		}
	}
	return len(deltas), nil
}

func (mysqlSQL) apply(ctx context.Context, tx sqldb.Tx, deltas []Delta) (int, error) {
	groups := groupsOf(Compact(deltas))
	for k, g := range groups {
		key := groupKey(g)
		key.arrays = true
		t := g[0].Change.table
		n, err := tx.Exec(ctx, t.mysqlStatement(key), t.mysqlRows(key, g))
		if err == nil {
			err = checkAffected(g, n)
		}
		if err != nil {
			return k + 1, fmt.Errorf("applying %d %s deltas: %w", len(g), g[0].Table, err)
		}
	}
	return len(groups), nil
}

func (mysqlSQL) insertOutbox(ctx context.Context, tx sqldb.Tx, deltas []Delta) error {
	var b strings.Builder
	b.WriteString("INSERT INTO counter_outbox (request_index, `position`, table_name, row_key, slot, `columns`, vals) VALUES ")
	args := make([]any, 0, 7*len(deltas))
	for i, d := range deltas {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?)")
		vals := make([]string, len(d.Values))
		for k, v := range d.Values {
			vals[k] = v.encode()
		}
		text, err := json.Marshal(vals)
		if err != nil {
			return fmt.Errorf("outbox insert: %w", err)
		}
		args = append(args, d.Order>>16, d.Order&(maxPositions-1), d.Table, d.Row, d.Slot, int64(d.Change.mask), string(text))
	}
	if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("outbox insert: %w", err)
	}
	return nil
}

func (mysqlSQL) flusherSession(ctx context.Context, conn sqldb.Conn) error {
	_, err := conn.Exec(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
	return err
}

func (mysqlSQL) claimOutbox(ctx context.Context, tx sqldb.Tx, limit int, each func(outboxRow) error) error {
	rows, err := tx.Query(ctx, "SELECT id, request_index, `position`, table_name, row_key, slot, `columns`, vals\n"+
		"\t\tFROM counter_outbox\n"+
		"\t\tWHERE processed_at IS NULL\n"+
		"\t\tORDER BY id\n"+
		"\t\tLIMIT $1\n"+
		"\t\tFOR UPDATE SKIP LOCKED", limit)
	if err != nil {
		return err
	}
	var row outboxRow
	return sqldb.ForEachRow(rows, []any{&row.id, &row.request, &row.position, &row.table, &row.key, &row.slot, &row.columns,
		jsonTexts{&row.vals}}, func() error { return each(row) })
}

func (mysqlSQL) markProcessed(ctx context.Context, tx sqldb.Tx, ids []int64) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	_, err := tx.Exec(ctx, "UPDATE counter_outbox SET processed_at = UTC_TIMESTAMP(6) WHERE id IN ("+sqldb.Marks(len(ids))+")", args...)
	return err
}

// jsonTexts scans a JSON array of texts (null: an empty list) into *dst.
type jsonTexts struct{ dst *[]string }

func (j jsonTexts) Scan(src any) error {
	*j.dst = nil
	return scanJSON(src, j.dst)
}

// jsonNullTexts scans a JSON array of texts and nulls into *dst.
type jsonNullTexts struct{ dst *[]*string }

func (j jsonNullTexts) Scan(src any) error {
	*j.dst = nil
	return scanJSON(src, j.dst)
}

// scanJSON decodes src, a column's JSON text, into dst.
func scanJSON(src any, dst any) error {
	var text []byte
	switch s := src.(type) {
	case nil:
		return nil
	case []byte:
		text = s
	case string:
		text = []byte(s)
	default:
		return fmt.Errorf("counters: a JSON array of texts, not %T", src)
	}
	if err := json.Unmarshal(text, dst); err != nil {
		return fmt.Errorf("counters: a JSON array of texts: %w", err)
	}
	return nil
}

var (
	_ sql.Scanner = jsonTexts{}
	_ sql.Scanner = jsonNullTexts{}
)

func (mysqlSQL) seedSlots(ctx context.Context, conn sqldb.Querier, n int, t *Table) error {
	table := myIdent(t.Name())
	cols := slotColumns(t, myIdent)
	from := make([]string, len(cols))
	for i, c := range cols {
		from[i] = "t." + c
	}
	if _, err := conn.Exec(ctx, `UPDATE `+table+` SET slot = 1 WHERE slot = 0`); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`, slot)
		SELECT `+strings.Join(from, ", ")+`, s.h + 2 FROM `+table+` AS t, `+HotSetsMySQL+` WHERE t.slot = 1`, n-1)
	return err
}

func (mysqlSQL) describe(ctx context.Context, conn sqldb.Querier, table string) (sqldb.Rows, error) {
	return conn.Query(ctx, `
		SELECT c.COLUMN_NAME, c.COLUMN_TYPE,
		       c.IS_NULLABLE = 'NO' AND c.COLUMN_DEFAULT IS NULL AND c.EXTRA NOT LIKE '%auto_increment%',
		       k.ORDINAL_POSITION
		FROM information_schema.COLUMNS c
		LEFT JOIN information_schema.KEY_COLUMN_USAGE k ON k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME
		     AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'
		WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = $1
		ORDER BY c.ORDINAL_POSITION`, table)
}

// ClaimRowsMySQL is the claim of n rows on MySQL, one per source of a batch, into a table
// whose unique key makes a row the source's claim: insert(from, to) is the INSERT of rows
// from..to-1 (one multi-row INSERT). It returns, by row, whether this transaction inserted it
// (a row repeated in the batch is new once, the first time), and the statements it sent. The
// fast path, a batch that no transaction claimed before, is that one INSERT of every row;
// when it fails on a duplicate key (1062: MySQL rolled that statement back, and the
// transaction goes on) each row is inserted on its own, and a duplicate is not new. A row a
// transaction still in flight inserted makes its INSERT wait for that transaction's end, as
// InnoDB does for a duplicate key check: never read past.
func ClaimRowsMySQL(ctx context.Context, tx sqldb.Tx, n int, insert func(from, to int) (string, []any)) ([]bool, int, error) {
	isNew := make([]bool, n)
	if n == 0 {
		return isNew, 0, nil
	}
	q, args := insert(0, n)
	_, err := tx.Exec(ctx, q, args...)
	switch {
	case err == nil:
		for i := range isNew {
			isNew[i] = true
		}
		return isNew, 1, nil
	case !sqldb.IsUniqueViolation(err):
		return nil, 1, err
	case n == 1:
		return isNew, 1, nil
	}
	for i := range n {
		q, args := insert(i, i+1)
		_, err := tx.Exec(ctx, q, args...)
		switch {
		case err == nil:
			isNew[i] = true
		case !sqldb.IsUniqueViolation(err):
			return nil, 2 + i, err
		}
	}
	return isNew, 1 + n, nil
}

// InsertMySQL is the multi-row INSERT INTO table (columns) of rows from..to-1, each row's
// values given by values (one per column), and its arguments: what ClaimRowsMySQL's insert
// returns.
func InsertMySQL(table string, columns []string, from, to int, values func(row int, vals []any) []any) (string, []any) {
	var b strings.Builder
	b.WriteString("INSERT INTO " + myIdent(table) + " (")
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(myIdent(c))
	}
	b.WriteString(") VALUES ")
	row := "(" + sqldb.Marks(len(columns)) + ")"
	args := make([]any, 0, (to-from)*len(columns))
	for i := from; i < to; i++ {
		if i > from {
			b.WriteString(", ")
		}
		b.WriteString(row)
		args = values(i, args)
	}
	return b.String(), args
}

// claimMySQL is PartClaim.Claim on MySQL.
func (p PartClaim) claimMySQL(ctx context.Context, tx sqldb.Tx, batch []Source) ([]Source, int, error) {
	isNew, ops, err := ClaimRowsMySQL(ctx, tx, len(batch), func(from, to int) (string, []any) {
		return InsertMySQL(p.Table, []string{p.RequestColumn, p.PartColumn}, from, to, func(i int, vals []any) []any {
			src := batch[i]
			if p.PartLabels != nil {
				return append(vals, src.Request, p.PartLabels[src.Part])
			}
			return append(vals, src.Request, int64(src.Part))
		})
	})
	if err != nil {
		return nil, ops, fmt.Errorf("claiming the batch in %s: %w", p.Table, err)
	}
	return Fresh(batch, isNew), ops, nil
}

// Fresh are the sources of batch that isNew (by index) says are new, in batch order.
func Fresh(batch []Source, isNew []bool) []Source {
	fresh := make([]Source, 0, len(batch))
	for i, src := range batch {
		if isNew[i] {
			fresh = append(fresh, src)
		}
	}
	return fresh
}
