package sqlshape

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlFixtureSQL is, for MySQL, a table for each thing the analysis tells apart, and TPC-B's.
var mysqlFixtureSQL = []string{
	`CREATE TABLE pgbench_accounts (aid INT NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84))`,
	`CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84))`,
	`CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88))`,
	`CREATE TABLE pgbench_history (tid INT, bid INT, aid INT, delta INT, mtime DATETIME(6), filler CHAR(22))`,
	`CREATE TABLE wallets (id BIGINT UNSIGNED PRIMARY KEY, balance DECIMAL(12,2) NOT NULL, debits BIGINT NOT NULL DEFAULT 0,
	   last_debit_at DATETIME(6), max_debit BIGINT NOT NULL DEFAULT 0, label VARCHAR(40), hits TINYINT NOT NULL DEFAULT 0)`,
	`CREATE TABLE ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, wallet_id BIGINT UNSIGNED NOT NULL, amount DECIMAL(12,2) NOT NULL,
	   request_id BIGINT NOT NULL UNIQUE, at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
	   CONSTRAINT ledger_wallet FOREIGN KEY (wallet_id) REFERENCES wallets (id))`,
	`CREATE TABLE inventory (sku VARCHAR(20) PRIMARY KEY, qty INT NOT NULL CHECK (qty >= 0), note TEXT)`,
	`CREATE TABLE skus (sku VARCHAR(20) COLLATE utf8mb4_nopad_bin PRIMARY KEY, qty INT UNSIGNED NOT NULL DEFAULT 0,
	   n INT NOT NULL DEFAULT 0)`,
	`CREATE TABLE plain (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0) ENGINE=MyISAM`,
	`CREATE TABLE audited (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0)`,
	`CREATE TRIGGER audited_touch BEFORE UPDATE ON audited FOR EACH ROW SET NEW.n = NEW.n`,
	`CREATE TABLE nokey (a INT, b INT)`,
	`CREATE TABLE measures (id INT PRIMARY KEY, total DOUBLE NOT NULL DEFAULT 0, cnt INT NOT NULL DEFAULT 0)`,
	`CREATE VIEW wallet_view AS SELECT * FROM wallets`,
	`CREATE TABLE gen (id INT PRIMARY KEY, email VARCHAR(40), lower_email VARCHAR(40) AS (lower(email)) VIRTUAL,
	   n INT NOT NULL DEFAULT 0, UNIQUE KEY gen_lower_email (lower_email))`,
	`CREATE TABLE pair (id INT PRIMARY KEY, lo INT, hi INT, CONSTRAINT pair_order CHECK (lo <= hi))`,
	`CREATE TABLE counts (id INT UNSIGNED, slot SMALLINT NOT NULL DEFAULT 0, hits BIGINT NOT NULL DEFAULT 0,
	   PRIMARY KEY (id, slot))`,
}

// mysqlFixture is a database of its own on the shared MariaDB holding mysqlFixtureSQL's
// tables, and its catalog.
type mysqlFixture struct {
	db  *mariadbtest.DB
	cat *Catalog
}

func newMySQLFixture(t *testing.T) *mysqlFixture {
	t.Helper()
	db := mariadbtest.New(t)
	db.MustExec(t, mysqlFixtureSQL...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat, err := LoadMySQLCatalog(ctx, sqldb.MySQLDB(db.DB), db.Name, nil)
	if err != nil {
		t.Fatalf("LoadMySQLCatalog: %v", err)
	}
	return &mysqlFixture{db: db, cat: cat}
}

// mustPrepare checks that MariaDB itself accepts the statement against the fixture's tables
// (parsed and resolved, nothing run): the cases are statements sync would run.
func (f *mysqlFixture) mustPrepare(t *testing.T, sql string) {
	t.Helper()
	q, _, err := sqldb.Placeholders(sql)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec("PREPARE s FROM " + quoteMySQL(q)); err != nil {
		t.Fatalf("MariaDB does not accept %q: %v", sql, err)
	}
	if _, err := f.db.Exec("DEALLOCATE PREPARE s"); err != nil {
		t.Fatal(err)
	}
}

func quoteMySQL(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// TestMySQLCatalog: what LoadMySQLCatalog reads of each table from MariaDB's
// information_schema.
func TestMySQLCatalog(t *testing.T) {
	f := newMySQLFixture(t)
	cat := f.cat
	if cat.Grammar != MySQL || cat.Schema != f.db.Name {
		t.Fatalf("grammar %v, schema %q", cat.Grammar, cat.Schema)
	}
	w := cat.Table("wallets")
	if w == nil || !slices.Equal(w.PrimaryKey, []string{"id"}) || w.Kind != Ordinary || w.Unsupported != "" {
		t.Fatalf("wallets: %+v", w)
	}
	if c := w.Column("BALANCE"); c == nil || c.Name != "balance" || c.BaseTypeOID != oidNumeric || !c.NotNull {
		t.Errorf("wallets.balance (named in capitals): %+v", c)
	} else if p, s, ok := c.numericDigits(); !ok || p != 12 || s != 2 {
		t.Errorf("balance's digits: %d, %d, %v", p, s, ok)
	}
	if c := w.Column("hits"); c.holds(Int(127)) != true || c.holds(Int(128)) || !c.holds(Int(-128)) {
		t.Errorf("TINYINT's range is not -128..127")
	}
	if c := w.Column("id"); !c.Unsigned || c.holds(Int(-1)) || !c.holds(Int(1<<62)) {
		t.Errorf("BIGINT UNSIGNED: %+v", c)
	}
	if len(w.ReferencedBy) != 1 || w.ReferencedBy[0].Name != "ledger_wallet" || w.ReferencedBy[0].Table != "ledger" {
		t.Errorf("wallets referenced by %+v", w.ReferencedBy)
	}
	l := cat.Table("ledger")
	if len(l.ForeignKeys) != 1 || l.ForeignKeys[0].RefTable != "wallets" || !slices.Equal(l.ForeignKeys[0].Columns, []string{"wallet_id"}) {
		t.Errorf("ledger's foreign keys %+v", l.ForeignKeys)
	}
	if c := l.Column("id"); !c.Identity {
		t.Errorf("ledger.id is AUTO_INCREMENT: %+v", c)
	}
	var uniques []string
	for _, k := range l.Claimable() {
		uniques = append(uniques, strings.Join(k.Columns, ","))
	}
	if !slices.Equal(uniques, []string{"id", "request_id"}) {
		t.Errorf("ledger's claimable keys %v", uniques)
	}
	inv := cat.Table("inventory")
	if len(inv.Checks) != 1 || !slices.Equal(inv.Checks[0].Columns, []string{"qty"}) {
		t.Errorf("inventory's checks %+v", inv.Checks)
	}
	if why := inv.Column("sku").keyable(); !strings.Contains(why, "collation utf8mb4") {
		t.Errorf("a key under a case-insensitive collation: %q", why)
	}
	if why := cat.Table("skus").Column("sku").keyable(); why != "" {
		t.Errorf("a key under utf8mb4_nopad_bin: %q", why)
	}
	if p := cat.Table("pair"); len(p.Checks) != 1 || p.MultiColumnCheck() == nil {
		t.Errorf("pair's checks %+v", p.Checks)
	}
	if g := cat.Table("gen"); len(g.UniqueKeys) != 2 || g.UniqueKeys[1].Name != "gen_lower_email" ||
		!slices.Contains(g.UniqueKeys[1].References, "email") {
		t.Errorf("gen's unique key on a generated column reads email: %+v", g.UniqueKeys)
	} else if !g.Column("lower_email").Generated {
		t.Error("lower_email is generated")
	}
	if p := cat.Table("plain"); !strings.Contains(p.Unsupported, "MyISAM") {
		t.Errorf("a MyISAM table: %q", p.Unsupported)
	}
	if a := cat.Table("audited"); !slices.Equal(a.Triggers, []string{"audited_touch"}) {
		t.Errorf("audited's triggers %v", a.Triggers)
	}
	if v := cat.Table("wallet_view"); v == nil || v.Kind != View {
		t.Errorf("wallet_view: %+v", v)
	}
	if _, err := LoadMySQLCatalog(context.Background(), sqldb.MySQLDB(f.db.DB), f.db.Name, []string{"wallets", "missing"}); err == nil ||
		!strings.Contains(err.Error(), "no table missing") {
		t.Errorf("a named table that is not there: %v", err)
	}
}

// TestMySQLTPCB: TPC-B in MySQL's dialect is deferrable whole: its UPDATEs increments of
// one row by key, its INSERT an appended row with a server time, its SELECT read at request
// time, its BEGIN and COMMIT the kit's.
func TestMySQLTPCB(t *testing.T) {
	f := newMySQLFixture(t)
	var inputs []Input
	for k, sql := range []string{
		"BEGIN",
		"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
		"SELECT abalance FROM pgbench_accounts WHERE aid = $1",
		"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
		"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
		"COMMIT",
	} {
		params := map[int][]string{1: {"delta", "aid"}, 2: {"aid"}, 3: {"delta", "tid"}, 4: {"delta", "bid"},
			5: {"tid", "bid", "aid", "delta"}}[k]
		f.mustPrepare(t, sql)
		inputs = append(inputs, Input{SQL: sql, Line: k + 1, Params: params})
	}
	s, err := Plan(inputs, f.cat)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Deferrable() {
		t.Fatalf("refused: %v", s.Refusals)
	}
	if got, want := classes(s), []Class{TxControl, Update, Select, Update, Update, Insert, TxControl}; !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	up := s.Statements[1]
	if up.Text != "UPDATE pgbench_accounts SET abalance=abalance + :delta WHERE aid = :aid" {
		t.Errorf("text %q", up.Text)
	}
	item := up.Update.Set[0]
	if item.Op != Increment || item.Text != "abalance = abalance + :delta" {
		t.Errorf("item %+v", item)
	}
	if v, err := item.Eval([]Value{Int(-4321), Int(7)}); err != nil || v != Int(-4321) {
		t.Errorf("delta %v, %v", v, err)
	}
	if key, err := up.Update.KeyValues([]Value{Int(0), Int(7)}); err != nil || !slices.Equal(key, []Value{Int(7)}) {
		t.Errorf("key %v, %v", key, err)
	}
	ins := s.Statements[5].Insert
	if !slices.Equal(ins.ServerTime, []string{"mtime"}) || ins.Rows[0][4].ServerFunc != "CURRENT_TIMESTAMP()" {
		t.Errorf("history's server time %v %+v", ins.ServerTime, ins.Rows[0][4])
	}
	if s.Statements[0].Tx != TxBegin || s.Statements[6].Tx != TxCommit || s.Statements[0].Tag != "BEGIN" {
		t.Errorf("BEGIN and COMMIT: %+v %+v", s.Statements[0], s.Statements[6])
	}
	for _, v := range s.Slots() {
		if v.Table != "pgbench_history" && !v.Allowed() {
			t.Errorf("%s cannot be split: %s", v.Table, v.Reason)
		}
	}
}

// TestMySQLValues: what MySQL makes of its literals and casts, as the kit evaluates them.
func TestMySQLValues(t *testing.T) {
	f := newMySQLFixture(t)
	for _, tc := range []struct {
		sql    string
		column string
		params []Value
		want   Value
		err    string
	}{
		{sql: "UPDATE wallets SET balance = balance - 1.50 WHERE id = $1", column: "balance", want: Dec(-150_000_000, 1)},
		{sql: "UPDATE wallets SET balance = balance - $2 WHERE id = $1", column: "balance",
			params: []Value{Int(1), Int(3)}, want: Int(-3)},
		{sql: "UPDATE wallets SET balance = balance + $2 WHERE id = $1", column: "balance",
			params: []Value{Int(1), String("0.25")}, want: Dec(25_000_000, 2)},
		{sql: "UPDATE wallets SET balance = balance + CAST($2 AS DECIMAL(12,2)) WHERE id = $1", column: "balance",
			params: []Value{Int(1), String("0.255")}, err: "more decimal places than DECIMAL(12,2) keeps"},
		{sql: "UPDATE wallets SET debits = debits + CAST($2 AS UNSIGNED) WHERE id = $1", column: "debits",
			params: []Value{Int(1), Int(-3)}, err: "negative, which UNSIGNED wraps around"},
		{sql: "UPDATE wallets SET debits = debits + CAST($2 AS SIGNED) WHERE id = $1", column: "debits",
			params: []Value{Int(1), String("12")}, want: Int(12)},
		{sql: "UPDATE wallets SET debits = debits + TRUE WHERE id = $1", column: "debits", want: Int(1)},
		{sql: "UPDATE wallets SET hits = hits + $2 WHERE id = $1", column: "hits",
			params: []Value{Int(1), Int(200)}, err: "out of range for tinyint"},
		{sql: "UPDATE wallets SET max_debit = GREATEST(max_debit, $2) WHERE id = $1", column: "max_debit",
			params: []Value{Int(1), Int(9)}, want: Int(9)},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			f.mustPrepare(t, tc.sql)
			st, err := Analyze(Input{SQL: tc.sql, Line: 1}, f.cat)
			if err != nil {
				t.Fatal(err)
			}
			if st.Class != Update {
				t.Fatalf("class %v: %v", st.Class, st.Refusals)
			}
			i := slices.IndexFunc(st.Update.Set, func(it SetItem) bool { return it.Column.Name == tc.column })
			v, err := st.Update.Set[i].Eval(tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Eval = %v, %v; want an error with %q", v, err, tc.err)
				}
				return
			}
			if err != nil || v != tc.want {
				t.Fatalf("Eval = %v, %v; want %v", v, err, tc.want)
			}
		})
	}
}

// TestMySQLRefusals: each reason the queue modes refuse a statement for, on statements
// MariaDB accepts against the fixture's tables, and the MySQL forms of their own.
func TestMySQLRefusals(t *testing.T) {
	f := newMySQLFixture(t)
	for _, tc := range []struct {
		sql    string
		class  Class
		kinds  []RefusalKind
		reason string // a part of the first refusal's
		noSync bool   // not preparable on its own
	}{
		{sql: "UPDATE wallets SET balance = balance - $1 WHERE id = $2 AND balance >= $1", class: Other,
			kinds: []RefusalKind{FurtherCondition}, reason: "a further condition (balance >= $1)"},
		{sql: "UPDATE inventory SET qty = qty - 1 WHERE sku = $1", class: Update, kinds: []RefusalKind{KeyType, CheckedColumn},
			reason: "key column sku has collation utf8mb4_general_ci"},
		{sql: "UPDATE skus SET qty = qty - 1 WHERE sku = $1", class: Update, kinds: []RefusalKind{CheckedColumn},
			reason: "qty is int(10) unsigned, whose range acts as CHECK (qty >= 0)"},
		{sql: "UPDATE skus SET qty = $2 WHERE sku = $1", class: Update, kinds: nil}, // each value checked on its own
		{sql: "UPDATE skus SET qty = qty + 1, n = n + 1 WHERE sku = $1 AND n = 0", class: Other,
			kinds: []RefusalKind{FurtherCondition, CheckedColumn}},
		{sql: "UPDATE pair SET lo = lo + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{CheckedColumn},
			reason: "lo is under CHECK constraint pair_order (`lo` <= `hi`)"},
		{sql: "UPDATE gen SET email = $1 WHERE id = $2", class: Update, kinds: []RefusalKind{UniqueColumn},
			reason: "email is under unique index gen_lower_email"},
		{sql: "UPDATE ledger SET wallet_id = $1 WHERE id = $2", class: Update, kinds: []RefusalKind{ForeignKeyColumn},
			reason: "wallet_id is in foreign key ledger_wallet to wallets"},
		{sql: "UPDATE plain SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{UnsupportedTable},
			reason: "plain is a MyISAM table, without transactions"},
		{sql: "UPDATE audited SET n = n + 1 WHERE id = $1", class: Update, kinds: []RefusalKind{Trigger},
			reason: "audited has trigger audited_touch"},
		{sql: "UPDATE nokey SET b = b + 1 WHERE a = $1", class: Other, kinds: []RefusalKind{NoPrimaryKey}},
		{sql: "UPDATE measures SET total = total + $1 WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "total is double: sums of floats"},
		{sql: "UPDATE measures SET cnt = cnt + 1e3 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "1e+03 is a floating-point literal"},
		{sql: "UPDATE wallets SET balance = balance + 0.005 WHERE id = $1", class: Other, kinds: []RefusalKind{Inexact},
			reason: "0.005 has more decimal places than balance (decimal(12,2)) keeps"},
		{sql: "UPDATE wallets SET label = CAST($1 AS CHAR(3)) WHERE id = $2", class: Other, kinds: []RefusalKind{Inexact},
			reason: "is a cast to CHAR(3), which cuts the string"},
		{sql: "UPDATE wallets SET debits = debits + 1 WHERE id = $1 LIMIT 1", class: Other, kinds: []RefusalKind{UnsupportedForm},
			reason: "LIMIT: the kit defers an UPDATE of the one row its key names"},
		{sql: "UPDATE IGNORE wallets SET debits = debits + 1 WHERE id = $1", class: Other, kinds: []RefusalKind{UnsupportedForm},
			reason: "UPDATE IGNORE: a write that fails is skipped"},
		{sql: "UPDATE wallets w JOIN ledger l ON l.wallet_id = w.id SET w.debits = w.debits + 1 WHERE w.id = $1", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "UPDATE of several tables (a join) joins other rows"},
		{sql: "INSERT INTO wallets (id, balance) VALUES ($1, 0) ON DUPLICATE KEY UPDATE balance = balance + 1", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "ON DUPLICATE KEY UPDATE: whether it inserts"},
		{sql: "INSERT IGNORE INTO ledger (wallet_id, amount, request_id) VALUES ($1, 1, $2)", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "INSERT IGNORE"},
		{sql: "REPLACE INTO wallets (id, balance) VALUES ($1, 0)", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "REPLACE deletes the row"},
		{sql: "INSERT INTO ledger (wallet_id, amount, request_id) SELECT id, 1, 2 FROM wallets", class: Other,
			kinds: []RefusalKind{UnsupportedForm}, reason: "INSERT … SELECT"},
		{sql: "SELECT balance FROM wallets WHERE id = $1 FOR UPDATE", class: LockingRead, kinds: []RefusalKind{Locking}},
		{sql: "SELECT balance FROM wallets WHERE id = $1 LOCK IN SHARE MODE", class: LockingRead, kinds: []RefusalKind{Locking}},
		{sql: "SELECT balance FROM wallets WHERE id = $1 INTO OUTFILE '/nowhere'", class: Other,
			kinds: []RefusalKind{OtherStatement}, reason: "SELECT … INTO OUTFILE writes outside"},
		{sql: "DELETE FROM ledger WHERE id = $1", class: Other, kinds: []RefusalKind{Delete}},
		{sql: "TRUNCATE TABLE ledger", class: Other, kinds: []RefusalKind{Delete}},
		{sql: "CREATE TABLE t2 (id INT PRIMARY KEY)", class: Other, kinds: []RefusalKind{DDL}, reason: "DDL (CREATE TABLE)"},
		{sql: "SET @x = 1", class: Other, kinds: []RefusalKind{OtherStatement}, reason: "SET is not a write"},
		{sql: "ROLLBACK", class: TxControl, kinds: []RefusalKind{Transaction}},
		{sql: "SAVEPOINT a", class: Other, kinds: []RefusalKind{Transaction}},
		{sql: "START TRANSACTION READ ONLY", class: TxControl, kinds: []RefusalKind{Transaction}},
		{sql: "COMMIT AND CHAIN", class: Other, kinds: []RefusalKind{Transaction}},
		{sql: "UPDATE wallets SET debits = debits + 1 WHERE id = $1; UPDATE wallets SET hits = 0 WHERE id = $1", class: Other,
			kinds: []RefusalKind{Compound}, noSync: true},
		{sql: "INSERT INTO wallet_view (id, balance) VALUES ($1, 0)", class: Insert, kinds: []RefusalKind{UnsupportedTable},
			reason: "wallet_view is a view"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			if !tc.noSync {
				f.mustPrepare(t, tc.sql)
			}
			st, err := Analyze(Input{SQL: tc.sql, Line: 3}, f.cat)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []RefusalKind
			for _, r := range st.Refusals {
				kinds = append(kinds, r.Kind)
			}
			if st.Class != tc.class || !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("class %v, refusals %v; want %v, %v", st.Class, st.Refusals, tc.class, tc.kinds)
			}
			if len(tc.kinds) == 0 {
				return
			}
			if tc.reason != "" && !strings.Contains(st.Refusals[0].Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", st.Refusals[0].Reason, tc.reason)
			}
			if msg := st.Refusals[0].Error(); !strings.HasPrefix(msg, "line 3: ") || strings.Contains(msg, "\n") {
				t.Errorf("not one line naming its line: %q", msg)
			}
		})
	}
}

// TestMySQLGrammarRejects: a statement MySQL's grammar rejects is an error for every mode,
// one line naming the script's line it is on, with the script's names for its variables.
func TestMySQLGrammarRejects(t *testing.T) {
	f := newMySQLFixture(t)
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{SQL: "INSERT INTO ledger (wallet_id, amount, request_id) VALUES ($1, 1, $2) RETURNING id", Line: 4},
			`line 4: MySQL's grammar rejects it near "RETURNING id"`},
		{Input{SQL: "UPDATE wallets\n  SET debits = debits + 1\n  WHERE id = $1 ORDER", Line: 10, Params: []string{"id"}},
			`line 12: MySQL's grammar rejects it at its end`},
		{Input{SQL: "UPDATE wallets SET debits = debits + ? WHERE id = $1", Line: 2}, "line 2: sqldb: the statement mixes $n and ?"},
		{Input{SQL: "UPDATE wallets SET debits = debits + ? WHERE id = 1", Line: 2}, "line 2: a ? is not a variable of the script"},
		{Input{SQL: "UPDATE wallets SET debits = debits + 1 WHERE id = \"1", Line: 5}, `line 5: MySQL's grammar rejects it`},
	} {
		_, err := Analyze(tc.in, f.cat)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Analyze(%q) = %v, want one line starting %q", tc.in.SQL, err, tc.want)
		}
	}
	// The same statements are PostgreSQL's when the catalog is: MySQL's grammar is the
	// catalog's, not a guess.
	if _, err := Analyze(Input{SQL: "UPDATE t SET n = n + 1 WHERE id = $1 RETURNING n", Line: 1}, &Catalog{}); err != nil {
		t.Errorf("PostgreSQL's grammar: %v", err)
	}
}

// TestMySQLSlots: a table is split into slots only where MySQL's types let its parts add up:
// not with an UNSIGNED column whose range each part would have to keep (its key's may be).
func TestMySQLSlots(t *testing.T) {
	f := newMySQLFixture(t)
	s, err := Plan([]Input{
		{SQL: "UPDATE counts SET hits = hits + 1 WHERE id = $1 AND slot = 0", Line: 1},
		{SQL: "UPDATE skus SET n = n + 1, qty = qty + 1 WHERE sku = $1", Line: 2},
	}, f.cat)
	if err != nil {
		t.Fatal(err)
	}
	v := verdicts(s)
	if !v["counts"].Allowed() {
		t.Errorf("counts (an UNSIGNED key): %q", v["counts"].Reason)
	}
	if !strings.Contains(v["skus"].Reason, "qty is int(10) unsigned") {
		t.Errorf("skus: %q", v["skus"].Reason)
	}
}
