package database_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// suiteSQL is a suite's tables in both dialects: on MySQL only mysql/*.sql is applied.
var suiteSQL = fstest.MapFS{
	"rows.sql":       {Data: []byte("CREATE TABLE IF NOT EXISTS pg_only (n bigint);")},
	"mysql/rows.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS my_rows (id BIGINT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20) DEFAULT 'a;b');\n-- a comment; with a semicolon\nCREATE TABLE IF NOT EXISTS my_more (n BIGINT);\n")},
}

// The run's database is its own: created with the suite's MySQL tables (not its PostgreSQL
// ones), emptied by Reset (AUTO_INCREMENT restarted), described by Info, and dropped by Close.
func TestMySQLTargetKeepsToItsOwnDatabase(t *testing.T) {
	ctx := context.Background()
	target := mariadbtest.Target(t, suiteSQL)
	if !target.Created() || target.Dialect() != sqldb.MySQL || target.Kind() != database.KindMariaDB {
		t.Fatalf("created %v, dialect %s, kind %s", target.Created(), target.Dialect(), target.Kind())
	}
	admin := target.Admin()
	tables := map[string]bool{}
	rows, err := admin.Query(ctx, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = $1", target.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var name string
	if err := sqldb.ForEachRow(rows, []any{&name}, func() error { tables[name] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if !tables["my_rows"] || !tables["my_more"] || tables["pg_only"] {
		t.Fatalf("tables of the run's database: %v, want my_rows and my_more, not pg_only", tables)
	}
	if _, err := admin.Exec(ctx, "INSERT INTO my_rows (note) VALUES ('x'), ('y')"); err != nil {
		t.Fatal(err)
	}
	if err := target.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "INSERT INTO my_rows (note) VALUES ('z')"); err != nil {
		t.Fatal(err)
	}
	var id, n int64
	if err := admin.QueryRow(ctx, "SELECT MAX(id), COUNT(*) FROM my_rows").Scan(&id, &n); err != nil || id != 1 || n != 1 {
		t.Errorf("after Reset and one insert: id %d, %d rows (%v); want 1 and 1", id, n, err)
	}
	info, err := target.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"innodb_flush_log_at_trx_commit", "innodb_deadlock_detect", "innodb_lock_wait_timeout", "transaction_isolation", "max_connections", "log_bin"} {
		if info.Settings[s] == "" {
			t.Errorf("Info has no %s: %v", s, info.Settings)
		}
	}
	if info.Kind != database.KindMariaDB || !strings.Contains(info.Version, "MariaDB") {
		t.Errorf("Info: kind %q, version %q", info.Kind, info.Version)
	}
	if err := target.Close(); err != nil {
		t.Fatal(err)
	}
	db := mariadbtest.New(t)
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", target.Schema()).Scan(&n); err != nil || n != 0 {
		t.Errorf("the run's database %s is still there after Close (%d, %v)", target.Schema(), n, err)
	}
}

// A database that exists already is refused, unless joined on purpose.
func TestMySQLTargetRefusesAnExistingDatabase(t *testing.T) {
	first := mariadbtest.Target(t)
	ctx := context.Background()
	_, err := database.OpenMySQL(ctx, database.Options{URL: mariadbtest.URL(t), Schema: first.Schema()})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("opening %s again: %v, want it refused", first.Schema(), err)
	}
	joined, err := database.OpenMySQL(ctx, database.Options{URL: mariadbtest.URL(t), Schema: first.Schema(), ReuseSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	if joined.Created() {
		t.Error("a joined database says it was created by this process")
	}
	if err := joined.Close(); err != nil { // not created: not dropped
		t.Fatal(err)
	}
	var n int
	if err := first.Admin().QueryRow(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = $1", first.Schema()).Scan(&n); err != nil || n != 1 {
		t.Errorf("the joiner's Close dropped the database (%d, %v)", n, err)
	}
}

// A pool's sessions hold distinct seats, known from a transaction too; the target knows their
// ids, ends one session of a transaction (its statement then fails as a lost connection) and
// then the rest by name, and a replacement takes the seat freed.
func TestMySQLPoolSessionsSeatsAndKills(t *testing.T) {
	ctx := context.Background()
	target := mariadbtest.Target(t)
	opened := 0
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 3, AppName: "hotspotkit-load", Connected: func() { opened++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	target.TakeSessions()
	conns := make([]sqldb.PoolConn, 3)
	seats := make([]int, 3)
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		seats[i] = database.Seat(conns[i])
	}
	if sorted := slices.Sorted(slices.Values(seats)); !slices.Equal(sorted, []int{0, 1, 2}) || opened != 3 {
		t.Fatalf("seats of 3 sessions: %v (%d opened), want 0..2 once each", seats, opened)
	}
	if ids := target.ServiceSessions(); len(ids) != 3 || len(target.TakeSessions()) != 3 {
		t.Fatalf("the service's sessions: %v", ids)
	}
	tx, err := conns[1].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := database.Seat(tx); got != seats[1] {
		t.Errorf("the transaction's seat %d, its connection's %d", got, seats[1])
	}
	which, err := target.TerminateSessionOf(ctx, tx)
	if err != nil || !strings.HasPrefix(which, "session ") {
		t.Fatalf("TerminateSessionOf: %q, %v", which, err)
	}
	_, err = tx.Exec(ctx, "SELECT 1")
	if class := sqldb.Classify(err); class != sqldb.ClassConnClosed && class != sqldb.ClassMariaDBConnectionKilled {
		t.Errorf("a statement on the killed session: %v (class %s), want the connection lost", err, class)
	}
	_ = tx.Rollback(ctx)
	conns[1].Release()
	n, err := target.Terminate(ctx, "hotspotkit-load", "hotspotkit-flush")
	if err != nil || n != 2 {
		t.Fatalf("Terminate: %d sessions (%v), want the 2 left", n, err)
	}
	for _, i := range []int{0, 2} {
		conns[i].Release()
	}
	// The pool notices the killed sessions when it hands them out again: a new one takes the
	// lowest seat.
	var c sqldb.PoolConn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err == nil {
			break
		}
		c.Release()
		if time.Now().After(deadline) {
			t.Fatal("no live session from the pool after the kills")
		}
	}
	defer c.Release()
	if got := database.Seat(c); got != 0 {
		t.Errorf("a replacement session took seat %d, want 0", got)
	}
	if ids := target.ServiceSessions(); len(ids) != 1 {
		t.Errorf("the service's sessions after the kills: %v, want the one replacement", ids)
	}
}

// A pool's session past its lifetime is closed when it is given back, and another opened.
func TestMySQLPoolLifetime(t *testing.T) {
	ctx := context.Background()
	target := mariadbtest.Target(t)
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 1, AppName: "hotspotkit-load", MaxConnLifetime: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	target.TakeSessions()
	for range 3 {
		if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
	}
	if n := len(target.TakeSessions()); n != 3 {
		t.Errorf("%d sessions opened over three lifetimes, want 3", n)
	}
}

// URLs of both forms are read, and their passwords never printed.
func TestMySQLURLs(t *testing.T) {
	cfg, err := database.ParseMySQLURL("mysql://app:s3cr%40t@db.example:3307/shop?timeout=2s&tls=false")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "app" || cfg.Passwd != "s3cr@t" || cfg.Addr != "db.example:3307" || cfg.Net != "tcp" || cfg.Timeout != 2*time.Second || cfg.DBName != "shop" {
		t.Errorf("parsed %+v", cfg)
	}
	if cfg, err := database.ParseMySQLURL("mysql://app:pw@/?socket=/run/mysqld/mysqld.sock"); err != nil || cfg.Net != "unix" || cfg.Addr != "/run/mysqld/mysqld.sock" {
		t.Errorf("a socket: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"postgres://u:pw@h/db", "mysql://u:pw@h/?timeout=soon"} {
		if _, err := database.ParseMySQLURL(bad); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: %v, want an error without the password", bad, err)
		}
	}
	for in, want := range map[string]string{
		"mysql://app:s3cret@db:3306/x":              "mysql://app:REDACTED@db:3306/x",
		"error: app:s3cret@tcp(127.0.0.1:3306)/x?a": "error: app:REDACTED@tcp(127.0.0.1:3306)/x?a",
		"postgres://u:s3cret@h/db sslmode=disable":  "postgres://u:REDACTED@h/db sslmode=disable",
		"host=h password=s3cret":                    "host=h password=REDACTED",
	} {
		if got := database.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := database.RedactURL("mysql://app:s3cret@db/"); strings.Contains(got, "s3cret") {
		t.Errorf("RedactURL: %q", got)
	}
}

// A server that cannot be reached fails Open, its password not in the error.
func TestMySQLUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := database.OpenMySQL(ctx, database.Options{URL: "mysql://root:s3cret@127.0.0.1:1/", ConnectTimeout: 2 * time.Second})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !errors.Is(err, err) {
		t.Fatalf("Open of a closed port: %v", err)
	}
	// A server that takes the connection and never greets: the driver's error is "invalid
	// connection"; the error says what happened.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	_, err = database.OpenMySQL(ctx, database.Options{URL: "mysql://root:s3cret@" + silent.Addr().String() + "/", ConnectTimeout: 500 * time.Millisecond})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "no answer within 500ms") {
		t.Fatalf("Open of a server that never answers: %v", err)
	}
}

// A pool's sessions take its settings as session variables (the *-timeout faults' on MySQL, the
// isolation level by MySQL's name even on a MariaDB that knows it as tx_isolation alone), and
// each one's first statement is told, with that statement's context.
func TestMySQLPoolSettingsAndFirstUse(t *testing.T) {
	ctx := context.Background()
	target := mariadbtest.Target(t)
	type key struct{}
	var firstUses []any
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-load",
		Settings: map[string]string{"innodb_lock_wait_timeout": "3", "max_statement_time": "0.25",
			"transaction_isolation": "'READ-COMMITTED'"},
		FirstUse: func(ctx context.Context) { firstUses = append(firstUses, ctx.Value(key{})) }})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var wait int
	var stmt float64
	var isolation string
	if err := pool.QueryRow(context.WithValue(ctx, key{}, "first"), "SELECT @@session.innodb_lock_wait_timeout, @@session.max_statement_time, @@session.tx_isolation").Scan(&wait, &stmt, &isolation); err != nil {
		t.Fatal(err)
	}
	if wait != 3 || stmt != 0.25 || isolation != "READ-COMMITTED" {
		t.Errorf("the session's lock wait timeout %d, statement time %v and isolation %s, want 3, 0.25 and READ-COMMITTED", wait, stmt, isolation)
	}
	if _, err := pool.Exec(context.WithValue(ctx, key{}, "second"), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if len(firstUses) != 1 || firstUses[0] != "first" {
		t.Errorf("first uses told: %v, want the one session's first statement's", firstUses)
	}
}
