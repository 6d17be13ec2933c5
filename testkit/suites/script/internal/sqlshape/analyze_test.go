package sqlshape

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// mustPrepare checks that PostgreSQL itself accepts the statement against the
// fixture's tables (parse and analysis, nothing run): the cases below are statements
// sync would run, not inventions of the grammar.
func (f *fixture) mustPrepare(t *testing.T, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.target.Admin().Prepare(ctx, "", sql); err != nil {
		t.Fatalf("PostgreSQL does not accept %q: %v", sql, err)
	}
}

func TestDeferrableStatements(t *testing.T) {
	f := newFixture(t)
	type item struct {
		column string
		op     WriteOp
		params []Value // evaluated with these
		want   Value   // the item's value; ServerFunc items: server names the SQL
		server string
		err    string // Eval's error instead of want
	}
	cases := []struct {
		sql       string
		class     Class
		key       []string // key columns in key order
		keyParams []Value
		keyWant   []Value
		items     []item
		tx        TxKind
	}{
		{
			sql: "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", class: Update,
			key: []string{"aid"}, keyParams: []Value{Int(-7), String(" 42 ")}, keyWant: []Value{Int(42)},
			items: []item{{column: "abalance", op: Increment, params: []Value{Int(-7), Int(1)}, want: Int(-7)}},
		},
		{
			sql: `UPDATE user_wallets AS w SET balance = balance - $1, debits = 1 + w.debits, last_debit_at = now(),
			        max_debit = greatest($1, max_debit), min_balance = LEAST(w.min_balance, $3 - $1), label = $4
			      WHERE $2 = w.user_id`,
			class: Update, key: []string{"user_id"}, keyParams: []Value{Int(5), Int(9), Int(0), Null},
			keyWant: []Value{Int(9)},
			items: []item{
				{column: "balance", op: Increment, params: []Value{Int(5)}, want: Int(-5)},
				{column: "debits", op: Increment, params: nil, want: Int(1)},
				{column: "last_debit_at", op: ServerTime, server: "now()"},
				{column: "max_debit", op: Greatest, params: []Value{Int(5)}, want: Int(5)},
				{column: "min_balance", op: Least, params: []Value{Int(5), Int(0), Int(100)}, want: Int(95)},
				{column: "label", op: Assign, params: []Value{Null, Null, Null, Int(12)}, want: String("12")},
			},
		},
		{
			// A composite key named in another order, a numeric column, a longer sum.
			sql:   "UPDATE stock SET qty = $3::int8 + qty - 2 * $4 WHERE sku = $1 AND stock.warehouse = $2",
			class: Update, key: []string{"warehouse", "sku"},
			keyParams: []Value{Int(17), Int(3)}, keyWant: []Value{Int(3), String("17")},
			items: []item{{column: "qty", op: Increment, params: []Value{Null, Null, Int(10), Int(3)}, want: Int(4)}},
		},
		{
			sql: "UPDATE measures SET count = count + 1, seen_at = CURRENT_TIMESTAMP, total = $2 WHERE id = $1", class: Update,
			key: []string{"id"}, keyParams: []Value{Int(1)}, keyWant: []Value{Int(1)},
			items: []item{
				{column: "count", op: Increment, want: Int(1)},
				{column: "seen_at", op: ServerTime, server: "current_timestamp"},
				{column: "total", op: Assign, params: []Value{Int(1), String("2.5")}, want: String("2.5")},
			},
		},
		{
			sql: "UPDATE uuids SET n = greatest(n, clock_timestamp()::date - current_date) WHERE id = $1", class: Other,
		},
		{
			sql: "UPDATE measures SET seen_at = greatest(seen_at, statement_timestamp()) WHERE id = $1", class: Update,
			key: []string{"id"}, keyParams: []Value{Int(1)}, keyWant: []Value{Int(1)},
			items: []item{{column: "seen_at", op: Greatest, server: "statement_timestamp()"}},
		},
		{
			sql: "UPDATE uuids SET n = n - -$2::int WHERE id = $1::uuid", class: Update,
			key: []string{"id"}, keyParams: []Value{String("{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}")},
			keyWant: []Value{String("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")},
			items:   []item{{column: "n", op: Increment, params: []Value{Null, Int(3)}, want: Int(3)}},
		},
		{
			// Decimals in numeric columns: literals, strings read as the column's type (in a
			// sum, every term is added to the column: $2 + 1 is a decimal), products.
			sql: `UPDATE costs SET total = total + 0.001, cents = cents - $1, free = free + $2 + 1, n = n + 1,
			        small = least(small, 2.5) WHERE id = $3`,
			class: Update, key: []string{"id"}, keyParams: []Value{Null, Null, Int(4)}, keyWant: []Value{Int(4)},
			items: []item{
				{column: "total", op: Increment, want: Dec(100_000, 3)},
				{column: "cents", op: Increment, params: []Value{String("0.25")}, want: Dec(-25_000_000, 2)},
				{column: "free", op: Increment, params: []Value{Null, String("0.000000015")}, err: "more than 8 decimal places"},
				{column: "free", op: Increment, params: []Value{Null, String(" 1e-8 ")}, want: Dec(100_000_001, 8)},
				{column: "n", op: Increment, want: Int(1)},
				{column: "small", op: Least, want: Dec(250_000_000, 1)},
			},
		},
		{
			sql:   "UPDATE costs SET total = total + $1 * 0.001, cents = greatest(cents, $2), note = 2.50 WHERE id = $3",
			class: Update, key: []string{"id"}, keyParams: []Value{Null, Null, String("8")}, keyWant: []Value{Int(8)},
			items: []item{
				{column: "total", op: Increment, params: []Value{Int(30)}, want: Dec(3_000_000, 2)},
				{column: "total", op: Increment, params: []Value{String("0.5")}, want: Dec(50_000, 4)},
				{column: "total", op: Increment, params: []Value{String("0.00000001")}, err: "the result has more than 8 decimal places"},
				{column: "total", op: Increment, params: []Value{Int(1 << 60)}, err: "out of the kit's decimal range"},
				{column: "cents", op: Greatest, params: []Value{Null, String("12.50")}, want: Dec(1_250_000_000, 1)},
				{column: "cents", op: Greatest, params: []Value{Null, String("12.005")}, err: "more decimal places than numeric(12,2) keeps"},
				{column: "cents", op: Greatest, params: []Value{Null, String("12.00")}, want: Int(12)},
				{column: "note", op: Assign, want: String("2.50")},
			},
		},
		{
			// A numeric key: equal numbers are equal keys, whatever their display scale.
			sql: "UPDATE rates SET n = n + $2 WHERE rate = $1", class: Update,
			key: []string{"rate"}, keyParams: []Value{String("1.50")}, keyWant: []Value{Dec(150_000_000, 1)},
			items: []item{
				{column: "n", op: Increment, params: []Value{Null, String("0.5")}, err: "'0.5' is not an integer"},
				{column: "n", op: Increment, params: []Value{Null, Dec(50_000_000, 1)}, err: "0.5 is a decimal, which integer would round"},
				{column: "n", op: Increment, params: []Value{Null, Dec(200_000_000, 2)}, want: Int(2)},
			},
		},
		{sql: "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", class: Insert},
		{sql: "SELECT abalance FROM pgbench_accounts WHERE aid = $1", class: Select},
		{sql: "WITH t AS (SELECT * FROM user_wallets) SELECT count(*) FROM t JOIN ledger USING (user_id)", class: Select},
		{sql: "BEGIN", class: TxControl, tx: TxBegin},
		{sql: "START TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE", class: TxControl, tx: TxBegin},
		{sql: "END", class: TxControl, tx: TxCommit},
		{sql: "COMMIT", class: TxControl, tx: TxCommit},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			f.mustPrepare(t, tc.sql)
			st, err := Analyze(Input{SQL: tc.sql, Line: 3}, f.cat)
			if err != nil {
				t.Fatal(err)
			}
			if st.Class != tc.class {
				t.Fatalf("class %v, want %v (refusals %v)", st.Class, tc.class, st.Refusals)
			}
			if tc.class == Other {
				if st.Deferrable() {
					t.Fatalf("an Other statement without refusals")
				}
				return
			}
			if !st.Deferrable() {
				t.Fatalf("refused: %v", st.Refusals)
			}
			if st.Tx != tc.tx {
				t.Errorf("tx %v, want %v", st.Tx, tc.tx)
			}
			if tc.class != Update {
				return
			}
			u := st.Update
			var key []string
			for _, k := range u.Key {
				key = append(key, k.Column.Name)
			}
			if !slices.Equal(key, tc.key) {
				t.Errorf("key %v, want %v", key, tc.key)
			}
			if got, err := u.KeyValues(tc.keyParams); err != nil || !slices.Equal(got, tc.keyWant) {
				t.Errorf("key values %v (%v), want %v", got, err, tc.keyWant)
			}
			columns := map[string]SetItem{}
			for _, item := range u.Set {
				columns[item.Column.Name] = item
			}
			var names []string
			for _, want := range tc.items {
				if !slices.Contains(names, want.column) {
					names = append(names, want.column)
				}
			}
			if len(u.Set) != len(names) {
				t.Fatalf("%d SET items, want %d", len(u.Set), len(names))
			}
			for i, name := range names {
				if u.Set[i].Column.Name != name {
					t.Errorf("item %d is %s, want %s", i, u.Set[i].Column.Name, name)
				}
			}
			for i, want := range tc.items {
				got := columns[want.column]
				if got.Column.Name != want.column || got.Op != want.op || got.ServerFunc != want.server {
					t.Errorf("item %d: %s %v %q, want %s %v %q", i, got.Column.Name, got.Op, got.ServerFunc,
						want.column, want.op, want.server)
					continue
				}
				if want.server != "" {
					if got.Value != nil {
						t.Errorf("item %d: a server value with a client value %v", i, got.Value)
					}
					continue
				}
				v, err := got.Eval(want.params)
				switch {
				case want.err != "" && (err == nil || !strings.Contains(err.Error(), want.err)):
					t.Errorf("item %d (%s) with %v: %v (%v), want an error with %q", i, got.Text, want.params, v, err, want.err)
				case want.err == "" && (err != nil || v != want.want):
					t.Errorf("item %d (%s) with %v: %v (%v), want %v", i, got.Text, want.params, v, err, want.want)
				}
			}
		})
	}
}

func TestInsert(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		sql                   string
		columns               []string
		serverTime, defaulted []string
		claim                 string
		params                []Value
		rows                  [][]Value
	}{
		{
			sql:     "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
			columns: []string{"tid", "bid", "aid", "delta", "mtime"}, serverTime: []string{"mtime"},
			defaulted: []string{"filler"}, params: []Value{Int(1), Int(2), Int(3), Int(-40)},
			rows: [][]Value{{Int(1), Int(2), Int(3), Int(-40), Null}},
		},
		{
			sql:     "INSERT INTO ledger (user_id, amount, request_id) VALUES ($1, -$2::bigint, $3)",
			columns: []string{"user_id", "amount", "request_id"}, defaulted: []string{"id", "at"},
			claim: "ledger_request_id_key", params: []Value{Int(7), Int(30), Int(1234)},
			rows: [][]Value{{Int(7), Int(-30), String("1234")}},
		},
		{
			// No column list: the table's first columns; several rows; DEFAULT.
			sql:        "INSERT INTO ledger VALUES ($1, $2, 5, 'a', DEFAULT), ($1 + 1, $2, $3 * 2, 'b', now())",
			columns:    []string{"id", "user_id", "amount", "request_id", "at"},
			serverTime: []string{"at"}, defaulted: []string{"at"}, claim: "ledger_pkey",
			params: []Value{Int(10), Int(1), Int(4)},
			rows:   [][]Value{{Int(10), Int(1), Int(5), String("a"), Null}, {Int(11), Int(1), Int(8), String("b"), Null}},
		},
		{
			sql: "INSERT INTO nokey DEFAULT VALUES", columns: nil, defaulted: []string{"a", "b"},
			rows: [][]Value{{}},
		},
		{
			// Decimals: into numeric columns at their fewest places, into text with their
			// display scale; a string read as its column's type.
			sql:     "INSERT INTO costs (id, total, cents, free, note) VALUES ($1, 0.001, $2, $2 * -0.5, 2.50)",
			columns: []string{"id", "total", "cents", "free", "note"}, defaulted: []string{"small", "n"},
			claim: "costs_pkey", params: []Value{Int(3), String("12.50")},
			rows: [][]Value{{Int(3), Dec(100_000, 3), Dec(1_250_000_000, 1), Dec(-625_000_000, 2), String("2.50")}},
		},
		{
			// The unique key's value is NULL in one row: no claim.
			sql:     "INSERT INTO points (id, email) VALUES (NULL, 'x'), (1, NULL)",
			columns: []string{"id", "email"}, defaulted: []string{"p", "sp", "owner", "n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			f.mustPrepare(t, tc.sql)
			st, err := Analyze(Input{SQL: tc.sql, Line: 1}, f.cat)
			if err != nil {
				t.Fatal(err)
			}
			if st.Class != Insert || !st.Deferrable() {
				t.Fatalf("class %v, refusals %v", st.Class, st.Refusals)
			}
			ins := st.Insert
			var cols []string
			for _, c := range ins.Columns {
				cols = append(cols, c.Name)
			}
			if !slices.Equal(cols, tc.columns) || !slices.Equal(ins.ServerTime, tc.serverTime) ||
				!slices.Equal(ins.Defaulted, tc.defaulted) {
				t.Errorf("columns %v, server time %v, defaulted %v; want %v, %v, %v",
					cols, ins.ServerTime, ins.Defaulted, tc.columns, tc.serverTime, tc.defaulted)
			}
			claim := ""
			if ins.Claim != nil {
				claim = ins.Claim.Name
			}
			if claim != tc.claim {
				t.Errorf("claim %q, want %q", claim, tc.claim)
			}
			if tc.rows == nil {
				return
			}
			rows, err := ins.Values(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.rows) {
				t.Fatalf("%d rows, want %d", len(rows), len(tc.rows))
			}
			for i := range rows {
				if !slices.Equal(rows[i], tc.rows[i]) {
					t.Errorf("row %d: %v, want %v", i, rows[i], tc.rows[i])
				}
			}
		})
	}
	st, err := Analyze(Input{SQL: "INSERT INTO ledger (user_id, amount, request_id) VALUES ($1, $2, $3)"}, f.cat)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Insert.Values([]Value{Int(1), Null, String("r")}); err == nil ||
		!strings.Contains(err.Error(), "NOT NULL column amount") {
		t.Errorf("NULL into ledger.amount: %v", err)
	}
}

// TestRefusals tries every reason the queue modes refuse a statement for, each on a
// statement PostgreSQL accepts against the fixture's tables (sync runs them all).
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		sql     string
		class   Class
		kinds   []RefusalKind
		message string // the first refusal's line, whole, when given
		reason  string // or a part of its reason
		params  []string
		noSync  bool // not preparable on its own (several statements)
	}{
		{
			sql: "UPDATE inventory SET qty = qty - $2 WHERE sku = $1 AND qty >= $2", class: Other,
			kinds:   []RefusalKind{FurtherCondition, CheckedColumn},
			message: "line 7: UPDATE inventory … WHERE sku = $1 AND qty >= $2: a further condition (qty >= $2) decides which writes apply; deferring could change which fail",
		},
		{
			sql: "UPDATE inventory SET qty = qty - $2 WHERE sku = $1 AND qty >= $2", class: Other, params: []string{"sku", "n"},
			kinds:   []RefusalKind{FurtherCondition, CheckedColumn},
			message: "line 7: UPDATE inventory … WHERE sku = :sku AND qty >= :n: a further condition (qty >= :n) decides which writes apply; deferring could change which fail",
		},
		{
			sql: "UPDATE inventory SET qty = qty - $1 WHERE sku = $2", class: Update, kinds: []RefusalKind{CheckedColumn},
			message: "line 7: UPDATE inventory … WHERE sku = $2: qty is under CHECK constraint inventory_qty_check (qty >= 0): compacting could change which writes fail",
		},
		{
			sql: "UPDATE inventory SET reserved = reserved + 1 WHERE note = $1", class: Other, kinds: []RefusalKind{NotFullKey},
			reason: "the WHERE is not the full primary key of inventory (sku; sku not named)",
		},
		{
			sql: "UPDATE stock SET qty = qty + 1 WHERE sku = $1", class: Other, kinds: []RefusalKind{NotFullKey},
			reason: "not the full primary key of stock (warehouse, sku; warehouse not named)",
		},
		{
			sql: "UPDATE stock SET qty = qty + 1 WHERE sku = $1 OR warehouse = $2", class: Other, kinds: []RefusalKind{NotFullKey},
		},
		{sql: "UPDATE counters SET hits = hits + 1", class: Other, kinds: []RefusalKind{NotFullKey}, reason: "no WHERE"},
		{
			sql: "UPDATE counters SET hits = hits + 1 WHERE id = $1 AND id = $2", class: Other,
			kinds: []RefusalKind{FurtherCondition}, reason: "a further condition (id = $2)",
		},
		{
			sql: "UPDATE counters SET hits = hits + 1 WHERE id = $1 AND hits < 100 AND bytes > 0", class: Other,
			kinds: []RefusalKind{FurtherCondition}, reason: "further conditions (hits < 100, bytes > 0) decide",
		},
		{sql: "UPDATE counters SET hits = hits + 1 WHERE id = NULL", class: Other, kinds: []RefusalKind{NotFullKey}, reason: "matches no row"},
		{
			sql: "UPDATE counters SET hits = hits + 1 WHERE id = (SELECT max(id) FROM counters)", class: Other,
			kinds: []RefusalKind{Inexact}, reason: "is a sub-select",
		},
		{
			sql: "UPDATE pgbench_history SET delta = delta + 1 WHERE tid = $1", class: Other, kinds: []RefusalKind{NoPrimaryKey},
			reason: "pgbench_history has no primary key",
		},
		{sql: "UPDATE nokey SET b = b + 1 WHERE a = $1", class: Other, kinds: []RefusalKind{NoPrimaryKey}},
		{
			sql: "UPDATE inventory SET sku = $1 WHERE sku = $2", class: Other, kinds: []RefusalKind{KeyWritten},
			reason: "it writes primary-key column sku",
		},
		{
			sql: "UPDATE audited SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{Trigger},
			reason: "audited has trigger audited_audit",
		},
		{sql: "INSERT INTO audited (id) VALUES ($1)", class: Insert, kinds: []RefusalKind{Trigger}},
		{
			sql: "UPDATE points SET p = p + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{CheckedColumn},
			reason: "p is of domain positive, under CHECK constraint positive_check (VALUE > 0)",
		},
		{sql: "UPDATE points SET sp = sp + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{CheckedColumn, CheckedColumn}},
		{
			sql: "UPDATE points SET email = $2 WHERE id = $1", class: Update, kinds: []RefusalKind{UniqueColumn, UniqueColumn},
			reason: "email is under unique index points_email_key",
		},
		{
			// The expression index reads n in its predicate.
			sql: "UPDATE points SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{UniqueColumn},
			reason: "n is under unique index points_lower_email",
		},
		{
			sql: "UPDATE points SET owner = $2 WHERE id = $1", class: Update, kinds: []RefusalKind{ForeignKeyColumn},
			reason: "owner is in foreign key points_owner_fkey to user_wallets",
		},
		{
			sql: "UPDATE pair SET lo = lo + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{CheckedColumn},
			reason: "lo is under CHECK constraint pair_check (lo <= hi)",
		},
		{
			sql: "UPDATE counters SET hits = hits * 2 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hits = hits * 2: none of the writes the kit merges",
		},
		{
			sql: "UPDATE counters SET hits = hits + random() WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hits = hits + random(): random() is a function the kit cannot evaluate",
		},
		{
			sql: "UPDATE counters SET hits = hits + $1 * hits WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hits = hits + ($1 * hits): $1 * hits reads column hits",
		},
		{
			sql: "UPDATE counters SET hits = $1 - hits WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hits is subtracted",
		},
		{
			sql: "UPDATE counters SET hits = hits + bytes WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "bytes reads column bytes",
		},
		{
			sql: "UPDATE counters SET hits = hits + hits WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hits appears 2 times",
		},
		{
			sql: "UPDATE measures SET total = total + $1 WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "total is double precision: sums of floats taken in another order may differ",
		},
		{
			sql: "UPDATE measures SET count = count + $1::float8 WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "count = count + $1::float8: $1::float8 is a float",
		},
		{
			sql: "UPDATE measures SET count = count + 1.5 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "count = count + 1.5: 1.5 is a decimal, which count (integer) would round: the kit writes decimals to numeric columns only",
		},
		{
			sql: "UPDATE costs SET total = total + 0.000000001 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			message: "line 7: UPDATE costs … WHERE id = $1: total = total + 0.000000001: 0.000000001 has more than 8 " +
				"decimal places: the kit adds numerics exactly to 10⁻⁸",
		},
		{
			sql: "UPDATE costs SET free = free + 1.000000000 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "1.000000000 has more than 8 decimal places",
		},
		{
			sql: "UPDATE costs SET n = n + $1 * 0.5 WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "n = n + ($1 * 0.5): 0.5 is a decimal, which n (integer) would round: the kit writes decimals to numeric columns only",
		},
		{
			sql: "UPDATE costs SET n = greatest(n, -0.5) WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "-0.5 is a decimal, which n (integer) would round",
		},
		{
			sql: "UPDATE costs SET n = 2.5 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "n = 2.5: 2.5 is a decimal, which n (integer) would round",
		},
		{
			sql: "UPDATE costs SET cents = cents + 0.001 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "cents = cents + 0.001: 0.001 has more decimal places than cents (numeric(12,2)) keeps: each write would round",
		},
		{
			sql: "UPDATE costs SET cents = cents + 0.001::numeric(10,2) WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "0.001::numeric(10,2): 0.001 has more decimal places than numeric(10,2) keeps: it would round",
		},
		{
			sql: "UPDATE costs SET total = total + $1::numeric(30,10) WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "$1::numeric(30, 10) is a cast to numeric(30,10), which keeps more than 8 decimal places",
		},
		{
			sql: "UPDATE costs SET total = total + 0.00001 * 0.0001 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "total = total + (0.00001 * 0.0001): 0.00001 * 0.0001 with 0.00001 and 0.0001: the result has more than 8 decimal places",
		},
		{
			sql: "UPDATE costs SET total = total + 92233720368.5 + 1 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "the result is out of the kit's decimal range (±92233720368.54775807)",
		},
		{
			sql: "UPDATE costs SET free = free + 100000000000.0 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "100000000000.0 is out of the kit's decimal range",
		},
		{
			sql: "UPDATE costs SET small = small + 100 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "small = small + 100: 100 is out of range for numeric(4,2)",
		},
		{
			sql: "UPDATE measures SET total = total + 0.001 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "total is double precision: sums of floats taken in another order may differ",
		},
		{
			sql: "UPDATE rates SET n = n + 1 WHERE rate = 0.0005", class: Other, kinds: []RefusalKind{Inexact},
			reason: "rate = 0.0005: 0.0005 is not a value of rate (numeric(6,3)), so the UPDATE names no row",
		},
		{sql: "INSERT INTO costs (id, n) VALUES ($1, 0.5)", class: Other, kinds: []RefusalKind{Inexact},
			message: "line 7: INSERT INTO costs (id, n) VALUES ($1, 0.5): n: 0.5 is a decimal, which n (integer) would round: " +
				"the kit writes decimals to numeric columns only"},
		{
			sql: "UPDATE measures SET hundreds = hundreds + 100 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "hundreds is numeric(10,-2), which rounds every write",
		},
		{
			sql: "UPDATE measures SET seen_at = seen_at + interval '1 day' WHERE id = $1", class: Other,
			kinds: []RefusalKind{Inexact}, reason: "seen_at is timestamp with time zone: the kit adds to integer and numeric columns only",
		},
		{
			sql: "UPDATE measures SET count = count + $1 / 2 WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "$1 / 2 uses an operator the kit does not evaluate",
		},
		{
			sql: "UPDATE measures SET count = count + NULL WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "NULL is not a number",
		},
		{
			sql: "UPDATE measures SET count = greatest(count, $1, $2) WHERE id = $3", class: Other, kinds: []RefusalKind{Inexact},
			reason: "greatest(count, e) of the column and one value only",
		},
		{
			sql: "UPDATE measures SET total = greatest(total, $1) WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "total is double precision: the kit compares numbers",
		},
		{
			sql: "UPDATE counters SET hits = DEFAULT WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "DEFAULT is the server's value",
		},
		{
			sql: "UPDATE dated SET n = n + 1 WHERE d = $1", class: Update, kinds: []RefusalKind{KeyType},
			reason: "key column d is date",
		},
		{sql: "UPDATE events SET n = n + 1 WHERE id = $1 AND at = $2", class: Update, kinds: []RefusalKind{UnsupportedTable, KeyType},
			reason: "events is a partitioned table"},
		{sql: "INSERT INTO events VALUES ($1, $2, 0)", class: Insert, kinds: []RefusalKind{UnsupportedTable}},
		{sql: "UPDATE wallet_view SET balance = balance + 1 WHERE user_id = $1", class: Other,
			kinds: []RefusalKind{UnsupportedTable, NoPrimaryKey}, reason: "wallet_view is a view"},
		{sql: "UPDATE parent SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{UnsupportedTable},
			reason: "parent has inheritance children"},
		{sql: "UPDATE ruled SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{UnsupportedTable},
			reason: "ruled has rule ruled_nothing"},
		{sql: "UPDATE secured SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{UnsupportedTable},
			reason: "secured has row-level security"},
		{sql: "UPDATE booking SET during = $2 WHERE id = $1", class: Update, kinds: []RefusalKind{UniqueColumn},
			reason: "during is under exclusion constraint booking_during_excl"},
		{sql: "UPDATE pg_catalog.pg_class SET relpages = 0 WHERE oid = $1", class: Other,
			kinds: []RefusalKind{UnsupportedTable}, reason: "it names schema pg_catalog"},
		{sql: "UPDATE counters SET nosuch = 1 WHERE id = $1", class: Other, kinds: []RefusalKind{UnknownName}, noSync: true},
		{
			sql: "UPDATE counters SET hits = hits + 1 WHERE id = $1 RETURNING hits", class: Other, kinds: []RefusalKind{Returning},
			reason: "RETURNING: a deferred write cannot return its values at request time",
		},
		{sql: "INSERT INTO ledger (user_id, amount, request_id) VALUES (1, 2, $1) RETURNING id", class: Other,
			kinds: []RefusalKind{Returning}},
		{sql: "UPDATE counters c SET hits = c.hits + 1 FROM user_wallets w WHERE c.id = w.user_id AND c.id = $1", class: Other,
			kinds: []RefusalKind{UnsupportedForm, FurtherCondition}, reason: "UPDATE … FROM"},
		{sql: "WITH x AS (SELECT 1) UPDATE counters SET hits = hits + 1 WHERE id = $1", class: Other,
			kinds: []RefusalKind{UnsupportedForm}},
		{sql: "UPDATE counters SET (hits, bytes) = (hits + 1, $2) WHERE id = $1", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "SET (…) = (…)"},
		{sql: "INSERT INTO counters (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET hits = counters.hits + 1", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "ON CONFLICT"},
		{sql: "INSERT INTO counters (id) SELECT user_id FROM user_wallets", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "INSERT … SELECT"},
		{sql: "INSERT INTO counters (id, hits) VALUES ($1, random()::int)", class: Other,
			kinds: []RefusalKind{Inexact}, reason: "hits: random() is a function"},
		{sql: "WITH d AS (DELETE FROM counters WHERE id = $1 RETURNING id) SELECT * FROM d", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "a write inside WITH"},
		{sql: "SELECT balance FROM user_wallets WHERE user_id = $1 FOR UPDATE", class: LockingRead,
			kinds: []RefusalKind{Locking}, reason: "a locking read"},
		{sql: "SELECT 1 FROM user_wallets w JOIN ledger l USING (user_id) FOR SHARE OF w", class: LockingRead,
			kinds: []RefusalKind{Locking}},
		{sql: "SELECT * INTO copied FROM user_wallets", class: Other, kinds: []RefusalKind{DDL}},
		{sql: "DELETE FROM inventory WHERE sku = $1", class: Other, kinds: []RefusalKind{Delete},
			message: "line 7: DELETE FROM inventory WHERE sku = $1: the kit defers UPDATEs by primary key and INSERTs; a deferred delete would land out of order with them"},
		{sql: "TRUNCATE ledger", class: Other, kinds: []RefusalKind{Delete}},
		{sql: "CREATE TABLE extra (a int)", class: Other, kinds: []RefusalKind{DDL}, reason: "DDL (CREATE TABLE)"},
		{sql: "ALTER TABLE inventory ADD COLUMN extra int", class: Other, kinds: []RefusalKind{DDL}, reason: "DDL (ALTER TABLE)"},
		{sql: "DROP TABLE nokey", class: Other, kinds: []RefusalKind{DDL}, reason: "DDL (DROP)"},
		{sql: "CREATE INDEX ON inventory (note)", class: Other, kinds: []RefusalKind{DDL}},
		{sql: "MERGE INTO counters c USING user_wallets w ON c.id = w.user_id WHEN MATCHED THEN UPDATE SET hits = c.hits + 1",
			class: Other, kinds: []RefusalKind{OtherStatement}, reason: "whether a MERGE updates or inserts"},
		{sql: "SET work_mem = '64MB'", class: Other, kinds: []RefusalKind{OtherStatement}, reason: "SET is not a write the kit defers"},
		{sql: "SELECT pg_sleep(0)", class: Select},
		{sql: "LOCK TABLE counters", class: Other, kinds: []RefusalKind{OtherStatement}},
		{sql: "ROLLBACK", class: TxControl, kinds: []RefusalKind{Transaction},
			message: "line 7: ROLLBACK: the writes deferred before it cannot be taken back"},
		{sql: "ABORT", class: TxControl, kinds: []RefusalKind{Transaction}},
		{sql: "BEGIN ISOLATION LEVEL SERIALIZABLE", class: TxControl, kinds: []RefusalKind{Transaction},
			message: "line 7: BEGIN ISOLATION LEVEL SERIALIZABLE: the writes deferred out of the request's transaction are no longer under its options"},
		{sql: "START TRANSACTION READ ONLY", class: TxControl, kinds: []RefusalKind{Transaction}},
		{sql: "SAVEPOINT s", class: Other, kinds: []RefusalKind{Transaction}, message: "line 7: SAVEPOINT s: the kit runs each request as one transaction, without savepoints or two-phase commit"},
		{sql: "COMMIT AND CHAIN", class: Other, kinds: []RefusalKind{Transaction}},
		{
			sql:   "UPDATE counters SET hits = hits + 1 WHERE id = 1; UPDATE counters SET hits = hits + 1 WHERE id = 2",
			class: Other, kinds: []RefusalKind{Compound}, reason: "one command holds 2 statements", noSync: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			if !tc.noSync {
				f.mustPrepare(t, tc.sql)
			}
			st, err := Analyze(Input{SQL: tc.sql, Line: 7, Params: tc.params}, f.cat)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []RefusalKind
			for _, r := range st.Refusals {
				kinds = append(kinds, r.Kind)
				if msg := r.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "line 7: ") {
					t.Errorf("not one line naming line 7: %q", msg)
				}
			}
			if st.Class != tc.class || !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("class %v, refusals %v; want %v, %v\n%v", st.Class, kinds, tc.class, tc.kinds, st.Refusals)
			}
			if len(st.Refusals) == 0 {
				return
			}
			first := st.Refusals[0]
			if tc.message != "" && first.Error() != tc.message {
				t.Errorf("message\n %s\nwant\n %s", first.Error(), tc.message)
			}
			if tc.reason != "" && !strings.Contains(first.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", first.Reason, tc.reason)
			}
		})
	}
}

func TestParseErrorIsOneLineWithTheStatementsLine(t *testing.T) {
	cases := []struct {
		sql  string
		line int
		want string
	}{
		{"UPDATE counters SETT hits = 1 WHERE id = $1", 12, `line 12: syntax error at or near "hits"`},
		{"UPDATE counters SET hits = hits +\n  WHERE id = $1", 4, `line 4: syntax error at or near "WHERE"`},
		{"SELEC 1", 1, `line 1: syntax error at or near "SELEC"`},
		{"INSERT INTO t VALUES ('unterminated)", 30, "line 30: unterminated quoted string at or near \"'unterminated)\""},
		{"  ;  ", 9, `line 9: no SQL statement in ";"`},
	}
	for _, tc := range cases {
		_, err := Analyze(Input{SQL: tc.sql, Line: tc.line}, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.sql, err, tc.want)
		}
	}
	// A parse error fails the whole plan, whichever line it is on.
	_, err := Plan([]Input{
		{SQL: "BEGIN", Line: 1},
		{SQL: "UPDATE counters SET hits = hits + 1 WHERE id = $1", Line: 2},
		{SQL: "UPDATE counters SET hits = hits + 1 WHER id = $1", Line: 3},
		{SQL: "COMMIT", Line: 4},
	}, nil)
	if err == nil || !regexp.MustCompile(`^line 3: syntax error at or near "WHER"$`).MatchString(err.Error()) {
		t.Errorf("Plan: %v", err)
	}
}
