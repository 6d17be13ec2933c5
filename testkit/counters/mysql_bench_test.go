package counters

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// BenchmarkMySQLCompacted measures the compacted UPDATE of a batch's rows on MariaDB in the
// three single-statement forms MySQL offers for a relation of rows, each read first and
// joined to the table by its primary key (mysqlJoinUpdate), over the slotted devices table
// (an Add of an integer and of an amount, the newest time and the address that follows it,
// the server's time):
//   - union: a derived table of one SELECT of parameters per row, UNION ALL (MySQL 8 and
//     MariaDB alike);
//   - values: a VALUES table constructor named by a CTE's column list (MariaDB 10.3's
//     spelling; MySQL 8.0.19 needs VALUES ROW(…)), each value cast where it is selected;
//   - json: JSON_TABLE over one parameter, a JSON array of the rows (MariaDB 10.6, MySQL 8:
//     mysqlJSONUpdate), the kit's.
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
					if rows > 64 && f.name != "json" { // a text of each number of rows: composed each time beyond a few
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
	{"union", unionUpdate, rowArgs},
	{"values", valuesUpdate, rowArgs},
	{"json", func(t *Table, key statementKey, _ int) string { return t.mysqlJSONUpdate(key) },
		func(t *Table, key statementKey, ds []Delta) []any { return []any{t.mysqlRows(key, ds)} }},
}

// unionUpdate is the UPDATE from a derived table of one SELECT of parameters per row, UNION
// ALL, each cast to its column's type in every row (a UNION's column takes the type of all its
// rows).
func unionUpdate(t *Table, key statementKey, rows int) string {
	params := t.params(key)
	first := make([]string, len(params))
	rest := make([]string, len(params))
	for i, p := range params {
		first[i] = cast("?", p.typ) + " AS " + myIdent(p.name)
		rest[i] = cast("?", p.typ)
	}
	var b strings.Builder
	b.WriteString("(SELECT ")
	b.WriteString(strings.Join(first, ", "))
	row := "\n\tUNION ALL SELECT " + strings.Join(rest, ", ")
	for range rows - 1 {
		b.WriteString(row)
	}
	b.WriteString(")")
	return t.mysqlJoinUpdate(key, b.String())
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
	params := t.params(key)
	names := make([]string, len(params))
	casts := make([]string, len(params))
	for i, p := range params {
		names[i] = myIdent(p.name)
		casts[i] = cast(names[i], p.typ) + " AS " + names[i]
	}
	row := "(" + sqldb.Marks(len(params)) + ")"
	values := strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
	return t.mysqlJoinUpdate(key, "(WITH v ("+strings.Join(names, ", ")+") AS (VALUES "+values+") SELECT "+
		strings.Join(casts, ", ")+" FROM v)")
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
