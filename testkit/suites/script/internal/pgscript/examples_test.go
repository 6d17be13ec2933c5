package pgscript_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/examples/scripts"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// The tests of the example scripts and init files (examples/scripts): each is valid for the
// kit and for the real pgbench and PostgreSQL, and is what it says it is.

func readExample(t *testing.T, name string) string {
	t.Helper()
	text, err := fs.ReadFile(scripts.Files, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// exampleDefines are an example's documented values, NAME=VALUE, as a script is bound to them.
func exampleDefines(t *testing.T, set []string) []pgscript.Define {
	t.Helper()
	var defines []pgscript.Define
	for _, arg := range set {
		d, err := pgscript.ParseDefine(arg)
		if err != nil {
			t.Fatal(err)
		}
		defines = append(defines, d)
	}
	return defines
}

// exampleVars are an example's documented values as an init file reads them.
func exampleVars(t *testing.T, set []string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, d := range exampleDefines(t, set) {
		vars[d.Name] = d.Value
	}
	return vars
}

func TestPgbenchScriptsAreCopiedUnchanged(t *testing.T) {
	pgbench := pgscript.PgbenchBinary(t)
	for _, name := range []string{"tpcb-like", "simple-update"} {
		shown, err := pgscript.PgbenchCommand(t, pgbench, "", "--show-script="+name)
		if err != nil {
			t.Fatalf("pgbench --show-script=%s: %v\n%s", name, err, shown)
		}
		if ours := readExample(t, name+".sql"); ours != shown {
			t.Errorf("%s.sql differs from pgbench --show-script=%s:\n%s\npgbench:\n%s", name, name, ours, shown)
		}
	}
}

// Every example parses and binds with its documented values, evaluates requests, and reads
// each documented variable (in the script or the init file); the init files parse with them.
func TestExamplesBindAndEvaluate(t *testing.T) {
	listed := map[string]bool{}
	for _, ex := range scripts.List() {
		listed[ex.Script], listed[ex.Init] = true, true
		t.Run(ex.Script, func(t *testing.T) {
			s, err := pgscript.Parse(readExample(t, ex.Script))
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Bind(pgscript.Env{Seed: 42, Clients: 8, Defines: exampleDefines(t, ex.Set)})
			if err != nil {
				t.Fatal(err)
			}
			var x pgscript.Execution
			for i := range int64(50) {
				if err := p.Eval(i, &x); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if len(x.Statements) == 0 {
					t.Fatalf("request %d runs no statement", i)
				}
			}
			init := readExample(t, ex.Init)
			vars := exampleVars(t, ex.Set)
			if _, err := pgscript.ParseInit(init, vars); err != nil {
				t.Fatalf("%s: %v", ex.Init, err)
			}
			for name := range vars {
				without := withoutVar(vars, name)
				if _, err := pgscript.ParseInit(init, without); err == nil && !s.Uses(name) {
					t.Errorf("--set %s is documented, but neither %s nor %s reads it", name, ex.Script, ex.Init)
				}
			}
		})
	}
	files, err := fs.Glob(scripts.Files, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !listed[f] {
			t.Errorf("%s is in examples/scripts but no example names it", f)
		}
	}
}

// withoutVar is vars without the variable drop.
func withoutVar(vars map[string]string, drop string) map[string]string {
	out := map[string]string{}
	for k, v := range vars {
		if k != drop {
			out[k] = v
		}
	}
	return out
}

// The usage counter script picks hot set request_id % hot_keys, as the suite's --hot-keys.
func TestUsageCounterScriptPicksTheSuitesHotSet(t *testing.T) {
	s, err := pgscript.Parse(readExample(t, "usage-counter.sql"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Bind(pgscript.Env{Seed: 1, Clients: 4, Defines: []pgscript.Define{{Name: "hot_keys", Value: "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	var x pgscript.Execution
	for i := range int64(10) {
		if err := p.Eval(i, &x); err != nil {
			t.Fatal(err)
		}
		if hot, _ := x.Var("hot"); hot.Int64() != i%3 {
			t.Errorf("request %d: hot set %v, want %d", i, hot, i%3)
		}
	}
}

// bareSchema is a new empty schema on the shared test server, dropped when the test ends, and
// a connection whose search_path is it alone.
func bareSchema(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	ctx := t.Context()
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	schema := "examples_" + hex.EncodeToString(suffix)
	conn, err := pgx.Connect(ctx, testdb.Server(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; SET search_path TO "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
		conn.Close(ctx)
	})
	return conn, schema
}

// runInit runs an init file's statements one by one on conn.
func runInit(t *testing.T, conn *pgx.Conn, name string, vars map[string]string) {
	t.Helper()
	stmts, err := pgscript.ParseInit(readExample(t, name), vars)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, s := range stmts {
		if _, err := conn.Exec(t.Context(), s.SQL); err != nil {
			t.Fatalf("%s line %d: %v", name, s.Line, err)
		}
	}
}

// pgbenchOverrides replace documented values pgbench refuses: its random_zipfian takes an
// exponent of at least 1.001, the kit's also one in (0, 1).
var pgbenchOverrides = map[string]string{"theta": "1.1"}

// runUnderPgbench runs requests requests of the script under pgbench in schema, one
// transaction each, request i with -D request_id=i (pgbench has no request index of its
// own) and, alternately, pgbench's simple protocol (variables pasted into the text, as a
// pgbench user runs it) and extended one (bound, as the kit runs it).
func runUnderPgbench(t *testing.T, schema, script string, set []string, requests int) {
	t.Helper()
	pgbench := pgscript.PgbenchBinary(t)
	file := filepath.Join(t.TempDir(), script)
	if err := os.WriteFile(file, []byte(readExample(t, script)), 0o600); err != nil {
		t.Fatal(err)
	}
	var defines []string
	for name, value := range exampleVars(t, set) {
		if v, ok := pgbenchOverrides[name]; ok {
			value = v
		}
		defines = append(defines, "-D", name+"="+value)
	}
	for i := range requests {
		args := append([]string{"-n", "-t", "1", "-c", "1", "-f", file, "--random-seed", strconv.Itoa(i + 1),
			"-M", []string{"simple", "extended"}[i%2], "-D", "request_id=" + strconv.Itoa(i)}, defines...)
		if stderr, err := pgscript.PgbenchCommand(t, pgbench, schema, append(args, testdb.Server(t).DSN())...); err != nil {
			t.Fatalf("pgbench %s, request %d: %v\n%s", script, i, err, stderr)
		}
	}
}

// describe is the catalog of the relations in schema (only the tables named, and their
// indexes, when tables are given): per relation, its kind, persistence and options, its
// columns with their types, NOT NULL and defaults, its constraints and its index definition.
func describe(t *testing.T, conn *pgx.Conn, schema string, tables ...string) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `
		SELECT format('%s | %s | %s | %s | %s | %s | %s', c.relname, c.relkind, c.relpersistence, c.reloptions,
			(SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
					|| CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
					|| coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
				FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
				WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
			(SELECT string_agg(con.conname || ' ' || pg_get_constraintdef(con.oid), ', ' ORDER BY con.conname)
				FROM pg_constraint con WHERE con.conrelid = c.oid),
			(SELECT replace(pg_get_indexdef(i.indexrelid), quote_ident($1) || '.', '')
				FROM pg_index i WHERE i.indexrelid = c.oid))
		FROM pg_class c
		WHERE c.relnamespace = $1::regnamespace AND ($2::text[] IS NULL OR c.relname = ANY ($2)
			OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (
				SELECT oid FROM pg_class WHERE relnamespace = $1::regnamespace AND relname = ANY ($2)))
		)
		ORDER BY c.relname`, schema, tablesOrNil(tables))
	if err != nil {
		t.Fatal(err)
	}
	described, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return described
}

func tablesOrNil(tables []string) []string {
	if len(tables) == 0 {
		return nil
	}
	return tables
}

// differences compares the relations of schemas a and b (describe) and the rows of each of
// a's tables with b's (EXCEPT ALL both ways), and says what differs.
func differences(t *testing.T, conn *pgx.Conn, a, b string) []string {
	t.Helper()
	var diffs []string
	da, db := describe(t, conn, a), describe(t, conn, b)
	for _, d := range da {
		if !slices.Contains(db, d) {
			diffs = append(diffs, fmt.Sprintf("%s: %s", a, d))
		}
	}
	for _, d := range db {
		if !slices.Contains(da, d) {
			diffs = append(diffs, fmt.Sprintf("%s: %s", b, d))
		}
	}
	rows, err := conn.Query(t.Context(), `SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' ORDER BY 1`, a)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		for _, from := range [][2]string{{a, b}, {b, a}} {
			var extra int64
			err := conn.QueryRow(t.Context(), fmt.Sprintf(`SELECT count(*) FROM (TABLE %[1]s.%[3]s EXCEPT ALL TABLE %[2]s.%[3]s) x`,
				pgx.Identifier{from[0]}.Sanitize(), pgx.Identifier{from[1]}.Sanitize(), pgx.Identifier{table}.Sanitize())).Scan(&extra)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("%s: comparing rows: %v", table, err))
				break
			}
			if extra != 0 {
				diffs = append(diffs, fmt.Sprintf("%s: %d rows of %s are not in %s", table, extra, from[0], from[1]))
			}
		}
	}
	return diffs
}

// tpcb-init.sql at scale N makes what pgbench -i -s N makes: the same relations (columns,
// types, fillfactor, primary keys) and the same rows. The comparison itself is shown to see a
// changed row and a changed column.
func TestTPCBInitMakesWhatPgbenchInitMakes(t *testing.T) {
	pgbench := pgscript.PgbenchBinary(t)
	for _, scale := range []int{1, 2} {
		t.Run(fmt.Sprintf("scale %d", scale), func(t *testing.T) {
			conn, theirs := bareSchema(t)
			_, ours := bareSchema(t)
			if stderr, err := pgscript.PgbenchCommand(t, pgbench, theirs, "-i", "-q", "-s", strconv.Itoa(scale), testdb.Server(t).DSN()); err != nil {
				t.Fatalf("pgbench -i: %v\n%s", err, stderr)
			}
			if _, err := conn.Exec(t.Context(), "SET search_path TO "+ours); err != nil {
				t.Fatal(err)
			}
			runInit(t, conn, "tpcb-init.sql", map[string]string{"scale": strconv.Itoa(scale)})
			if len(describe(t, conn, ours)) != 7 {
				t.Fatalf("want 4 tables and 3 primary keys, got %q", describe(t, conn, ours))
			}
			if diffs := differences(t, conn, theirs, ours); len(diffs) > 0 {
				t.Fatalf("tpcb-init.sql differs from pgbench -i:\n%s", strings.Join(diffs, "\n"))
			}
			if scale > 1 {
				return
			}
			for _, change := range []string{
				"UPDATE pgbench_accounts SET abalance = 1 WHERE aid = 77777",
				"UPDATE pgbench_branches SET filler = '' WHERE bid = 1",
				"ALTER TABLE pgbench_history ALTER COLUMN filler TYPE char(23)",
			} {
				tx, err := conn.Begin(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(t.Context(), change); err != nil {
					t.Fatal(err)
				}
				if diffs := differences(t, conn, theirs, ours); len(diffs) == 0 {
					t.Errorf("the comparison misses %s", change)
				}
				if err := tx.Rollback(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// tpcbClaims: the history rows are the transactions, and every balance their deltas' sum.
var tpcbClaims = []string{
	`SELECT count(*) = 5 FROM pgbench_history`,
	`SELECT bool_and(a.abalance = coalesce(h.delta, 0)) FROM pgbench_accounts a
		LEFT JOIN (SELECT aid, sum(delta) AS delta FROM pgbench_history GROUP BY aid) h USING (aid)`,
	`SELECT bool_and(t.tbalance = coalesce(h.delta, 0)) FROM pgbench_tellers t
		LEFT JOIN (SELECT tid, sum(delta) AS delta FROM pgbench_history GROUP BY tid) h USING (tid)`,
	`SELECT bool_and(b.bbalance = coalesce(h.delta, 0)) FROM pgbench_branches b
		LEFT JOIN (SELECT bid, sum(delta) AS delta FROM pgbench_history GROUP BY bid) h USING (bid)`,
}

// exampleClaims are what each example says it does, checked after requests under pgbench:
// each query returns true when the tables hold it.
var exampleClaims = map[string][]string{
	"tpcb-like.sql":   tpcbClaims,
	"tpcb-skewed.sql": tpcbClaims,
	"simple-update.sql": {
		`SELECT count(*) = 5 FROM pgbench_history`,
		`SELECT bool_and(a.abalance = coalesce(h.delta, 0)) FROM pgbench_accounts a
			LEFT JOIN (SELECT aid, sum(delta) AS delta FROM pgbench_history GROUP BY aid) h USING (aid)`,
		`SELECT bool_and(tbalance = 0) FROM pgbench_tellers`,
		`SELECT bool_and(bbalance = 0) FROM pgbench_branches`,
	},
	"wallet-debit.sql": {
		`SELECT array_agg(request_id ORDER BY request_id) = '{0,1,2,3,4}' FROM wallet_ledger`,
		`SELECT bool_and(w.balance = 1000000 - coalesce(l.debit, 0)) FROM wallet_accounts w
			LEFT JOIN (SELECT wallet_id AS id, sum(debit) AS debit FROM wallet_ledger GROUP BY 1) l USING (id)`,
		`SELECT bool_and(created_at IS NOT NULL AND debit BETWEEN 1 AND 1000) FROM wallet_ledger`,
	},
	"inventory-decrement.sql": {
		`SELECT bool_and(qty BETWEEN 0 AND 100) AND sum(100 - qty) BETWEEN 5 AND 25 FROM inventory`,
		`SELECT count(*) = 1 FROM pg_constraint WHERE conrelid = 'inventory'::regclass AND contype = 'c'
			AND pg_get_constraintdef(oid) = 'CHECK ((qty >= 0))'`,
	},
	"usage-counter.sql": {
		`SELECT array_agg(request_id::int ORDER BY request_id::int) = '{0,1,2,3,4}' FROM usage`,
		`SELECT sum(total_requests) = 5 AND sum(total_cost) = 0.005 FROM api_keys`,
	},
}

// Every example's init file runs on PostgreSQL, and its script under pgbench against those
// tables, doing what it says.
func TestExamplesRunUnderPgbench(t *testing.T) {
	pgscript.PgbenchBinary(t)
	for _, ex := range scripts.List() {
		t.Run(ex.Script, func(t *testing.T) {
			conn, schema := bareSchema(t)
			runInit(t, conn, ex.Init, exampleVars(t, ex.Set))
			runUnderPgbench(t, schema, ex.Script, ex.Set, 5)
			claims := exampleClaims[ex.Script]
			if len(claims) == 0 {
				t.Fatalf("no claims to check for %s", ex.Script)
			}
			for _, claim := range claims {
				var holds *bool
				if err := conn.QueryRow(t.Context(), claim).Scan(&holds); err != nil {
					t.Fatalf("%s: %v", claim, err)
				}
				if holds == nil || !*holds {
					t.Errorf("does not hold: %s", claim)
				}
			}
		})
	}
}

// usageTables are the tables the usage counter suite writes.
var usageTables = []string{"api_keys", "global_models", "provider_api_keys", "providers", "usage"}

// The usage counter script writes what the built-in suite writes: its init file makes the
// suite's tables, and the same requests leave the same rows — the same counters per hot set,
// the same usage rows — but for the ids, which the script writes as numbers ('key-hot-1' is
// '1', 'req-7' is '7'), and the times, which are the server's (compared for presence).
func TestUsageCounterScriptWritesWhatTheSuiteWrites(t *testing.T) {
	const hotKeys, requests = 2, 12
	suite := usagecounter.New()
	run := suitetest.Seeded(t, suite, hotKeys, requests)
	var recs []counters.Record
	for i := range int64(requests) {
		recs = append(recs, suite.Records(run, nil, i)...)
	}
	ctx := t.Context()
	if err := sqldb.BeginFunc(ctx, run.Admin(), func(tx sqldb.Tx) error {
		_, err := suite.Writer(run, false).WriteBatch(ctx, tx, recs)
		return err
	}); err != nil {
		t.Fatalf("the suite's writes: %v", err)
	}
	var theirs string
	if err := run.Admin().QueryRow(ctx, "SELECT current_schema()").Scan(&theirs); err != nil {
		t.Fatal(err)
	}

	conn, ours := bareSchema(t)
	runInit(t, conn, "usage-counter-init.sql", map[string]string{"hot_keys": strconv.Itoa(hotKeys)})
	if d, want := describe(t, conn, ours, usageTables...), describe(t, conn, theirs, usageTables...); !slices.Equal(d, want) {
		t.Fatalf("usage-counter-init.sql's tables differ from the suite's:\n%s\nthe suite's:\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
	runUnderPgbench(t, ours, "usage-counter.sql", []string{"hot_keys=" + strconv.Itoa(hotKeys)}, requests)

	for _, table := range usageTables {
		// Every column: an id as its number, a time as whether it is set, the rest as it is.
		rows, err := conn.Query(ctx, `SELECT CASE WHEN attname = 'id' OR attname LIKE '%\_id' THEN format('regexp_replace(%I, ''^\D*'', '''')', attname)
				WHEN atttypid = 'timestamptz'::regtype THEN format('%I IS NOT NULL', attname) ELSE quote_ident(attname) END
			FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
			pgx.Identifier{ours, table}.Sanitize())
		if err != nil {
			t.Fatal(err)
		}
		columns, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		list := strings.Join(columns, ", ")
		var rowCount int64
		if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s`, pgx.Identifier{ours, table}.Sanitize())).Scan(&rowCount); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: requests, false: hotKeys}[table == "usage"]; rowCount != want {
			t.Errorf("%s: %d rows, want %d", table, rowCount, want)
		}
		for _, from := range [][2]string{{ours, theirs}, {theirs, ours}} {
			var extra int64
			if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT %[1]s FROM %[2]s EXCEPT ALL SELECT %[1]s FROM %[3]s) x`,
				list, pgx.Identifier{from[0], table}.Sanitize(), pgx.Identifier{from[1], table}.Sanitize())).Scan(&extra); err != nil {
				t.Fatal(err)
			}
			if extra != 0 {
				t.Errorf("%s: %d rows of %s are not in %s (columns %s)", table, extra, from[0], from[1], list)
			}
		}
	}
}
