// Package monitor owns what a run observes about the database while the load runs: lock
// waiters from pg_locks attributed to the table they queue on, blocked sessions and their
// blockers, and the load pool's usage. It samples on its own dedicated connection (never the
// load's pool), keeps the maxima for the report and writes every sample as one NDJSON line.
// It must not change anything in the database.
//
// Attribution: a session waiting for a hot row does not always wait on a lock that names the
// row's table. The head waiter holds the row's tuple lock and waits on the holder's
// transactionid (relation NULL); later waiters queue on the tuple lock. So a waiter is
// attributed, in order, to the relation of its ungranted lock when that lock is a relation,
// page or tuple lock; else to the relation of a tuple lock it holds; else to the one table it
// holds RowExclusiveLock on (several: "(unattributed)"). Query text is never matched.
//
// Waiters per physical row: each sample also counts, per table, the waiters queued for one
// physical row (see waiter.row), and the run keeps the largest count per table. It is what
// --slots changes: the waiters of a hot table spread over its slots' rows.
//
// Reading a total: with TotalSQL, each sample also times that query (the read of one hot
// logical row, a sum over its slots) on the monitor's connection while the load runs.
//
// Wait events: each sample also counts the run's sessions that are not idle (the load's and
// the flushers', not the engine's observers) by wait_event_type:wait_event from
// pg_stat_activity, "active" for those running and not waiting; a session idle in a
// transaction shows as Client:ClientRead (the transaction waits on the client). The run keeps
// the totals over its samples. Each sample also counts the service's sessions waiting on the
// client (idle, or idle in a transaction), and the run keeps their sums beside the sessions'.
//
// The process itself: each sample records its share of the machine's processors since the
// sample before (package clientcost), and the run keeps the most goroutines seen.
package monitor

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
)

// AppNamePattern selects the sessions that belong to hotspotkit (application_name LIKE).
const AppNamePattern = "hotspotkit%"

// Unattributed names waiters whose table could not be determined.
const Unattributed = "(unattributed)"

// Config shapes a monitor.
type Config struct {
	// Interval between lock samples (--monitor-interval-ms).
	Interval time.Duration
	// SlowInterval between pg_blocking_pids samples and slow probes; at least 1s, because
	// pg_blocking_pids briefly takes the lock manager's partition locks.
	SlowInterval time.Duration
	// HotTables are always present in max_waiters_by_relation (0 when nothing waited).
	HotTables []string
	// Pool is the load's pool (optional).
	Pool *pgxpool.Pool
	// Queue reports the async queue's depth and pending depth (optional).
	Queue func() (depth, pending int64)
	// PendingSQL counts what is still to be flushed (e.g. the outbox), run at SlowInterval (optional).
	PendingSQL string
	// TotalSQL reads one hot logical row's total (with slots, a sum over them); each sample
	// times it (optional).
	TotalSQL string
	// Progress reports completed and failed requests so far (optional).
	Progress func() (completed, failed int64)
	// Samples receives every sample (optional).
	Samples *SampleWriter
	// Process adds the process's RSS, goroutines and open sockets to every sample and keeps
	// them in Series (reading /proc: set it only when something reads them — the samples
	// file, a soak's figures).
	Process bool
	// Pooler reads the pooler between the service and PostgreSQL at each sample, on a
	// connection of its own to the pooler's console (optional: --pooler).
	Pooler func(ctx context.Context) (*results.PoolerSample, error)
	// Label is copied into every sample.
	Label results.Sample
}

// Monitor samples until Stop.
type Monitor struct {
	cfg     Config
	conn    *pgx.Conn
	connect Connect
	lockSQL string
	start   time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	poolAt0 poolCounters

	mu      sync.Mutex
	locks   results.LockMonitor
	pool    results.Pool
	minIdle int32
	waits   map[string]int64
	// statements counts the monitor's successful statements: each is a transaction of its
	// own, which the database's commit counter includes and the run's figures subtract.
	statements int64
	// totalRead times TotalSQL.
	totalRead *hist.Histogram
	// last is the latest sample, for Last.
	last results.Sample
	// series keeps every sample's progress and process figures, for Series.
	series []Point
	// pooler keeps the maxima of Config.Pooler's readings (Pooler).
	pooler results.Pooler
	// cpu gives each sample the process's share of the machine since the sample before;
	// maxGoroutines is the most goroutines at a sample.
	cpu           *clientcost.Sampler
	maxGoroutines int
}

type poolCounters struct{ acquire, empty, canceled int64 }

// Connect opens the monitor's dedicated connection.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// Start opens the monitor's own connection and begins sampling on it. When the connection is
// lost (a fault terminated it, the server restarted) the next sample reconnects; samples that
// fail are counted in sample_errors, never silently skipped.
func Start(ctx context.Context, connect Connect, cfg Config) (*Monitor, error) {
	conn, err := connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("monitor connection: %w", err)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.SlowInterval < time.Second {
		cfg.SlowInterval = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	scanned, sized := scannable(ctx, conn, cfg.HotTables)
	m := &Monitor{cfg: cfg, conn: conn, connect: connect, lockSQL: lockQueryFor(scanned), start: time.Now(), cancel: cancel, done: make(chan struct{}), minIdle: math.MaxInt32,
		waits: map[string]int64{}, totalRead: hist.New(), cpu: clientcost.NewSampler()}
	if sized {
		m.statements++
	}
	m.locks.IntervalMs = cfg.Interval.Milliseconds()
	m.locks.MaxWaitersByRelation = map[string]int64{}
	for _, t := range cfg.HotTables {
		m.locks.MaxWaitersByRelation[t] = 0
	}
	m.locks.MaxWaitersByLockType = map[string]int64{}
	m.locks.MaxWaitersPerRowByRelation = map[string]int64{}
	if cfg.Pool != nil {
		st := cfg.Pool.Stat()
		m.poolAt0 = poolCounters{st.AcquireCount(), st.EmptyAcquireCount(), st.CanceledAcquireCount()}
		m.pool.MaxConns = st.MaxConns()
		m.pool.IdleReserve = IdleReserve(st.MaxConns())
	}
	go m.loop(ctx)
	return m, nil
}

// IdleReserve is the idle-connection reserve below which a busy pool counts as under pressure:
// ⌈10% of max⌉ clamped to 2..10, as the reference gateway computes it.
func IdleReserve(maxConns int32) int32 {
	r := (maxConns + 9) / 10
	return min(max(r, 2), 10)
}

func (m *Monitor) loop(ctx context.Context) {
	defer close(m.done)
	tick := time.NewTicker(m.cfg.Interval)
	defer tick.Stop()
	var lastSlow time.Time
	for {
		now := time.Now()
		slow := now.Sub(lastSlow) >= m.cfg.SlowInterval
		if slow {
			lastSlow = now
		}
		m.sample(ctx, now, slow)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
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
func (m *Monitor) attribute(w waiter) string {
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
		if slices.Contains(m.cfg.HotTables, t) {
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

func (m *Monitor) sample(ctx context.Context, now time.Time, slow bool) {
	s := m.cfg.Label
	s.Time = now
	s.ElapsedMs = float64(now.Sub(m.start).Microseconds()) / 1000
	var sampleErr error
	var waiters []waiter
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := m.reconnect(qctx)
	// The lock query and the wait events go in one round trip: a sample wakes the server once.
	var br pgx.BatchResults
	var rows pgx.Rows
	if err == nil {
		var b pgx.Batch
		b.Queue(m.lockSQL, AppNamePattern)
		b.Queue(waitEventQuery, AppNamePattern)
		b.Queue(sessionQuery, AppNamePattern)
		br = m.conn.SendBatch(qctx, &b)
		rows, err = br.Query()
	}
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
	var statements int64
	if err == nil {
		statements++
	}
	var waits map[string]int64
	var waitErr error
	if br != nil {
		if err == nil {
			// No statements++: the batch is one (implicit) transaction, counted with the lock query.
			waits, waitErr = readWaitEvents(br)
		}
		if err == nil && waitErr == nil {
			waitErr = br.QueryRow().Scan(&s.ServerSessions, &s.SessionsOnClient)
		}
		if cerr := br.Close(); cerr != nil && err == nil && waitErr == nil {
			waitErr = cerr
		}
	}
	byRel := map[string]int64{}
	byType := map[string]int64{}
	byRow := map[[2]string]int64{}
	var total int64
	var oldest float64
	if err == nil {
		for _, w := range waiters {
			table := m.attribute(w)
			byRel[table]++
			byType[w.lockType]++
			if row := w.row(table); row != "" {
				byRow[[2]string{table, row}]++
			}
			total++
			oldest = max(oldest, w.waitMs)
		}
	}
	maxPerRow := map[string]int64{}
	for k, n := range byRow {
		maxPerRow[k[0]] = max(maxPerRow[k[0]], n)
	}
	if err != nil {
		sampleErr = err
	}
	var blocked, blockers int64
	var pending int64
	var havePending bool
	if slow && err == nil {
		if e := m.conn.QueryRow(qctx, blockerQuery, AppNamePattern).Scan(&blocked, &blockers); e != nil {
			sampleErr = e
			slow = false
		} else {
			statements++
		}
		if m.cfg.PendingSQL != "" && sampleErr == nil {
			if e := m.conn.QueryRow(qctx, m.cfg.PendingSQL).Scan(&pending); e == nil {
				havePending = true
				statements++
			} else {
				sampleErr = e
			}
		}
	}
	lockOK := sampleErr == nil
	if waitErr != nil && sampleErr == nil {
		sampleErr = waitErr
	}
	var readTime time.Duration
	if err == nil && m.cfg.TotalSQL != "" {
		t0 := time.Now()
		if _, e := m.conn.Exec(qctx, m.cfg.TotalSQL); e == nil {
			readTime = time.Since(t0)
			statements++
		} else if sampleErr == nil {
			sampleErr = e
		}
	}
	var poolerErr error
	if m.cfg.Pooler != nil {
		s.Pooler, poolerErr = m.cfg.Pooler(qctx)
	}
	cancel()
	if ctx.Err() != nil {
		return // stopping: a cancelled query is not a sample
	}

	s.LockWaiters = total
	s.WaitersByRelation = byRel
	s.MaxWaitersPerRow = maxPerRow
	s.WaitersByLockType = byType
	s.OldestLockWaitMs = round3(oldest)
	if slow {
		s.BlockedSessions, s.Blockers = &blocked, &blockers
	}
	if havePending {
		s.OutboxPending = &pending
	}
	if m.cfg.Pool != nil {
		st := m.cfg.Pool.Stat()
		s.PoolAcquired, s.PoolIdle, s.PoolMax = st.AcquiredConns(), st.IdleConns(), st.MaxConns()
		if s.PoolMax > 0 {
			s.PoolUsageBasisPts = int64(s.PoolAcquired) * 10000 / int64(s.PoolMax)
		}
		// Under pressure: busy, and no more than the reserve of connections left to hand out
		// without waiting — idle ones plus those the pool may still open. (Counting idle ones
		// alone would call a lazily growing pool "under pressure" at its first request.)
		s.PoolPressure = s.PoolAcquired > 0 && s.PoolMax-s.PoolAcquired <= IdleReserve(s.PoolMax)
	}
	if m.cfg.Queue != nil {
		d, p := m.cfg.Queue()
		s.QueueDepth, s.QueuePendingDepth = &d, &p
	}
	if m.cfg.Progress != nil {
		s.CompletedRequests, s.FailedRequests = m.cfg.Progress()
	}
	if m.cfg.Process {
		s.RSSBytes, s.Goroutines, s.OpenConns = processStats()
	}
	goroutines := s.Goroutines
	if !m.cfg.Process {
		goroutines = runtime.NumGoroutine()
	}
	s.ClientCPUShare = m.cpu.Share()
	if sampleErr != nil {
		s.SampleError = sampleErr.Error()
	}
	s.WaitEvents = waits

	m.mu.Lock()
	if readTime > 0 {
		m.totalRead.Record(readTime)
	}
	m.statements += statements
	m.maxGoroutines = max(m.maxGoroutines, goroutines)
	m.fold(&s, lockOK, slow)
	m.foldPooler(s.Pooler, poolerErr)
	if waitErr != nil && lockOK {
		m.locks.SampleErrors++ // the lock part was kept; the sample still failed in part
	}
	if m.cfg.Process {
		m.series = append(m.series, Point{Time: now, Completed: s.CompletedRequests, RSSBytes: s.RSSBytes,
			Goroutines: s.Goroutines, OpenConns: s.OpenConns})
	}
	lastPending := m.last.OutboxPending
	m.last = s
	if s.OutboxPending == nil { // counted every SlowInterval only: keep the latest count
		m.last.OutboxPending = lastPending
	}
	m.mu.Unlock()
	if m.cfg.Samples != nil {
		m.cfg.Samples.Write(&s)
	}
}

// fold keeps the maxima of one sample; locks is guarded by mu.
func (m *Monitor) fold(s *results.Sample, lockOK, slow bool) {
	l := &m.locks
	if lockOK {
		l.Samples++
		if s.LockWaiters > 0 {
			l.WaiterSamples++
		}
		l.MaxLockWaiters = max(l.MaxLockWaiters, s.LockWaiters)
		for rel, n := range s.WaitersByRelation {
			l.MaxWaitersByRelation[rel] = max(l.MaxWaitersByRelation[rel], n)
		}
		for rel, n := range s.MaxWaitersPerRow {
			l.MaxWaitersPerRowByRelation[rel] = max(l.MaxWaitersPerRowByRelation[rel], n)
		}
		for lt, n := range s.WaitersByLockType {
			l.MaxWaitersByLockType[lt] = max(l.MaxWaitersByLockType[lt], n)
		}
		l.MaxLockWaitMs = max(l.MaxLockWaitMs, s.OldestLockWaitMs)
	} else {
		l.SampleErrors++
	}
	if slow && s.BlockedSessions != nil {
		l.BlockerSamples++
		l.MaxBlockedSessions = max(l.MaxBlockedSessions, *s.BlockedSessions)
		l.MaxBlockers = max(l.MaxBlockers, *s.Blockers)
	}
	for event, n := range s.WaitEvents {
		m.waits[event] += n
	}
	m.pool.MaxServerSessions = max(m.pool.MaxServerSessions, s.ServerSessions)
	m.pool.SessionSamples += s.ServerSessions
	m.pool.ClientWaitSamples += s.SessionsOnClient
	if m.cfg.Pool != nil {
		p := &m.pool
		p.MaxAcquired = max(p.MaxAcquired, s.PoolAcquired)
		m.minIdle = min(m.minIdle, s.PoolIdle)
		p.MaxUsageBasisPoints = max(p.MaxUsageBasisPoints, s.PoolUsageBasisPts)
		if s.PoolPressure {
			p.PressureSamples++
		}
	}
}

// foldPooler keeps the maxima of one reading of the pooler (nil without one); guarded by mu.
func (m *Monitor) foldPooler(p *results.PoolerSample, err error) {
	if m.cfg.Pooler == nil {
		return
	}
	f := &m.pooler
	if err != nil || p == nil {
		f.SampleErrors++
		return
	}
	f.Samples++
	if p.ClientsWaiting > 0 {
		f.WaitingSamples++
	}
	f.MaxClientsActive = max(f.MaxClientsActive, p.ClientsActive)
	f.MaxClientsWaiting = max(f.MaxClientsWaiting, p.ClientsWaiting)
	f.MaxWaitMs = max(f.MaxWaitMs, p.MaxWaitMs)
	f.MaxServersActive = max(f.MaxServersActive, p.ServersActive)
	f.MaxServersIdle = max(f.MaxServersIdle, p.ServersIdle)
}

// Pooler returns the maxima of the pooler's readings so far (the zero Pooler without
// Config.Pooler); the caller fills in what the pooler is.
func (m *Monitor) Pooler() results.Pooler {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pooler
}

// Last returns the latest sample (the zero Sample before the first one). Its maps are the
// sample's own and must not be modified.
func (m *Monitor) Last() results.Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// MaxGoroutines returns the most goroutines the process had at a sample so far.
func (m *Monitor) MaxGoroutines() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxGoroutines
}

// Series returns the progress and process figures of every sample so far, in time order
// (empty unless Config.Process).
func (m *Monitor) Series() []Point {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Point(nil), m.series...)
}

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

// WaitEvents returns the totals of the wait-event counts over every sample so far.
func (m *Monitor) WaitEvents() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.waits)
}

// Statements returns how many transactions the monitor committed on its connection: one per
// statement it ran on its own, one per batch (the lock query with the wait events).
func (m *Monitor) Statements() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statements
}

// reconnect replaces a lost connection.
func (m *Monitor) reconnect(ctx context.Context) error {
	if !m.conn.IsClosed() {
		return nil
	}
	conn, err := m.connect(ctx)
	if err != nil {
		return err
	}
	m.conn = conn
	return nil
}

// Stop ends sampling, takes one last sample (within ctx, and the sample's own bound), closes
// the connection and returns the run's lock and pool summaries.
func (m *Monitor) Stop(ctx context.Context) (results.LockMonitor, results.Pool) {
	m.cancel()
	<-m.done
	m.sample(ctx, time.Now(), true)
	_ = m.conn.Close(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	pool := m.pool
	if m.cfg.Pool != nil {
		st := m.cfg.Pool.Stat()
		pool.AcquireCount = st.AcquireCount() - m.poolAt0.acquire
		pool.EmptyAcquireCount = st.EmptyAcquireCount() - m.poolAt0.empty
		pool.CanceledAcquireCount = st.CanceledAcquireCount() - m.poolAt0.canceled
		if m.minIdle != math.MaxInt32 {
			pool.MinIdle = m.minIdle
		}
	}
	if m.totalRead.Count() > 0 {
		read := results.Latency(m.totalRead.Summary())
		m.locks.TotalReadMs = &read
		if enc, err := m.totalRead.Encode(); err == nil {
			m.locks.TotalReadHistogram = enc
		}
	}
	return m.locks, pool
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
