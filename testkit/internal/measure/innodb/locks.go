package innodb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// Service says which sessions of the server are the service's: the run's load and flushers,
// whose lock waits and states the monitor counts. A session is the service's when it is
// connected to Database and passes every other field that is set; the view's own session is
// never one.
//
// On a server the run did not start (by URL), Database alone works everywhere: the run keeps
// to a database of its own. Program needs performance_schema (off by default on MariaDB):
// the kit's connections name themselves in their program_name connection attribute, as
// application_name does on PostgreSQL.
type Service struct {
	// Database is the run's database (information_schema.PROCESSLIST.DB). Required.
	Database string
	// User keeps the sessions of this user only (optional).
	User string
	// Program keeps the sessions whose program_name connection attribute is LIKE it
	// ("hotspotkit%"; optional; needs performance_schema).
	Program string
	// ExcludePrograms leaves out the sessions of these programs (the engine's observers:
	// "hotspotkit-admin"; optional; needs performance_schema).
	ExcludePrograms []string
	// Sessions, when set, says at each sample which session ids (CONNECTION_ID()) the service
	// has; only those are kept.
	Sessions func() []int64
	// Exclude, when set, says at each sample which session ids to leave out (the engine's own
	// connections).
	Exclude func() []int64
}

// LockView is InnoDB's monitor.View: at each sample one statement reads the service's
// sessions (information_schema.PROCESSLIST), their transactions (INNODB_TRX), the lock each
// waiting one waits for and the transactions holding it (the lock tables the server has:
// Server.Locks), and Innodb_row_lock_current_waits.
//
// A waiter is attributed to the table of the lock it waits for (InnoDB names it: no inference
// as on PostgreSQL), and its row is the index record's key (lock_data: "hot (1)", or "hot
// (idx_k: 5)" for a secondary index); a table lock, or a record lock whose page was not in
// the buffer pool (lock_data NULL), has no row. Its lock type is InnoDB's type and mode
// ("record X", "record X,GAP", "table IX"; MySQL 8 writes "X,REC_NOT_GAP"). Its wait is the
// waiting statement's time so far on MariaDB (PROCESSLIST.TIME_MS: the statement began
// before its wait, so a little more than the wait), else the time since trx_wait_started, to
// the second.
//
// The blocking transaction: the transactions holding a granted lock that a waiter's lock
// conflicts with (the queue's head, not the waiters ahead of it that the lock tables list
// too). Blocked counts the waiters, Blockers the distinct holders, and the Blocker of a
// sample is the holder with the most waiters (whoever's session it is: another client's
// transaction holding the service's row is named too). Its age and state come from INNODB_TRX,
// to the second.
//
// InnoDB's snapshot: INNODB_TRX, INNODB_LOCKS and INNODB_LOCK_WAITS are read from one cache
// of the server's, which it refills only once nobody has read it for 100 ms (so that a
// statement joining them reads one snapshot; MySQL 8's INNODB_TRX too). A reader that comes
// back sooner is served the old snapshot and keeps it from being refilled: polled every 100
// ms it would see the same waiters for ever. So the view leaves at least readGap between the
// end of one read and the next (waiting when a sample comes sooner), more after a slow read
// (gap), and the monitor samples it every MinInterval at most. Every reader of the server shares the cache: two monitors on
// one server (the processes of a split run, or someone's own tool polling it) can keep each
// other on an old snapshot, which nothing in the tables tells.
//
// The sessions' states, as pg_stat_activity's wait events: a session waiting for a lock is
// "Lock:record" or "Lock:table"; one idle inside a transaction (COMMAND Sleep, a transaction
// open) "Client:Sleep", waiting for its client; one running a statement "Query:" and its
// state ("Query:Updating", "Query:Commit", ...), or "active" when the server names none.
// Idle sessions outside a transaction are counted in ServerSessions only.
type LockView struct {
	db   *sql.DB
	srv  *Server
	svc  Service
	stmt string
	args []any
	// statements counts what the view ran successfully.
	statements atomic.Int64
	// lastRead is when the view's latest read of the lock tables ended, lastTook how long it
	// took.
	lastRead time.Time
	lastTook time.Duration
}

// cacheIdle is how long InnoDB's snapshot of its transactions and locks must go unread
// before the server refills it (CACHE_MIN_IDLE_TIME); readGap leaves a margin over it, and
// minInterval the time of a read besides.
const (
	cacheIdle   = 100 * time.Millisecond
	readGap     = cacheIdle + 20*time.Millisecond
	minInterval = readGap + 30*time.Millisecond
)

// The observer's share of the server's lock latch. Filling InnoDB's snapshot walks every
// lock queue under the lock system's latch, and a queue of n waiters on one row has n²/2
// waits in it: at 1,000 sessions on one row a read took 0.7–1.5 s on a busy 2-core machine, during which no
// transaction of the run could take or release a row lock. So the view leaves, after a read
// that took t, at least gapFactor × t before the next (the observer holds the latch at most a
// fifth of the time), up to maxGap, short enough that the wait and the next read fit the
// monitor's deadline for a sample.
const (
	gapFactor = 4
	maxGap    = 3 * time.Second
)

// SampleTimeout bounds a sample of the view (monitor.Bounded): the gap it may wait and a read
// of the lock tables at a thousand waiters, which took up to 8 s on a busy 2-core machine.
func (v *LockView) SampleTimeout() time.Duration { return maxGap + 15*time.Second }

// gap is how long the view leaves between the end of a read and the next.
func (v *LockView) gap() time.Duration {
	return min(max(readGap, gapFactor*v.lastTook), maxGap)
}

// MinInterval is the shortest interval the view is sampled at (monitor.Paced).
func (v *LockView) MinInterval() time.Duration { return minInterval }

// NewLockView opens the view's own connection through connector (one connection, reopened
// when lost; performance_schema stops instrumenting it where it may: Untrack), on srv as
// Probe found it.
func NewLockView(ctx context.Context, connector driver.Connector, srv *Server, svc Service) (*LockView, error) {
	if srv.Locks == "" {
		return nil, errors.New("innodb: the server shows no lock waits: neither information_schema.INNODB_LOCK_WAITS nor performance_schema.data_lock_waits (performance_schema is off?)")
	}
	if svc.Database == "" {
		return nil, errors.New("innodb: the service's database is required")
	}
	if (svc.Program != "" || len(svc.ExcludePrograms) > 0) && !srv.connectAttrs {
		return nil, errors.New("innodb: the service's sessions cannot be told by program: performance_schema is off on the server (select them by database, user or id)")
	}
	db := sql.OpenDB(untracked{connector})
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	v := &LockView{db: db, srv: srv, svc: svc}
	v.stmt, v.args = lockStatement(srv, svc)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("innodb: the lock view's connection: %w", err)
	}
	return v, nil
}

// untracked is a connector whose connections performance_schema does not instrument
// (Untrack): the view's statements are no digest of the run's.
type untracked struct{ driver.Connector }

func (u untracked) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := u.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if ex, ok := c.(driver.ExecerContext); ok {
		_, _ = ex.ExecContext(ctx, "UPDATE performance_schema.threads SET INSTRUMENTED = 'NO' WHERE PROCESSLIST_ID = CONNECTION_ID()", nil)
	}
	return c, nil
}

// lockStatement is the one statement a sample runs, and its arguments.
func lockStatement(srv *Server, svc Service) (string, []any) {
	var where []string
	var args []any
	where = append(where, "p.DB = ?", "p.ID <> CONNECTION_ID()")
	args = append(args, svc.Database)
	if svc.User != "" {
		where = append(where, "p.USER = ?")
		args = append(args, svc.User)
	}
	if svc.Program != "" {
		where = append(where, "p.ID IN (SELECT PROCESSLIST_ID FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE LIKE ?)")
		args = append(args, svc.Program)
	}
	if n := len(svc.ExcludePrograms); n > 0 {
		where = append(where, "p.ID NOT IN (SELECT PROCESSLIST_ID FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE IN ("+sqldb.Marks(n)+"))")
		for _, p := range svc.ExcludePrograms {
			args = append(args, p)
		}
	}
	// The waiting lock, its table as "`db`.`table`", and the granted locks blocking it.
	var lock, blockers, waitMs string
	switch srv.Locks {
	case InformationSchemaLocks:
		lock = `LEFT JOIN information_schema.INNODB_LOCKS l ON l.lock_id = r.trx_requested_lock_id`
		// Not INNODB_LOCK_WAITS: it lists a waiter's wait for every lock ahead of it in the
		// queue, the waiting ones too, n²/2 rows for n sessions on one row (45,150 for 300),
		// and a join over it took seconds a sample at a few hundred waiters. INNODB_LOCKS lists
		// each waiting lock and each lock blocking one, one row each: a waiting lock's
		// blockers are the granted locks (no transaction's requested lock) on its record.
		blockers = `SELECT w.lock_id AS requested, b.trx_id, b.trx_mysql_thread_id, b.trx_state, b.trx_started, b.trx_query
		FROM information_schema.INNODB_LOCKS w
		JOIN (SELECT lock_id, lock_trx_id, lock_table, lock_type, lock_space, lock_page, lock_rec FROM information_schema.INNODB_LOCKS
			WHERE lock_id NOT IN (SELECT trx_requested_lock_id FROM information_schema.INNODB_TRX WHERE trx_requested_lock_id IS NOT NULL)) g
			ON g.lock_table = w.lock_table AND g.lock_type = w.lock_type
			AND g.lock_space <=> w.lock_space AND g.lock_page <=> w.lock_page AND g.lock_rec <=> w.lock_rec
			AND g.lock_trx_id <> w.lock_trx_id
		JOIN information_schema.INNODB_TRX b ON b.trx_id = g.lock_trx_id`
	case PerformanceSchemaLocks:
		// MySQL 8's documented join: INNODB_TRX.trx_requested_lock_id is data_locks.ENGINE_LOCK_ID.
		lock = `LEFT JOIN (SELECT ENGINE_LOCK_ID AS lock_id, LOCK_TYPE AS lock_type, LOCK_MODE AS lock_mode,
			CONCAT('` + "`" + `', REPLACE(OBJECT_SCHEMA, '` + "`" + `', '` + "``" + `'), '` + "`.`" + `', REPLACE(OBJECT_NAME, '` + "`" + `', '` + "``" + `'), '` + "`" + `') AS lock_table,
			INDEX_NAME AS lock_index, LOCK_DATA AS lock_data
			FROM performance_schema.data_locks WHERE LOCK_STATUS = 'WAITING') l ON l.lock_id = r.trx_requested_lock_id`
		blockers = `SELECT w.REQUESTING_ENGINE_LOCK_ID AS requested, b.trx_id, b.trx_mysql_thread_id, b.trx_state, b.trx_started, b.trx_query
		FROM performance_schema.data_lock_waits w
		JOIN performance_schema.data_locks g ON g.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID AND g.LOCK_STATUS = 'GRANTED'
		JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID`
	}
	waitMs = "TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000"
	if srv.StatementTimeMs {
		waitMs = "p.TIME_MS"
	}
	stmt := `SELECT (SELECT VARIABLE_VALUE FROM ` + srv.globalStatus + ` WHERE UPPER(VARIABLE_NAME) = 'INNODB_ROW_LOCK_CURRENT_WAITS') AS server_waits,
       s.id, s.command, s.state, s.trx_state, s.lock_type, s.lock_mode, s.lock_table, s.lock_index, s.lock_data, s.wait_ms,
       s.b_trx, s.b_session, s.b_state, s.b_age_ms, s.b_query
FROM (SELECT 1 AS one) one
LEFT JOIN (
    SELECT p.ID AS id, p.COMMAND AS command, COALESCE(p.STATE, '') AS state, r.trx_state AS trx_state,
           l.lock_type AS lock_type, l.lock_mode AS lock_mode, l.lock_table AS lock_table, l.lock_index AS lock_index,
           l.lock_data AS lock_data,
           CASE WHEN r.trx_state = 'LOCK WAIT' THEN ` + waitMs + ` END AS wait_ms,
           CAST(bl.trx_id AS CHAR) AS b_trx, bl.trx_mysql_thread_id AS b_session, bl.trx_state AS b_state,
           TIMESTAMPDIFF(MICROSECOND, bl.trx_started, NOW(6)) / 1000 AS b_age_ms, LEFT(bl.trx_query, 300) AS b_query
    FROM information_schema.PROCESSLIST p
    LEFT JOIN information_schema.INNODB_TRX r ON r.trx_mysql_thread_id = p.ID
    ` + lock + `
    LEFT JOIN (` + blockers + `) bl ON r.trx_state = 'LOCK WAIT' AND bl.requested = r.trx_requested_lock_id
    WHERE ` + strings.Join(where, " AND ") + idsMark + `
) s ON 1 = 1`
	return stmt, args
}

// idsMark is where a sample's statement takes the session ids of Service.Sessions and Exclude.
const idsMark = "/* ids */"

// idList is " AND p.ID IN (1, 2)" (not, " AND p.ID NOT IN (...)"); "" for no ids. An empty
// list of the service's own sessions keeps none: " AND FALSE".
func idList(ids []int64, not bool) string {
	if len(ids) == 0 {
		if not {
			return ""
		}
		return " AND 1 = 0"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	op := " IN ("
	if not {
		op = " NOT IN ("
	}
	return " AND p.ID" + op + strings.Join(parts, ", ") + ")"
}

// row is one row of the sample's statement: one session, with one of the transactions
// blocking it when it waits.
type row struct {
	serverWaits                              sql.NullInt64
	id                                       sql.NullInt64
	command, state, trxState                 sql.NullString
	lockType, lockMode, lockTable, lockIndex sql.NullString
	lockData                                 sql.NullString
	waitMs                                   sql.NullFloat64
	bTrx                                     sql.NullString
	bSession                                 sql.NullInt64
	bState                                   sql.NullString
	bAgeMs                                   sql.NullFloat64
	bQuery                                   sql.NullString
}

// Read takes one sample (slow is not needed: every part is read at every sample).
func (v *LockView) Read(ctx context.Context, _ bool) monitor.Reading {
	stmt := v.stmt
	extra := ""
	if v.svc.Sessions != nil {
		extra += idList(v.svc.Sessions(), false)
	}
	if v.svc.Exclude != nil {
		extra += idList(v.svc.Exclude(), true)
	}
	stmt = strings.Replace(stmt, idsMark, extra, 1)
	if wait := v.gap() - time.Since(v.lastRead); wait > 0 {
		select {
		case <-ctx.Done():
			return monitor.Reading{Err: ctx.Err()}
		case <-time.After(wait):
		}
	}
	start := time.Now()
	rows, err := v.db.QueryContext(ctx, stmt, v.args...)
	defer func() { v.lastRead = time.Now(); v.lastTook = v.lastRead.Sub(start) }()
	if err != nil {
		return monitor.Reading{Err: err}
	}
	var all []row
	err = scanEach(rows, func(r *sql.Rows) error {
		var x row
		if err := r.Scan(&x.serverWaits, &x.id, &x.command, &x.state, &x.trxState, &x.lockType, &x.lockMode, &x.lockTable,
			&x.lockIndex, &x.lockData, &x.waitMs, &x.bTrx, &x.bSession, &x.bState, &x.bAgeMs, &x.bQuery); err != nil {
			return err
		}
		all = append(all, x)
		return nil
	})
	if err != nil {
		return monitor.Reading{Err: err}
	}
	v.statements.Add(1)
	return v.reading(all)
}

// reading folds the statement's rows into a sample: each session once, its blockers gathered.
func (v *LockView) reading(all []row) monitor.Reading {
	var r monitor.Reading
	if len(all) > 0 && all[0].serverWaits.Valid {
		n := all[0].serverWaits.Int64
		r.ServerLockWaits = &n
	}
	type holder struct {
		b       results.Blocker
		waiters map[int64]bool
	}
	holders := map[string]*holder{}
	seen := map[int64]bool{}
	r.WaitEvents = map[string]int64{}
	var blocked int64
	for _, x := range all {
		if !x.id.Valid {
			continue // no session of the service: the one row of the status alone
		}
		if x.bTrx.Valid {
			h := holders[x.bTrx.String]
			if h == nil {
				h = &holder{b: results.Blocker{Session: x.bSession.Int64, Transaction: x.bTrx.String, State: x.bState.String,
					Query: x.bQuery.String, AgeMs: units.Round(x.bAgeMs.Float64, 3)}, waiters: map[int64]bool{}}
				h.b.Table, h.b.Row = v.place(x)
				holders[x.bTrx.String] = h
			}
			h.waiters[x.id.Int64] = true
		}
		if seen[x.id.Int64] {
			continue
		}
		seen[x.id.Int64] = true
		r.ServerSessions++
		if x.command.String == "Sleep" { // idle, or idle in a transaction: waiting on its client
			r.SessionsOnClient++
		}
		waiting := x.trxState.String == "LOCK WAIT"
		if event := sessionState(x, waiting); event != "" {
			r.WaitEvents[event]++
		}
		if !waiting {
			continue
		}
		blocked++
		table, rowName := v.place(x)
		r.Waiters = append(r.Waiters, monitor.Waiter{Table: table, Row: rowName, LockType: lockType(x), WaitMs: max(x.waitMs.Float64, 0)})
	}
	blockers := int64(len(holders))
	r.Blocked, r.Blockers = &blocked, &blockers
	var most *holder
	for _, h := range sortedHolders(holders) {
		if most == nil || len(h.waiters) > len(most.waiters) {
			most = h
		}
	}
	if most != nil {
		b := most.b
		b.Waiters = int64(len(most.waiters))
		r.Blocker = &b
	}
	return r
}

// sortedHolders lists holders by transaction id, so that a tie for the most waiters is broken
// the same way every time.
func sortedHolders[H any](m map[string]H) []H {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]H, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// place is the table a waiter queues on (without the schema when it is the service's
// database) and the row: its key in the index, "" for a table lock or a key not known.
func (v *LockView) place(x row) (table, rowName string) {
	if !x.lockTable.Valid {
		return monitor.Unattributed, ""
	}
	schema, name := splitTable(x.lockTable.String)
	table = name
	if schema != "" && schema != v.svc.Database {
		table = schema + "." + name
	}
	if !strings.EqualFold(x.lockType.String, "RECORD") || !x.lockData.Valid {
		return table, ""
	}
	if idx := x.lockIndex.String; idx != "" && idx != "PRIMARY" && idx != "GEN_CLUST_INDEX" {
		return table, table + " (" + idx + ": " + x.lockData.String + ")"
	}
	return table, table + " (" + x.lockData.String + ")"
}

// lockType is the waiting lock's type and mode, "record X".
func lockType(x row) string {
	if !x.lockType.Valid {
		return "unknown"
	}
	return strings.ToLower(x.lockType.String) + " " + x.lockMode.String
}

// sessionState is what a session of the service is doing (the type's doc): "" for one idle
// outside a transaction.
func sessionState(x row, waiting bool) string {
	switch {
	case waiting && x.lockType.Valid:
		return "Lock:" + strings.ToLower(x.lockType.String)
	case waiting:
		return "Lock:unknown"
	case x.command.String == "Sleep" && x.trxState.Valid:
		return "Client:Sleep"
	case x.command.String == "Sleep":
		return ""
	case x.state.String == "":
		return "active"
	}
	return x.command.String + ":" + x.state.String
}

// Count runs a query of one integer on the view's connection.
func (v *LockView) Count(ctx context.Context, q string) (int64, error) {
	var n int64
	if err := v.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, err
	}
	v.statements.Add(1)
	return n, nil
}

// Run runs a query on the view's connection and reads its rows.
func (v *LockView) Run(ctx context.Context, q string) error {
	rows, err := v.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	if err := scanEach(rows, func(*sql.Rows) error { return nil }); err != nil {
		return err
	}
	v.statements.Add(1)
	return nil
}

// Statements is how many statements the view ran; none is a write, so none is a commit of
// InnoDB's read-write transactions, which the run's figures count.
func (v *LockView) Statements() int64 { return v.statements.Load() }

// Close closes the view's connection.
func (v *LockView) Close(context.Context) { _ = v.db.Close() }
