package innodb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
)

// figures reads the figures of d on a connection of the test's own, around do.
func figures(t *testing.T, d *mariadbtest.DB, in dbstats.Inputs, do func()) (*results.Database, map[string]dbstats.Timed) {
	t.Helper()
	ctx := context.Background()
	admin := d.Conn(t, "")
	srv, err := Probe(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(ctx, admin, srv, d.Name, d.Server.CPUTime)
	if err != nil {
		t.Fatal(err)
	}
	start, err := r.Take(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	do()
	end, err := r.Take(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	return r.Delta(start, end, in), ServerTimes(start, end)
}

// Per-write bounds of the redo an autocommit write of one small row logs: its undo record,
// the page's change and the commit's (about 270 B for an UPDATE of one INT on MariaDB 10.11).
const (
	minRedoPerWrite = 100
	maxRedoPerWrite = 1000
)

// A known batch of autocommit writes — 200 UPDATEs, 20 INSERTs, 5 DELETEs — shows in the
// figures: every row written counted exactly on its table, one read-write commit each (the
// counter turned on by the reader), the redo within its bounds per write, an fsync per
// commit on a disk, the UPDATE's digest with its 200 calls and its server time under the
// statement's own text, the server's processor time, and none of the reader's statements.
func TestFiguresOfAKnownBatch(t *testing.T) {
	d := mariadbtest.New(t)
	d.MustExec(t, "CREATE TABLE hot (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0) ENGINE=InnoDB",
		"CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20)) ENGINE=InnoDB",
		"INSERT INTO hot (id) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)",
		"SET GLOBAL innodb_monitor_disable = 'trx_rw_commits'") // the reader turns it on
	const updates, inserts, deletes = 200, 20, 5
	writes := int64(updates + inserts + deletes)
	c := d.Conn(t, "")
	ctx := context.Background()
	db, times := figures(t, d, dbstats.Inputs{Requests: updates, HotTables: []string{"hot", "cold"}}, func() {
		for i := range updates {
			if _, err := c.ExecContext(ctx, "UPDATE hot SET k = k + ? WHERE id = ?", 1, i%10+1); err != nil {
				t.Fatal(err)
			}
		}
		for range inserts {
			if _, err := c.ExecContext(ctx, "INSERT INTO log (note) VALUES ('x')"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range deletes {
			if _, err := c.ExecContext(ctx, "DELETE FROM log WHERE id = ?", i+1); err != nil {
				t.Fatal(err)
			}
		}
	})
	if h, l := db.Tables["hot"], db.Tables["log"]; h.Updated != updates || h.Inserted != 0 || l.Inserted != inserts || l.Deleted != deletes {
		t.Errorf("rows written: hot %+v, log %+v; want %d updated, %d inserted and %d deleted", h, l, updates, inserts, deletes)
	}
	if _, ok := db.Tables["cold"]; !ok {
		t.Error("a hot table nothing wrote is missing from the tables")
	}
	if got := db.PerRequest.RowVersions; got != float64(writes)/updates {
		t.Errorf("rows written per request %v, want %v", got, float64(writes)/updates)
	}
	// One commit per write; the server's own transactions (its persistent statistics) may add
	// a few.
	if db.XactCommit < writes || db.XactCommit > writes+10 || db.CommitSource != CommitSource {
		t.Errorf("commits %d (%s), want %d and at most a few more", db.XactCommit, db.CommitSource, writes)
	}
	if db.RedoSource != RedoLSNCurrent || db.RedoBytes < writes*minRedoPerWrite || db.RedoBytes > writes*maxRedoPerWrite {
		t.Errorf("redo %d B from %s for %d writes, want %d–%d B per write from %s", db.RedoBytes, db.RedoSource, writes,
			minRedoPerWrite, maxRedoPerWrite, RedoLSNCurrent)
	}
	if db.PerRequest.RedoBytes != math.Round(float64(db.RedoBytes)/updates*10)/10 || db.PerRequest.WALBytes != 0 || db.WALSource != "" {
		t.Errorf("per request: redo %v B, WAL %v B (%q); want redo %v and no WAL", db.PerRequest.RedoBytes, db.PerRequest.WALBytes,
			db.WALSource, float64(db.RedoBytes)/updates)
	}
	if strings.HasPrefix(d.Server.Dir(), "/dev/shm/") {
		t.Logf("fsyncs not checked: the server's redo log is on /dev/shm, which MariaDB maps and never syncs (%d fsyncs)", db.InnoDB.DataFsyncs)
	} else if db.InnoDB.DataFsyncs < writes {
		t.Errorf("%d fsyncs for %d commits one after another on a disk, want one each at least", db.InnoDB.DataFsyncs, writes)
	}
	if db.InnoDB.Deadlocks != 0 || db.InnoDB.LockWaitTimeouts != 0 || db.InnoDB.RowLockWaits != 0 || db.InnoDB.Restarted {
		t.Errorf("InnoDB's counters %+v: want no waits, deadlock, timeout or restart", *db.InnoDB)
	}
	if db.ServerCPUSeconds <= 0 || db.PerRequest.ServerCPUMicros <= 0 {
		t.Errorf("server CPU %v s (%v µs/request), want some", db.ServerCPUSeconds, db.PerRequest.ServerCPUMicros)
	}
	if len(db.NotRead) != 0 {
		t.Errorf("figures not read: %v", db.NotRead)
	}
	st := db.Statements
	if st == nil || st.Calls != writes || len(st.Top) == 0 || !strings.HasPrefix(st.Top[0].Query, "UPDATE `hot`") || st.Top[0].Calls != updates {
		t.Fatalf("statements %+v, want %d calls, the UPDATE's %d first", st, writes, updates)
	}
	t.Logf("%d writes: redo %d B, %d commits, %d fsyncs, server CPU %.3f s, statements %d", writes, db.RedoBytes, db.XactCommit,
		db.InnoDB.DataFsyncs, db.ServerCPUSeconds, db.Statements.Calls)
	for _, s := range st.Top {
		if observing.MatchString(s.Query) || dbstats.IsControl(s.Query) {
			t.Errorf("an observer's statement or a command counted as the run's: %q", s.Query)
		}
	}
	// The statement as the kit writes it finds its digest's server time.
	if got := times[DigestKey("UPDATE hot SET k = k + $1 WHERE id = $2")]; got.Calls != updates || got.TotalMs <= 0 {
		t.Errorf("server time of the UPDATE by its text: %+v, want %d calls (keys: %v)", got, updates, keysOf(times))
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// twoRows makes hot with rows 1 and 2.
func twoRows(t *testing.T, d *mariadbtest.DB) {
	t.Helper()
	d.MustExec(t, "CREATE TABLE hot (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0) ENGINE=InnoDB", "INSERT INTO hot (id) VALUES (1), (2)")
}

// deadlock makes two transactions lock rows 1 and 2 in opposite orders and returns their
// errors: with detection on, one is rolled back at once (1213); with it off, both wait until
// innodb_lock_wait_timeout (1205 for the first to time out; the other then goes on).
func deadlock(t *testing.T, d *mariadbtest.DB, timeout int) (errA, errB error) {
	t.Helper()
	ctx := context.Background()
	a, b := d.Conn(t, ""), d.Conn(t, "")
	for _, c := range []*sql.Conn{a, b} {
		if _, err := c.ExecContext(ctx, fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", timeout)); err != nil {
			t.Fatal(err)
		}
	}
	must := func(c *sql.Conn, q string) {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(a, "BEGIN")
	must(b, "BEGIN")
	must(a, "UPDATE hot SET k = k + 1 WHERE id = 1")
	must(b, "UPDATE hot SET k = k + 1 WHERE id = 2")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errA = a.ExecContext(ctx, "UPDATE hot SET k = k + 1 WHERE id = 2")
	}()
	time.Sleep(200 * time.Millisecond) // a waits for b's row
	_, errB = b.ExecContext(ctx, "UPDATE hot SET k = k + 1 WHERE id = 1")
	if errB == nil {
		_, _ = b.ExecContext(ctx, "COMMIT")
	}
	wg.Wait()
	for _, c := range []*sql.Conn{a, b} {
		_, _ = c.ExecContext(ctx, "ROLLBACK")
	}
	return errA, errB
}

// mysqlError is err's server error number (0 for none).
func mysqlError(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// A deadlock provoked for real is counted, and so is the lock wait it began with; with
// deadlock detection off the same two transactions wait until innodb_lock_wait_timeout, and
// the timeout is counted instead.
func TestDeadlocksAndLockWaitTimeouts(t *testing.T) {
	d := mariadbtest.New(t)
	twoRows(t, d)
	var errA, errB error
	db, _ := figures(t, d, dbstats.Inputs{Requests: 2}, func() { errA, errB = deadlock(t, d, 50) })
	if !(mysqlError(errA) == 1213 && errB == nil) && !(errA == nil && mysqlError(errB) == 1213) {
		t.Fatalf("errors %v and %v, want one deadlock (1213) and the other transaction going on", errA, errB)
	}
	if i := db.InnoDB; i.Deadlocks != 1 || i.LockWaitTimeouts != 0 || i.RowLockWaits < 1 {
		t.Errorf("after a deadlock: %+v, want 1 deadlock, no timeout, a row lock wait", *i)
	}
	if db.XactRollback < 1 {
		t.Errorf("rollbacks %d, want the deadlock's victim's at least", db.XactRollback)
	}

	t.Run("detection off", func(t *testing.T) {
		if _, err := d.DB.Exec("SET GLOBAL innodb_deadlock_detect = OFF"); err != nil {
			t.Fatal(err)
		}
		defer d.DB.Exec("SET GLOBAL innodb_deadlock_detect = ON")
		db, _ := figures(t, d, dbstats.Inputs{Requests: 2}, func() { errA, errB = deadlock(t, d, 1) })
		if mysqlError(errA) != 1205 && mysqlError(errB) != 1205 {
			t.Fatalf("errors %v and %v, want a lock wait timeout (1205)", errA, errB)
		}
		if i := db.InnoDB; i.Deadlocks != 0 || i.LockWaitTimeouts < 1 || i.RowLockTimeMs < 900 {
			t.Errorf("deadlocked with detection off: %+v, want no deadlock, a timeout, a second's wait at least", *i)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		ctx := context.Background()
		holder, waiter := d.Conn(t, ""), d.Conn(t, "")
		db, _ := figures(t, d, dbstats.Inputs{Requests: 1}, func() {
			for _, q := range []string{"BEGIN", "UPDATE hot SET k = k + 1 WHERE id = 1"} {
				if _, err := holder.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := waiter.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
				t.Fatal(err)
			}
			_, err := waiter.ExecContext(ctx, "UPDATE hot SET k = k + 1 WHERE id = 1")
			if mysqlError(err) != 1205 {
				t.Errorf("the waiter's error %v, want a lock wait timeout (1205)", err)
			}
			_, _ = holder.ExecContext(ctx, "ROLLBACK")
		})
		if i := db.InnoDB; i.LockWaitTimeouts != 1 || i.Deadlocks != 0 || i.RowLockWaits != 1 || i.RowLockTimeMs < 900 {
			t.Errorf("after a lock wait timeout: %+v, want 1 timeout, 1 wait of a second", *i)
		}
	})
}

// A restart in the window: the counters count from it, and those the reader turned on are not
// read; the LSN, which survives, still counts the whole window.
func TestDeltaAcrossARestart(t *testing.T) {
	r := &Reader{redo: RedoLSNCurrent, metrics: []string{"trx_rw_commits", "lock_deadlocks"}, enabled: []string{"trx_rw_commits"},
		status: map[string]bool{}, notRead: map[string]string{}}
	t0 := time.Now()
	start := Snapshot{At: t0, Uptime: 1000, LSN: 5000, status: map[string]int64{"Innodb_row_lock_waits": 40},
		metrics: map[string]int64{"trx_rw_commits": 900, "lock_deadlocks": 7}, tables: map[string]tableRows{"hot": {updated: 500}}}
	end := Snapshot{At: t0.Add(60 * time.Second), Uptime: 20, LSN: 9000, status: map[string]int64{"Innodb_row_lock_waits": 3},
		metrics: map[string]int64{"trx_rw_commits": 0, "lock_deadlocks": 2}, tables: map[string]tableRows{"hot": {updated: 80}}}
	d := r.Delta(start, end, dbstats.Inputs{Requests: 10})
	if !d.InnoDB.Restarted || d.InnoDB.RowLockWaits != 3 || d.InnoDB.Deadlocks != 2 || d.Tables["hot"].Updated != 80 {
		t.Errorf("across a restart: %+v, tables %v; want the counts since it", *d.InnoDB, d.Tables)
	}
	if d.RedoBytes != 4000 {
		t.Errorf("redo %d, want the LSN's 4000", d.RedoBytes)
	}
	if _, ok := d.NotRead["xact_commit"]; !ok || d.XactCommit != 0 {
		t.Errorf("commits %d, not read %v: the counter the reader turned on was off after the restart", d.XactCommit, d.NotRead)
	}
	// Without a restart: differences.
	end.Uptime = 1060
	end.status["Innodb_row_lock_waits"], end.metrics["trx_rw_commits"], end.metrics["lock_deadlocks"] = 45, 950, 9
	end.tables["hot"] = tableRows{updated: 600}
	d = r.Delta(start, end, dbstats.Inputs{Requests: 10})
	if d.InnoDB.Restarted || d.InnoDB.RowLockWaits != 5 || d.InnoDB.Deadlocks != 2 || d.XactCommit != 50 || d.Tables["hot"].Updated != 100 || d.NotRead != nil {
		t.Errorf("no restart: %+v, commits %d, tables %v, not read %v", *d.InnoDB, d.XactCommit, d.Tables, d.NotRead)
	}
}

func TestDigestKey(t *testing.T) {
	for client, digest := range map[string]string{
		"UPDATE hot SET k = k + $1 WHERE id = $2":                                                 "UPDATE `hot` SET `k` = `k` + ? WHERE ID = ? ",
		"update hot set k=k+5 where id in (1,2,3)":                                                "UPDATE `hot` SET `k` = `k` + ? WHERE ID IN (...) ",
		"INSERT INTO hot (id, k) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE k = k + VALUES(k)": "INSERT INTO `hot` ( ID , `k` ) VALUES (...) /* , ... */ ON DUPLICATE KEY UPDATE `k` = `k` + VALUES ( `k` ) ",
		"SELECT k FROM hot WHERE id = 'x' AND k > -1":                                             "SELECT `k` FROM `hot` WHERE ID = ? AND `k` > - ? ",
		"select sum(k) as s from hot where id between 1 and 3":                                    "SELECT SUM ( `k` ) AS `s` FROM `hot` WHERE ID BETWEEN ? AND ? ",
		"UPDATE hot SET k = k - 1 WHERE id = 2 AND k >= 0 -- note":                                "UPDATE `hot` SET `k` = `k` - ? WHERE ID = ? AND `k` >= ? ",
		"SELECT * FROM hot /* x */ LIMIT 1":                                                       "SELECT * FROM `hot` LIMIT ? ",
		"SELECT 'it''s', \"a\\\"b\" FROM `we``ird`":                                               "SELECT ?, ? FROM `we``ird`",
	} {
		if a, b := DigestKey(client), DigestKey(digest); a != b {
			t.Errorf("%q → %q\n%q → %q", client, a, digest, b)
		}
	}
}
