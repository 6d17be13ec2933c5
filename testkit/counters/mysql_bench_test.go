package counters

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkMySQLCompacted measures the compacted UPDATE of a batch's rows on MariaDB in the
// three single-statement forms MySQL offers for a relation of rows, each read first and
// joined to the table by its primary key (mysqlJoinUpdate), over the slotted devices table
// (an Add of an integer and of an amount, the newest time and the address that follows it,
// the server's time):
//   - union: a derived table of one SELECT of parameters per row, UNION ALL (mysqlRowsUpdate:
//     MySQL 8 and MariaDB alike), the kit's;
//   - values: a VALUES table constructor named by a CTE's column list (MariaDB 10.3's
//     spelling; MySQL 8.0.19 needs VALUES ROW(…)), each value cast where it is selected;
//   - json: JSON_TABLE over one parameter, a JSON array of the rows (MariaDB 10.6, MySQL 8).
//
// One op is one UPDATE of rows rows (each a different row of the table, as compaction leaves
// them), sent and answered, inside a transaction committed every 100 UPDATEs so that the
// redo log's flush is not what is measured. ns/op is the client's composing and the server's
// parsing and writing, and the round trip, on a machine others share; server-ns/op is
// mariadbd's processor time per UPDATE (its parsing and writing: the figure that decides, as
// the server is the hot spot), client-ns/op this process's (composing the statement and its
// arguments, the driver's interpolation). Run it a few times: the forms turn about in each.
func BenchmarkMySQLCompacted(b *testing.B) {
	ctx := context.Background()
	d := onMariaDB(b)
	conn := d.Dedicated(b)
	const seeded = 1024
	if _, err := conn.Exec(ctx, `INSERT INTO devices (name, slot, owner) SELECT CONCAT('d', LPAD(h, 5, '0')), 1, 'o' FROM `+HotSetsMySQL,
		seeded); err != nil {
		b.Fatal(err)
	}
	for _, rows := range []int{1, 16, 256, 1024} {
		ds := benchDeltas(rows)
		key := groupKey(ds)
		for _, f := range compactedForms {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, f.name), func(b *testing.B) {
				query := f.sql(Devices, key, rows)
				tx, err := conn.Begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				b.ReportAllocs()
				server, client := d.Server.CPUTime(), clientCPU()
				for b.Loop() {
					if rows > mysqlKeptRows && f.name != "json" { // composed each time, as Table.mysqlStatement does
						query = f.sql(Devices, key, rows)
					}
					affected, err := tx.Exec(ctx, query, f.args(Devices, key, ds)...)
					if err != nil || affected != int64(rows) {
						b.Fatalf("%d of %d rows: %v", affected, rows, err)
					}
					if n++; n%100 == 0 {
						if err := tx.Commit(ctx); err != nil {
							b.Fatal(err)
						}
						if tx, err = conn.Begin(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				server, client = d.Server.CPUTime()-server, clientCPU()-client
				if err := tx.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(server.Nanoseconds())/float64(b.N), "server-ns/op")
				b.ReportMetric(float64(client.Nanoseconds())/float64(b.N), "client-ns/op")
				b.ReportMetric(float64(server.Nanoseconds())/float64(b.N*rows), "server-ns/row")
			})
		}
	}
}

// compactedForm is one way to send a batch's compacted UPDATE of one table: the statement of
// key for rows rows and its arguments for ds.
type compactedForm struct {
	name string
	sql  func(t *Table, key statementKey, rows int) string
	args func(t *Table, key statementKey, ds []Delta) []any
}

var compactedForms = []compactedForm{
	{"union", func(t *Table, key statementKey, rows int) string { return t.mysqlRowsUpdate(key, rows) }, rowArgs},
	{"values", valuesUpdate, rowArgs},
	{"json", jsonUpdate, jsonArgs},
}

// rowArgs are the union's and the values' arguments: each delta's parameters in turn.
func rowArgs(t *Table, key statementKey, ds []Delta) []any {
	var args []any
	for _, d := range ds {
		args = t.mysqlArgs(args, key, d)
	}
	return args
}

// valuesUpdate is the UPDATE from a VALUES table constructor (MariaDB's spelling), its rows
// plain parameters and the casts where the CTE's columns are selected.
func valuesUpdate(t *Table, key statementKey, rows int) string {
	params := t.mysqlParams(key)
	names := make([]string, len(params))
	casts := make([]string, len(params))
	for i, p := range params {
		names[i] = myIdent(p.name)
		casts[i] = cast(names[i], p.typ) + " AS " + names[i]
	}
	row := "(" + marks(len(params)) + ")"
	values := strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
	return t.mysqlJoinUpdate(key, "(WITH v ("+strings.Join(names, ", ")+") AS (VALUES "+values+") SELECT "+
		strings.Join(casts, ", ")+" FROM v)")
}

// jsonUpdate is the UPDATE from JSON_TABLE over one parameter, a JSON array of the rows, each
// an array of its parameters' texts (jsonArgs); the statement is the same for any number of
// rows.
func jsonUpdate(t *Table, key statementKey, _ int) string {
	params := t.mysqlParams(key)
	cols := make([]string, len(params))
	for i, p := range params {
		typ := map[Type]string{TypeInteger: "BIGINT", TypeNumeric: "DECIMAL(65, 8)", TypeTimestamptz: "DATETIME(6)", TypeText: "VARCHAR(512)"}[p.typ]
		cols[i] = fmt.Sprintf("%s %s PATH '$[%d]'", myIdent(p.name), typ, i)
	}
	return t.mysqlJoinUpdate(key, "JSON_TABLE(?, '$[*]' COLUMNS ("+strings.Join(cols, ", ")+"))")
}

// jsonArgs is the JSON array of ds's rows (a boolean flag as 1 or 0).
func jsonArgs(t *Table, key statementKey, ds []Delta) []any {
	rows := make([][]any, len(ds))
	for i, d := range ds {
		row := t.mysqlArgs(nil, key, d)
		for k, v := range row {
			if b, ok := v.(bool); ok {
				row[k] = map[bool]int{false: 0, true: 1}[b]
			}
		}
		rows[i] = row
	}
	text, err := json.Marshal(rows)
	if err != nil {
		panic(err)
	}
	return []any{string(text)}
}

// benchDeltas are one merged delta for each of rows rows of devices, in slot 1, sorted as
// compaction leaves them.
func benchDeltas(rows int) []Delta {
	ds := make([]Delta, rows)
	for k := range ds {
		ds[k] = deviceUse.Delta(Devices.Row(Text(fmt.Sprintf("d%05d", k))), Int(3), Amount(100_000), Time(at(k)), Text(fmt.Sprint("10.0.0.", k%100)))
		ds[k].Slot = 1
	}
	return ds
}

// clientCPU is this process's processor time so far.
func clientCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
