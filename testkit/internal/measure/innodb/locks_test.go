package innodb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Main(m)) }

// hotTables makes the two tables the lock tests queue on: hot and other, one row each (id 1).
func hotTables(t *testing.T, d *mariadbtest.DB) {
	t.Helper()
	d.MustExec(t,
		"CREATE TABLE hot (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0) ENGINE=InnoDB",
		"CREATE TABLE other (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0) ENGINE=InnoDB",
		"INSERT INTO hot (id) VALUES (1), (2)",
		"INSERT INTO other (id) VALUES (1)")
}

// queue is a transaction holding rows and the sessions queued behind it.
type queue struct {
	holder   *sql.Conn
	holderID int64
	wg       sync.WaitGroup
	waiters  []int64 // their session ids
	mu       sync.Mutex
	errs     []error
}

// hold begins a transaction on a session of its own that updates each statement's row and
// stays open, waiting for its client.
func hold(t *testing.T, d *mariadbtest.DB, statements ...string) *queue {
	t.Helper()
	q := &queue{holder: d.Conn(t, "")}
	ctx := context.Background()
	if err := q.holder.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&q.holderID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.holder.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	for _, s := range statements {
		if _, err := q.holder.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

// wait starts n sessions (named program) that each run statement, which the holder blocks.
func (q *queue) wait(t *testing.T, d *mariadbtest.DB, program string, n int, statement string) {
	t.Helper()
	for range n {
		c := d.Conn(t, program)
		var id int64
		if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		q.waiters = append(q.waiters, id)
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			if _, err := c.ExecContext(context.Background(), statement); err != nil {
				q.mu.Lock()
				q.errs = append(q.errs, err)
				q.mu.Unlock()
			}
		}()
	}
}

// release commits the holder and waits for the waiters; it fails the test on a waiter's error.
func (q *queue) release(t *testing.T) {
	t.Helper()
	if _, err := q.holder.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	q.wg.Wait()
	if err := errors.Join(q.errs...); err != nil {
		t.Errorf("a waiter failed: %v", err)
	}
}

// watch starts a monitor on InnoDB's lock view of d, with svc (its Database set to d's).
func watch(t *testing.T, d *mariadbtest.DB, svc Service, cfg monitor.Config) *monitor.Monitor {
	t.Helper()
	ctx := context.Background()
	srv, err := Probe(ctx, d.DB)
	if err != nil {
		t.Fatal(err)
	}
	svc.Database = d.Name
	v, err := NewLockView(ctx, d.Connector(t), srv, svc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interval == 0 {
		cfg.Interval = 20 * time.Millisecond
	}
	return monitor.StartView(ctx, v, cfg)
}

// until polls the monitor's latest sample until cond holds; after 20 s it stops the monitor and
// fails the test.
func until(t *testing.T, m *monitor.Monitor, what string, cond func(results.Sample) bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		s := m.Last()
		if s.SampleError == "" && cond(s) {
			return
		}
		if time.Now().After(deadline) {
			m.Stop(context.Background())
			t.Fatalf("after 20s, still waiting for %s (last sample %+v)", what, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Sessions queued on rows of two tables that one transaction holds: each is attributed to its
// table and its row, the longest wait is timed, and the holder is named as the blocking
// transaction, idle in its transaction.
func TestWaitersByTableRowAndBlocker(t *testing.T) {
	d := mariadbtest.New(t)
	hotTables(t, d)
	q := hold(t, d, "UPDATE hot SET k = k + 1 WHERE id = 1", "UPDATE other SET k = k + 1 WHERE id = 1")
	q.wait(t, d, "", 4, "UPDATE hot SET k = k + 1 WHERE id = 1")
	q.wait(t, d, "", 2, "UPDATE other SET k = k + 1 WHERE id = 1")
	samplesPath := filepath.Join(t.TempDir(), "s.ndjson")
	sw, err := monitor.CreateSamples(samplesPath, "s")
	if err != nil {
		t.Fatal(err)
	}
	m := watch(t, d, Service{}, monitor.Config{HotTables: []string{"hot", "other", "cold"}, Samples: sw,
		Pool: monitor.SQLPool(d.DB), TotalSQL: "SELECT SUM(k) FROM hot"})
	until(t, m, "every waiter queued, for half a second", func(s results.Sample) bool {
		return s.WaitersByRelation["hot"] == 4 && s.WaitersByRelation["other"] == 2 && s.OldestLockWaitMs >= 500
	})
	q.release(t)
	// Every sample reads a fresh snapshot: the queue gone, none is seen.
	until(t, m, "the queue gone", func(s results.Sample) bool { return s.LockWaiters == 0 && s.Blocker == nil })
	locks, _ := m.Stop(context.Background())
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if locks.IntervalMs != minInterval.Milliseconds() {
		t.Errorf("sampled every %d ms, want InnoDB's shortest, %d ms", locks.IntervalMs, minInterval.Milliseconds())
	}

	if got := locks.MaxWaitersByRelation; got["hot"] != 4 || got["other"] != 2 || got["cold"] != 0 || got[monitor.Unattributed] != 0 {
		t.Errorf("max waiters by table %v, want hot 4, other 2, cold 0 and none unattributed", got)
	}
	if got := locks.MaxWaitersPerRowByRelation; got["hot"] != 4 || got["other"] != 2 {
		t.Errorf("max waiters per row %v, want hot 4, other 2", got)
	}
	if got := locks.MaxWaitersByLockType; len(got) != 1 || got["record X"] != 6 {
		t.Errorf("lock types %v, want 6 waiting for record X locks", got)
	}
	if locks.MaxLockWaitMs < 500 || locks.MaxLockWaitMsByRelation["hot"] < 500 || locks.MaxLockWaitMsByRelation["other"] < 500 {
		t.Errorf("longest wait %v ms, by table %v: want at least 500 ms on both", locks.MaxLockWaitMs, locks.MaxLockWaitMsByRelation)
	}
	if locks.MaxBlockedSessions != 6 || locks.MaxBlockers != 1 {
		t.Errorf("blocked %d by %d, want 6 by 1 (the holder, not the waiters ahead in the queue)", locks.MaxBlockedSessions, locks.MaxBlockers)
	}
	b := locks.Blocker
	if b == nil || b.Session != q.holderID || b.Waiters != 6 || b.State != "RUNNING" || b.Query != "" || b.Transaction == "" {
		t.Fatalf("blocker %+v, want session %d (idle in its transaction) blocking 6", b, q.holderID)
	}
	if b.Table != "hot" && b.Table != "other" {
		t.Errorf("blocker's first waiter queued on %q", b.Table)
	}
	if locks.MaxServerLockWaits < 6 {
		t.Errorf("server's row lock waits at most %d, want at least the 6 waiters", locks.MaxServerLockWaits)
	}
	if r := locks.TotalReadMs; r == nil || r.Count == 0 {
		t.Errorf("the total's read was not timed: %+v", r)
	}
	// The holder is idle in its transaction; the waiters wait for record locks.
	waits := m.WaitEvents()
	if waits["Lock:record"] == 0 || waits["Client:Sleep"] == 0 {
		t.Errorf("sessions' states %v: want Lock:record and Client:Sleep", waits)
	}
	samples, err := results.ReadSamples(samplesPath)
	if err != nil || len(samples) == 0 {
		t.Fatalf("samples file: %d samples, %v", len(samples), err)
	}
	var last results.Sample // the last sample of the whole queue
	for _, s := range samples {
		if s.LockWaiters == 6 {
			last = s
		}
	}
	if last.Blocker == nil || last.ServerLockWaits == nil || last.ServerSessions < 7 {
		t.Errorf("a sample of the queue: blocker %+v, server lock waits %v, %d sessions (want the holder, the 6 waiters and more)",
			last.Blocker, last.ServerLockWaits, last.ServerSessions)
	}
	if last.Blocker != nil && last.Blocker.Row != "hot (1)" && last.Blocker.Row != "other (1)" {
		t.Errorf("the blocker's row %q, want hot (1) or other (1)", last.Blocker.Row)
	}
}

// A long queue on one row, as a flash sale makes: every waiter is read and the one holder
// named as blocking all of them. InnoDB's lock tables list a waiter's wait for every lock ahead
// of it (n²/2 rows: 19,900 here), which the view does not join: a sample reads in a fraction of
// what it took over them (docs/mysql.md).
func TestLongQueueOnOneRow(t *testing.T) {
	const n = 200
	d := mariadbtest.New(t)
	d.MustExec(t, "SET GLOBAL max_connections = 1000")
	hotTables(t, d)
	q := hold(t, d, "UPDATE hot SET k = k + 1 WHERE id = 1")
	q.wait(t, d, "", n, "UPDATE hot SET k = k + 1 WHERE id = 1")
	m := watch(t, d, Service{}, monitor.Config{HotTables: []string{"hot"}})
	until(t, m, "every waiter queued", func(s results.Sample) bool { return s.WaitersByRelation["hot"] == n })
	q.release(t)
	locks, _ := m.Stop(context.Background())
	if locks.MaxBlockedSessions != n || locks.MaxBlockers != 1 {
		t.Errorf("blocked %d by %d, want %d by 1 (the holder)", locks.MaxBlockedSessions, locks.MaxBlockers, n)
	}
	if b := locks.Blocker; b == nil || b.Session != q.holderID || b.Waiters != n || b.Row != "hot (1)" {
		t.Errorf("blocker %+v, want session %d blocking %d on hot (1)", b, q.holderID, n)
	}
	if locks.SampleErrors != 0 {
		t.Errorf("%d samples failed", locks.SampleErrors)
	}
}

// The service's sessions are told by their program (a connection attribute), and by id.
func TestServiceSessions(t *testing.T) {
	d := mariadbtest.New(t)
	hotTables(t, d)
	q := hold(t, d, "UPDATE hot SET k = k + 1 WHERE id = 1")
	q.wait(t, d, "hotspotkit-load", 2, "UPDATE hot SET k = k + 1 WHERE id = 1")
	q.wait(t, d, "someone-else", 3, "UPDATE hot SET k = k + 1 WHERE id = 1")
	// One monitor at a time: between them, they would keep InnoDB's snapshot from being
	// refilled (see LockView).
	first := q.waiters[0]
	observe := func(svc Service, what string, waiters int64) results.LockMonitor {
		m := watch(t, d, svc, monitor.Config{HotTables: []string{"hot"}})
		until(t, m, what, func(s results.Sample) bool { return s.LockWaiters == waiters })
		l, _ := m.Stop(context.Background())
		return l
	}
	a := observe(Service{Exclude: func() []int64 { return []int64{first} }}, "every waiter but one queued", 4)
	p := observe(Service{Program: "hotspotkit%"}, "the program's waiters", 2)
	i := observe(Service{Sessions: func() []int64 { return []int64{first, q.holderID} }}, "the one waiter named by id", 1)
	q.release(t)
	if p.MaxLockWaiters != 2 || i.MaxLockWaiters != 1 || a.MaxLockWaiters != 4 {
		t.Errorf("waiters by program %d (want 2), by id %d (want 1), all but one %d (want 4)", p.MaxLockWaiters, i.MaxLockWaiters, a.MaxLockWaiters)
	}
	// The holder is not the program's: its blocking transaction is still named.
	if p.Blocker == nil || p.Blocker.Session != q.holderID || p.Blocker.Waiters != 2 {
		t.Errorf("the program's blocker %+v, want the holder %d blocking 2", p.Blocker, q.holderID)
	}
}

func TestSplitTable(t *testing.T) {
	for in, want := range map[string][2]string{
		"`hot`.`api_keys`":              {"hot", "api_keys"},
		"`a``b`.`c.d`":                  {"a`b", "c.d"},
		"`db`.`t` /* Partition `p0` */": {"db", "t"},
		"plain":                         {"", "plain"},
		"`unterminated":                 {"", "`unterminated"},
	} {
		if s, n := splitTable(in); s != want[0] || n != want[1] {
			t.Errorf("splitTable(%q) = %q, %q; want %q, %q", in, s, n, want[0], want[1])
		}
	}
}

// A view cannot tell sessions by program where performance_schema is off; without a lock table
// it refuses to start.
func TestLockViewRefuses(t *testing.T) {
	if _, err := NewLockView(context.Background(), nil, &Server{Locks: InformationSchemaLocks}, Service{Database: "x", Program: "p%"}); err == nil {
		t.Error("a program's sessions without performance_schema: no error")
	}
	if _, err := NewLockView(context.Background(), nil, &Server{}, Service{Database: "x"}); err == nil {
		t.Error("no lock tables: no error")
	}
}

// MySQL 8's statement (performance_schema.data_locks and data_lock_waits) cannot run here:
// MariaDB has neither table. That it parses is checked: MariaDB, whose grammar is MySQL's for
// it, reports the missing table (1146), not a syntax error (1064).
func TestMySQL8StatementParses(t *testing.T) {
	d := mariadbtest.New(t)
	for _, timeMs := range []bool{false, true} {
		srv := &Server{Locks: PerformanceSchemaLocks, globalStatus: "performance_schema.global_status", StatementTimeMs: timeMs, connectAttrs: true}
		stmt, args := lockStatement(srv, Service{Database: d.Name, User: "root", Program: "hotspotkit%", ExcludePrograms: []string{"a", "b"}})
		stmt = strings.Replace(stmt, idsMark, idList([]int64{1, 2}, false)+idList([]int64{3}, true), 1)
		_, err := d.DB.Exec(stmt, args...)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1146 || !strings.Contains(me.Message, "data_lock") {
			t.Errorf("MySQL 8's lock statement: %v, want only its table missing (1146)\n%s", err, stmt)
		}
	}
}
