package counters

import (
	"context"
	"fmt"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Verification's reads on MySQL (rowReads). A row is keyed by its Key.Row text (row_key: the
// key columns' texts joined as Table.Row joins them, which the server writes too, rowKeyMySQL)
// and its values are a JSON array of texts, each as encode writes a value (vals; the server
// casts every value to text, so that an amount keeps its 8 places and a time is its
// microseconds). Two logical rows hold the same values when their arrays are the same text,
// compared by its bytes (utf8mb4_bin): MySQL's JSON type would compare a JSON array with a
// string as two different JSON values, so the arrays are texts on both sides.

func (mysqlSQL) reads() rowReads { return mysqlReads{} }

func (mysqlSQL) snapshot(ctx context.Context, conn sqldb.Querier, t *Table) error {
	_, err := conn.Exec(ctx, `INSERT INTO counter_openings (table_name, row_key, vals)
		SELECT $1, q.k, q.v FROM (`+t.logicalRowsMySQL()+`) AS q`, t.Name())
	return err
}

// binText is expr as utf8mb4 text compared by its bytes.
func binText(expr string) string { return "CONVERT(" + expr + " USING utf8mb4) COLLATE utf8mb4_bin" }

// rowKeyMySQL is the SQL of Key.Row of the row of t whose columns alias names: one key
// column's text, or each one's, escaped and joined as Table.Row does.
func (t *Table) rowKeyMySQL(alias string) string {
	text := func(i int) string { return "CAST(" + alias + "." + myIdent(t.spec.Key[i].Name) + " AS CHAR)" }
	if len(t.spec.Key) == 1 {
		return binText(text(0))
	}
	parts := make([]string, len(t.spec.Key))
	for i := range t.spec.Key {
		parts[i] = text(i)
		if t.keyTypes[i] == TypeText {
			parts[i] = "REPLACE(REPLACE(" + parts[i] + ", CHAR(30 USING utf8mb4), CONCAT(CHAR(30 USING utf8mb4), CHAR(30 USING utf8mb4))), " +
				"CHAR(31 USING utf8mb4), CONCAT(CHAR(30 USING utf8mb4), CHAR(31 USING utf8mb4)))"
		}
	}
	return binText("CONCAT_WS(CHAR(31 USING utf8mb4), " + strings.Join(parts, ", ") + ")")
}

// asTextMySQL is the SQL of expr, of type typ, as encode writes a value.
func asTextMySQL(expr string, typ Type) string {
	if typ == TypeTimestamptz {
		return "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + expr + ") AS CHAR)"
	}
	return "CAST(" + expr + " AS CHAR)"
}

// logicalRowsMySQL reads every logical row of t (its slots summed, as each column's Op folds
// them): k, its Key.Row; v, the JSON array of its declared columns' texts; and slots.
func (t *Table) logicalRowsMySQL() string {
	keys := make([]string, len(t.spec.Key))
	for i, k := range t.spec.Key {
		keys[i] = "t." + myIdent(k.Name)
	}
	col := func(alias string, i int) string { return alias + "." + myIdent(t.spec.Columns[i].Name) }
	vals := t.slotFolds(func(fn string, i int) string { return asTextMySQL(strings.ToUpper(fn)+"("+col("t", i)+")", t.types[i]) },
		func(i int) string { // the value of the slot with the newest followed value (NULLs last)
			same := make([]string, len(t.spec.Key))
			for k, key := range t.spec.Key {
				same[k] = "s." + myIdent(key.Name) + " = t." + myIdent(key.Name)
			}
			f := col("s", t.follows[i])
			return "(SELECT " + asTextMySQL(col("s", i), t.types[i]) + " FROM " + myIdent(t.spec.Name) + " AS s WHERE " +
				strings.Join(same, " AND ") + " ORDER BY " + f + " IS NULL, " + f + " DESC LIMIT 1)"
		},
		func(i int) string { return "CASE WHEN COUNT(" + col("t", i) + ") > 0 THEN '0' END" })
	return "SELECT " + t.rowKeyMySQL("t") + " AS k, " + binText("JSON_ARRAY("+strings.Join(vals, ", ")+")") + " AS v, COUNT(*) AS slots" +
		" FROM " + myIdent(t.spec.Name) + " AS t GROUP BY " + strings.Join(keys, ", ")
}

// mysqlReads are MySQL's rowReads.
type mysqlReads struct{}

// changedSQL is the rows of cur, the table's logical rows, that differ from op, their
// openings, and (NULL values, slots -1) the openings whose row is gone: MySQL has no FULL
// JOIN, so each side's rows are joined to the other's in turn. The second join reads the
// rows' keys alone (curk): with their values, a text of no bound, the derived table MariaDB
// builds and indexes for the join goes to disk (100,000 rows: 13 s against 1.8 s).
func (mysqlReads) changedSQL(t *Table) string {
	keys := make([]string, len(t.spec.Key))
	for i, k := range t.spec.Key {
		keys[i] = "t." + myIdent(k.Name)
	}
	return `WITH cur AS (` + t.logicalRowsMySQL() + `),
		curk AS (SELECT ` + t.rowKeyMySQL("t") + ` AS k FROM ` + myIdent(t.spec.Name) + ` AS t GROUP BY ` + strings.Join(keys, ", ") + `),
		op AS (SELECT row_key AS k, vals AS v FROM counter_openings WHERE table_name = $1)
		SELECT cur.k, cur.v, cur.slots FROM cur LEFT JOIN op ON op.k = cur.k
		WHERE op.k IS NULL OR NOT (cur.v <=> op.v) OR cur.slots <> $2
		UNION ALL
		SELECT op.k, NULL, -1 FROM op LEFT JOIN curk ON curk.k = op.k WHERE curk.k IS NULL`
}

// mysqlListChunk is how many rows one INSERT lists (listRows).
const mysqlListChunk = 1000

func (r mysqlReads) listRows(ctx context.Context, conn sqldb.Querier, keys [][]string) error {
	r.dropRows(ctx, conn)
	// A temporary table of the session, which a transaction of the caller's (a test's) does
	// not end: MySQL creates and drops one without committing.
	if _, err := conn.Exec(ctx, "CREATE TEMPORARY TABLE "+verifyRowsTable+
		" (k VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY)"); err != nil {
		return err
	}
	for start := 0; start < len(keys); start += mysqlListChunk {
		end := min(start+mysqlListChunk, len(keys))
		args := make([]any, 0, end-start)
		for _, k := range keys[start:end] {
			args = append(args, joinKey(len(k), func(i int) string { return k[i] }))
		}
		if _, err := conn.Exec(ctx, "INSERT INTO "+verifyRowsTable+" (k) VALUES "+strings.TrimSuffix(strings.Repeat("(?), ", len(args)), ", "),
			args...); err != nil {
			return err
		}
	}
	return nil
}

func (mysqlReads) dropRows(ctx context.Context, conn sqldb.Querier) {
	_, _ = conn.Exec(ctx, "DROP TEMPORARY TABLE IF EXISTS "+verifyRowsTable)
}

func (mysqlReads) openingsSQL() string {
	return `SELECT o.row_key, o.vals, 1 FROM counter_openings o JOIN ` + verifyRowsTable + ` v ON v.k = o.row_key WHERE o.table_name = $1`
}

// mysqlUntouched selects the openings of a table's rows that are not in verifyRowsTable.
const mysqlUntouched = `o.table_name = $1 AND NOT EXISTS (SELECT 1 FROM ` + verifyRowsTable + ` v WHERE v.k = o.row_key)`

// jsonAt is the SQL of text i of a JSON array of texts (NULL for a JSON null): JSON_VALUE
// would do, but MySQL's returns at most 512 characters.
func jsonAt(array string, i int) string {
	at := fmt.Sprintf("JSON_EXTRACT(%s, '$[%d]')", array, i)
	return "CASE WHEN JSON_TYPE(" + at + ") = 'NULL' THEN NULL ELSE JSON_UNQUOTE(" + at + ") END"
}

// orderedMySQL is the SQL of v, an opening's text of a value of type typ, in the order
// Value.compare puts values: by number, a text by its bytes.
func orderedMySQL(v string, typ Type) string {
	switch typ {
	case TypeText:
		return binText(v)
	case TypeNumeric:
		return "CAST(" + v + " AS DECIMAL(65, 8))"
	}
	return "CAST(" + v + " AS SIGNED)"
}

func (mysqlReads) foldSQL(t *Table) string {
	aggs := t.folds("NULL", func(fn string, i int) string {
		return "CAST(" + strings.ToUpper(fn) + "(" + orderedMySQL(jsonAt("o.vals", i), t.types[i]) + ") AS CHAR)"
	})
	return "SELECT COUNT(*), JSON_ARRAY(" + strings.Join(aggs, ", ") + ") FROM counter_openings o WHERE " + mysqlUntouched
}

func (mysqlReads) newestSQL(t *Table, col int) string {
	f := jsonAt("o.vals", t.follows[col])
	return "SELECT o.vals FROM counter_openings o WHERE " + mysqlUntouched + " AND " + f + " IS NOT NULL ORDER BY " +
		orderedMySQL(f, t.types[t.follows[col]]) + " DESC LIMIT 1"
}

func (mysqlReads) keyTexts(t *Table, dst *[]string) any { return rowKeyTexts{t: t, dst: dst} }

func (mysqlReads) texts(dst *[]*string) any { return jsonNullTexts{dst} }

// rowKeyTexts scans a row's Key.Row text into its key columns' texts.
type rowKeyTexts struct {
	t   *Table
	dst *[]string
}

func (r rowKeyTexts) Scan(src any) error {
	switch s := src.(type) {
	case []byte:
		*r.dst = r.t.keyValues(string(s))
	case string:
		*r.dst = r.t.keyValues(s)
	default:
		return fmt.Errorf("counters: a row key, not %T", src)
	}
	return nil
}
