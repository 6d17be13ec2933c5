package monitor

// PostgreSQL's view (Start): lock waiters from pg_locks, blocked sessions from
// pg_blocking_pids, the service's sessions and their wait events from pg_stat_activity.
//
// Attribution: a session waiting for a hot row does not always wait on a lock that names the
// row's table. The head waiter holds the row's tuple lock and waits on the holder's
// transactionid (relation NULL); later waiters queue on the tuple lock. So a waiter is
// attributed, in order, to the relation of its ungranted lock when that lock is a relation,
// page or tuple lock; else to the relation of a tuple lock it holds; else to the one table it
// holds RowExclusiveLock on (several: "(unattributed)"). Query text is never matched.
//
// Waiters per physical row: a waiter's row is "table (page,tuple)" (waiter.row).
//
// Blocked sessions and their blockers are read at the slow readings only (Config.SlowInterval,
// at least a second apart): pg_blocking_pids briefly takes the lock manager's partition locks.
//
// Wait events: each sample counts the run's sessions that are not idle (the load's and the
// flushers', not the engine's observers) by wait_event_type:wait_event from
// pg_stat_activity, "active" for those running and not waiting; a session idle in a
// transaction shows as Client:ClientRead (the transaction waits on the client). The run keeps
// the totals over its samples.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// AppNamePattern selects the sessions that belong to hotspotkit (application_name LIKE).
const AppNamePattern = "hotspotkit%"

// Connect opens the monitor's dedicated connection to PostgreSQL.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// Start opens a monitor's own connection to PostgreSQL and begins sampling on it (StartView
// with PostgreSQL's view): pg_locks, pg_blocking_pids and pg_stat_activity, as this file's
// opening comment says.
func Start(ctx context.Context, connect Connect, cfg Config) (*Monitor, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("monitor connection: %w", err)
	}
	v := &pgView{conn: conn, connect: connect, hot: cfg.HotTables}
	scanned, sized := scannable(ctx, conn, cfg.HotTables)
	v.lockSQL = lockQueryFor(scanned)
	if sized {
		v.statements.Add(1)
	}
	return StartView(ctx, v, cfg), nil
}

// pgView is PostgreSQL's View on the monitor's connection.
type pgView struct {
	conn    *pgx.Conn
	connect Connect
	lockSQL string
	hot     []string
	// statements counts the view's successful statements: each is a transaction of its
	// own, which the database's commit counter includes and the run's figures subtract.
	statements atomic.Int64
}

func (v *pgView) Statements() int64 { return v.statements.Load() }

func (v *pgView) Close(ctx context.Context) { _ = v.conn.Close(ctx) }

// reconnect replaces a lost connection.
func (v *pgView) reconnect(ctx context.Context) error {
	if !v.conn.IsClosed() {
		return nil
	}
	conn, err := v.connect(ctx)
	if err != nil {
		return err
	}
	v.conn = conn
	return nil
}

// Read sends the lock query, the wait events and the sessions in one round trip (a sample
// wakes the server once) and, when slow, counts the blocked sessions (blockerQuery).
func (v *pgView) Read(ctx context.Context, slow bool) Reading {
	var r Reading
	err := v.reconnect(ctx)
	var br pgx.BatchResults
	var rows pgx.Rows
	if err == nil {
		var b pgx.Batch
		b.Queue(v.lockSQL, AppNamePattern)
		b.Queue(waitEventQuery, AppNamePattern)
		b.Queue(sessionQuery, AppNamePattern)
		br = v.conn.SendBatch(ctx, &b)
		rows, err = br.Query()
	}
	var waiters []waiter
	if err == nil {
		for rows.Next() {
			var w waiter
			if err = rows.Scan(&w.lockType, &w.ownRel, &w.ownRow, &w.tupleRel, &w.tupleRow, &w.written, &w.lockedBy, &w.lockedRows, &w.waitMs); err != nil {
				break
			}
			waiters = append(waiters, w)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err == nil {
		v.statements.Add(1)
	}
	if br != nil {
		if err == nil {
			// No statement counted: the batch is one (implicit) transaction, counted with the lock query.
			r.WaitEvents, r.SessionsErr = readWaitEvents(br)
		}
		if err == nil && r.SessionsErr == nil {
			r.SessionsErr = br.QueryRow().Scan(&r.ServerSessions, &r.SessionsOnClient)
		}
		if cerr := br.Close(); cerr != nil && err == nil && r.SessionsErr == nil {
			r.SessionsErr = cerr
		}
	}
	if err != nil {
		r.Err = err
		return r
	}
	for _, w := range waiters {
		table := v.attribute(w)
		r.Waiters = append(r.Waiters, Waiter{Table: table, Row: w.row(table), LockType: w.lockType, WaitMs: w.waitMs})
	}
	if slow {
		var blocked, blockers int64
		if e := v.conn.QueryRow(ctx, blockerQuery, AppNamePattern).Scan(&blocked, &blockers); e != nil {
			r.BlockersErr = e
		} else {
			v.statements.Add(1)
			r.Blocked, r.Blockers = &blocked, &blockers
		}
	}
	return r
}

func (v *pgView) Count(ctx context.Context, sql string) (int64, error) {
	var n int64
	if err := v.conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		return 0, err
	}
	v.statements.Add(1)
	return n, nil
}

func (v *pgView) Run(ctx context.Context, sql string) error {
	if _, err := v.conn.Exec(ctx, sql); err != nil {
		return err
	}
	v.statements.Add(1)
	return nil
}

// lockQuery lists every waiting hotspotkit session with what can name its table, and (in the
// same statement, so nearly the same instant) which hot tables hold a row whose xmax is the
// transaction it waits for, and those rows: two arrays from one scan, in one order, so that
// their entries pair up (waiter.row). %s is replaced by one SELECT per hot table (see
// lockQueryFor). pg_locks is read once (lk): each read of it takes every partition lock of the
// lock manager, which the load's sessions need for each lock they take or release. The hot
// tables are read once too (locked is MATERIALIZED): inlined, the planner pushes each waiter's
// xid into it and scans every hot table once per waiter, and with 63 sessions queued on a hot
// row a sample then takes 80–125 ms of a server core instead of 2–11 ms, every 100 ms.
const lockQuery = `
WITH lk AS MATERIALIZED (
    SELECT locktype, relation, page, tuple, transactionid, pid, mode, granted, waitstart FROM pg_locks
), w AS (
    SELECT w.locktype,
           CASE WHEN w.locktype IN ('relation', 'page', 'tuple', 'extend') THEN c.relname END AS own_rel,
           CASE WHEN w.locktype = 'tuple' THEN c.relname || ' (' || w.page || ',' || w.tuple || ')' END AS own_row,
           t.rel AS tuple_rel, t.trow AS tuple_row,
           ARRAY(SELECT c3.relname::text FROM lk g JOIN pg_class c3 ON c3.oid = g.relation
             WHERE g.pid = w.pid AND g.granted AND g.locktype = 'relation'
               AND g.mode = 'RowExclusiveLock' AND c3.relkind IN ('r', 'p')) AS written,
           w.transactionid AS xid,
           COALESCE(extract(epoch FROM clock_timestamp() - w.waitstart) * 1000, 0)::float8 AS wait_ms
    FROM lk w
    JOIN pg_stat_activity a ON a.pid = w.pid
    LEFT JOIN pg_class c ON c.oid = w.relation
    LEFT JOIN LATERAL (SELECT c2.relname AS rel, c2.relname || ' (' || g.page || ',' || g.tuple || ')' AS trow
                       FROM lk g JOIN pg_class c2 ON c2.oid = g.relation
                       WHERE g.pid = w.pid AND g.granted AND g.locktype = 'tuple' LIMIT 1) t ON true
    WHERE NOT w.granted
      AND a.datname = current_database()
      AND a.application_name LIKE $1
      AND w.pid <> pg_backend_pid()
), xids AS (
    SELECT ARRAY(SELECT DISTINCT xid FROM w WHERE xid IS NOT NULL AND tuple_rel IS NULL) AS list
), locked AS MATERIALIZED (
    %s
)
SELECT w.locktype, w.own_rel, w.own_row, w.tuple_rel, w.tuple_row, w.written,
       COALESCE(held.rels, '{}'), COALESCE(held.trows, '{}'), w.wait_ms
FROM w
LEFT JOIN LATERAL (SELECT array_agg(l.rel ORDER BY l.rel, l.ctid) AS rels,
                          array_agg(l.rel || ' ' || l.ctid ORDER BY l.rel, l.ctid) AS trows
                   FROM locked l WHERE l.xid = w.xid::text) held ON true`

// scanLimit is the largest hot table whose rows a lock sample reads (the xmax scan of
// lockQuery): a hot row's table is small (the built-in suites' hold their hot rows), but a
// script's UPDATE may name a row of a large one — TPC-B's accounts are 13 MB at scale 1, 130 MB
// at 10 — and reading it ten times a second took the server's CPU from the load it observes.
// A woken waiter on a larger table is attributed without it (attribute).
const scanLimit = 1 << 20

// scannable are the hot tables of at most scanLimit bytes, as the run starts (all of them when
// their sizes cannot be read); sized: a statement read them (Statements counts it).
func scannable(ctx context.Context, conn *pgx.Conn, hot []string) (_ []string, sized bool) {
	if len(hot) == 0 {
		return nil, false
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := conn.Query(qctx, `SELECT t FROM unnest($1::text[]) AS t
		WHERE COALESCE(pg_relation_size(to_regclass(quote_ident(t))), 0) <= $2`, hot, scanLimit)
	if err != nil {
		return hot, false
	}
	small, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return hot, false
	}
	return small, true
}

// lockQueryFor builds lockQuery for the hot tables.
func lockQueryFor(hot []string) string {
	parts := []string{"SELECT NULL::text AS rel, NULL::text AS xid, NULL::text AS ctid WHERE false"}
	for _, t := range hot {
		parts = append(parts, fmt.Sprintf("SELECT %s, xmax::text, ctid::text FROM %s, xids WHERE xmax = ANY(xids.list)",
			quoteLiteral(t), pgx.Identifier{t}.Sanitize()))
	}
	return fmt.Sprintf(lockQuery, strings.Join(parts, "\n    UNION ALL "))
}

type waiter struct {
	lockType   string
	ownRel     *string  // relation of the ungranted lock, for relation/page/tuple/extend locks
	ownRow     *string  // "table (page,tuple)" of the ungranted lock, for a tuple lock
	tupleRel   *string  // relation of a tuple lock it holds
	tupleRow   *string  // "table (page,tuple)" of a tuple lock it holds
	written    []string // tables it holds RowExclusiveLock on
	lockedBy   []string // hot tables with a row locked by the transaction it waits for
	lockedRows []string // those rows, "table (page,tuple)"
	waitMs     float64
}

// row names the physical row a waiter queues for, "table (page,tuple)", given the table it is
// attributed to; "" when none can be named. Sessions updating one row queue like this: the
// first waiter takes the row version's tuple lock and waits for the holder's transaction, the
// others wait for that tuple lock. So a waiter queues for the row of the tuple lock it waits
// for, else of the tuple lock it holds, else (woken, racing for the next version) for the row
// of its table that the transaction it waits for has locked (xmax, the same instant).
func (w waiter) row(table string) string {
	switch {
	case w.ownRow != nil:
		return *w.ownRow
	case w.tupleRow != nil:
		return *w.tupleRow
	}
	for i, rel := range w.lockedBy {
		if rel == table && i < len(w.lockedRows) {
			return w.lockedRows[i]
		}
	}
	return ""
}

// blockerQuery counts the run's blocked sessions and their distinct blockers, calling
// pg_blocking_pids once per session (each call takes every partition lock of the lock manager).
const blockerQuery = `
WITH b AS MATERIALIZED (
    SELECT pg_blocking_pids(a.pid) AS blockers FROM pg_stat_activity a
    WHERE a.datname = current_database() AND a.application_name LIKE $1
      AND a.pid <> pg_backend_pid()
)
SELECT count(*) FILTER (WHERE cardinality(b.blockers) > 0),
       (SELECT count(DISTINCT x) FROM b, unnest(b.blockers) x)
FROM b`

// waitEventQuery counts the run's sessions that are not idle by what they wait on. Sessions of
// the engine's observers (monitor, admin) are left out.
const waitEventQuery = `
SELECT coalesce(wait_event_type || ':' || wait_event, 'active'), count(*)
FROM pg_stat_activity
WHERE datname = current_database()
  AND application_name LIKE $1
  AND application_name NOT IN ('hotspotkit-monitor', 'hotspotkit-admin')
  AND pid <> pg_backend_pid()
  AND state <> 'idle'
  AND backend_type = 'client backend'
GROUP BY 1`

// serviceSessions selects the service's sessions on the server, idle ones too: what a pool (or
// a pooler's pool) holds open. The engine's observers are left out.
const serviceSessions = `
FROM pg_stat_activity
WHERE datname = current_database()
  AND application_name LIKE $1
  AND application_name NOT IN ('hotspotkit-monitor', 'hotspotkit-admin', 'hotspotkit-probe')
  AND pid <> pg_backend_pid()
  AND backend_type = 'client backend'`

// sessionQuery counts the service's sessions (Pool.MaxServerSessions, at each sample), and
// those of them waiting on the client: idle, or in a transaction waiting for its next
// statement (a wait event of type Client).
const sessionQuery = `SELECT count(*), count(*) FILTER (WHERE state = 'idle' OR wait_event_type = 'Client')` + serviceSessions

// ServiceSessions returns the backend PIDs of the service's sessions on conn's server, as the
// samples count them: a pooler's server connections, whose backends a run's database figures
// wait for once the pooler has closed them.
func ServiceSessions(ctx context.Context, conn *pgx.Conn) ([]uint32, error) {
	rows, err := conn.Query(ctx, `SELECT pid`+serviceSessions, AppNamePattern)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uint32])
}

// attribute names the table a waiter queues on (see the package doc). A waiter on a
// transactionid that holds no tuple lock — common once a hot row's queue has been woken by a
// commit and the waiters race for the next version — is attributed to the hot table it writes
// in which the transaction it waits for has locked a row (xmax), else to the one hot table it
// writes; with several candidates it stays unattributed.
func (v *pgView) attribute(w waiter) string {
	switch {
	case w.ownRel != nil:
		return *w.ownRel
	case w.tupleRel != nil:
		return *w.tupleRel
	case len(w.written) == 1:
		return w.written[0]
	}
	var hot, locked []string
	for _, t := range w.written {
		if slices.Contains(v.hot, t) {
			hot = append(hot, t)
			if slices.Contains(w.lockedBy, t) {
				locked = append(locked, t)
			}
		}
	}
	switch {
	case len(locked) == 1:
		return locked[0]
	case len(locked) == 0 && len(hot) == 1:
		return hot[0]
	}
	return Unattributed
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// readWaitEvents reads the batch's next result: the run's busy sessions counted by wait event
// (waitEventQuery).
func readWaitEvents(br pgx.BatchResults) (map[string]int64, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for rows.Next() {
		var event string
		var n int64
		if err := rows.Scan(&event, &n); err != nil {
			rows.Close()
			return nil, err
		}
		out[event] = n
	}
	return out, rows.Err()
}
