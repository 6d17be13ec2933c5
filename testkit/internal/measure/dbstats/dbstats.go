// Package dbstats owns what PostgreSQL's own statistics say a run cost: a snapshot of the
// cumulative counters — WAL (pg_stat_wal, or the insert LSN before PostgreSQL 14),
// transactions (pg_stat_database), statements (pg_stat_statements when it is loaded) and the
// row counters of the run's schema (pg_stat_user_tables) — taken on the engine's own
// connection before and after a run, and the difference of two snapshots as the report's
// results.Database, with the figures per completed request.
//
// Reliability of the end reading: since PostgreSQL 15 a backend keeps its counters to itself
// until it flushes them — at most once a second while busy, and an idle backend that flushed
// less than a second ago waits up to 10 s (PGSTAT_IDLE_INTERVAL) before the next flush. Only
// an exiting backend flushes at once, and it does so before it leaves pg_stat_activity. So the
// engine closes the run's write connections after the drain, Take waits (bounded) until their
// backends are gone, and the reading connection forces its own flush
// (pg_stat_force_next_flush) before each snapshot. pg_stat_statements is updated as each
// statement ends and needs no flush. Before 15 the statistics collector gets the counters
// within half a second; Take then polls until they stop moving.
//
// What the figures count: WAL is server-wide and transactions database-wide (autovacuum and
// other sessions of a shared server add to them: how often autovacuum ran in the window is
// counted beside them, its transactions cannot be); statements are those of the database run by
// the connecting role, transaction control and session commands left out; table counters are
// exact for the run's schema. The reading connection's and the monitor's own transactions are
// subtracted; their statements are not tracked (Untrack).
package dbstats

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
)

// Reader takes snapshots on one connection of the engine's (never the load's); it knows what
// the server offers and counts the transactions it runs itself.
type Reader struct {
	version      int    // server_version_num
	statsView    string // qualified pg_stat_statements view, "" when not loaded
	schema       string
	transactions int64 // transactions this reader ran (each is one commit in pg_stat_database)
}

// Snapshot is one reading of the cumulative counters.
type Snapshot struct {
	At                time.Time
	WALBytes          int64
	WALRecords        int64
	WALFullPageImages int64
	XactCommit        int64
	XactRollback      int64
	// Sessions is pg_stat_database.sessions (PostgreSQL 14+; 0 before): every session opens
	// with a transaction of its own (reading the catalogs), counted in XactCommit.
	Sessions int64
	// Autovacuums is how many vacuums and analyzes autovacuum has run on the database's tables,
	// catalogs included (pg_stat_all_tables): each in transactions of its own, which
	// XactCommit counts and nothing tells apart.
	Autovacuums int64
	// Statements by queryid (nil when pg_stat_statements is not loaded).
	Statements map[string]Statement
	Tables     map[string]tableCounters
	// readerTransactions is the reader's count before this snapshot's own transaction.
	readerTransactions int64
}

// Statement is one statement's cumulative counters in a database's statistics
// (pg_stat_statements' entry, InnoDB's digest in performance_schema).
type Statement struct {
	Query   string
	Calls   int64
	Rows    int64
	TotalMs float64
	// Control: transaction control or a session command (not counted as the run's statements,
	// but timed: a COMMIT's time is the wait for its WAL flush).
	Control bool
}

// Since is what e counted after s, the same statement's earlier reading (the zero Statement
// when it had none; all of e when the counters were reset in between).
func (e Statement) Since(s Statement) Statement {
	if e.Calls < s.Calls {
		s = Statement{}
	}
	e.Calls, e.Rows, e.TotalMs = e.Calls-s.Calls, e.Rows-s.Rows, e.TotalMs-s.TotalMs
	return e
}

type tableCounters struct {
	inserted, updated, hotUpdated, deleted, dead int64
}

// NewReader inspects the server on conn: its version and whether pg_stat_statements is loaded.
// schema is the run's schema, whose tables are read.
func NewReader(ctx context.Context, conn *pgx.Conn, schema string) (*Reader, error) {
	r := &Reader{schema: schema}
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version_num").Scan(&v); err != nil {
		return nil, err
	}
	r.version, _ = strconv.Atoi(v)
	r.transactions++
	var nsp *string
	if err := conn.QueryRow(ctx, `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_stat_statements'`).Scan(&nsp); err != nil && err != pgx.ErrNoRows {
		return nil, err
	}
	r.transactions++
	if nsp != nil {
		view := pgx.Identifier{*nsp, "pg_stat_statements"}.Sanitize()
		// The view errors when the library is not in shared_preload_libraries.
		if _, err := conn.Exec(ctx, "SELECT 1 FROM "+view+" LIMIT 0"); err == nil {
			r.statsView = view
			r.transactions++
		}
	}
	return r, nil
}

// Untrack stops pg_stat_statements from recording conn's own statements (the engine's
// observers), so they are not counted as the run's. It needs a superuser; elsewhere it does
// nothing and the observers' statements stay in the count.
func Untrack(ctx context.Context, conn *pgx.Conn) {
	_, _ = conn.Exec(ctx, "SET pg_stat_statements.track = 'none'")
}

// Take reads every counter once the backends of sessions — connections already closed: the
// run's writers at its end; the calibration's and earlier runs' at its start — have exited and
// so flushed their counters (or after deadline). The reader's own pending counters are flushed
// first, so that what happened before a start reading never arrives during the run.
func (r *Reader) Take(ctx context.Context, conn *pgx.Conn, sessions []uint32, deadline time.Duration) (Snapshot, error) {
	Untrack(ctx, conn)
	r.transactions++
	if err := r.waitGone(ctx, conn, sessions, deadline); err != nil {
		return Snapshot{}, err
	}
	if r.version < 150000 {
		if err := r.waitStill(ctx, conn, deadline); err != nil {
			return Snapshot{}, err
		}
	}
	if err := r.forceFlush(ctx, conn); err != nil {
		return Snapshot{}, err
	}
	return r.snapshot(ctx, conn)
}

// forceFlush makes conn's backend flush its pending counters at the end of this statement
// (PostgreSQL 15+; before, the collector is sent them within half a second anyway).
func (r *Reader) forceFlush(ctx context.Context, conn *pgx.Conn) error {
	if r.version < 150000 {
		return nil
	}
	r.transactions++
	_, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	return err
}

// waitGone polls pg_stat_activity until none of the sessions is there.
func (r *Reader) waitGone(ctx context.Context, conn *pgx.Conn, sessions []uint32, deadline time.Duration) error {
	if len(sessions) == 0 {
		return nil
	}
	pids := make([]int32, len(sessions))
	for i, p := range sessions {
		pids[i] = int32(p)
	}
	return r.poll(ctx, deadline, func() (bool, error) {
		var left int
		r.transactions++
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&left)
		return left == 0, err
	})
}

// waitStill polls the database's transaction counters until two readings agree (before
// PostgreSQL 15, where a statistics collector receives the counters with a delay).
func (r *Reader) waitStill(ctx context.Context, conn *pgx.Conn, deadline time.Duration) error {
	last := int64(-1)
	return r.poll(ctx, deadline, func() (bool, error) {
		var n int64
		r.transactions++
		if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return false, err
		}
		r.transactions++
		err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback + tup_inserted + tup_updated + tup_deleted
			FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
		still := n == last
		last = n
		return still, err
	})
}

// poll calls done every 20 ms until it reports true, fails, or deadline passes (then it gives
// up quietly: the reading is taken as it is).
func (r *Reader) poll(ctx context.Context, deadline time.Duration, done func() (bool, error)) error {
	end := time.Now().Add(deadline)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil || ok || time.Now().After(end) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// snapshot reads every counter in one transaction.
func (r *Reader) snapshot(ctx context.Context, conn *pgx.Conn) (Snapshot, error) {
	s := Snapshot{At: time.Now(), readerTransactions: r.transactions, Tables: map[string]tableCounters{}}
	r.transactions++
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return err
		}
		if r.version >= 140000 {
			if err := tx.QueryRow(ctx, `SELECT wal_bytes::int8, wal_records, wal_fpi FROM pg_stat_wal`).
				Scan(&s.WALBytes, &s.WALRecords, &s.WALFullPageImages); err != nil {
				return fmt.Errorf("pg_stat_wal: %w", err)
			}
		} else if err := tx.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8`).Scan(&s.WALBytes); err != nil {
			return fmt.Errorf("insert LSN: %w", err)
		}
		sessions := "0::int8"
		if r.version >= 140000 {
			sessions = "sessions"
		}
		if err := tx.QueryRow(ctx, `SELECT xact_commit, xact_rollback, `+sessions+`,
				(SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)::int8 FROM pg_stat_all_tables)
			FROM pg_stat_database WHERE datname = current_database()`).
			Scan(&s.XactCommit, &s.XactRollback, &s.Sessions, &s.Autovacuums); err != nil {
			return fmt.Errorf("pg_stat_database: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup
			FROM pg_stat_user_tables WHERE schemaname = $1`, r.schema)
		if err != nil {
			return fmt.Errorf("pg_stat_user_tables: %w", err)
		}
		for rows.Next() {
			var name string
			var t tableCounters
			if err := rows.Scan(&name, &t.inserted, &t.updated, &t.hotUpdated, &t.deleted, &t.dead); err != nil {
				rows.Close()
				return err
			}
			s.Tables[name] = t
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if r.statsView != "" {
			st, err := r.statements(ctx, tx)
			if err != nil {
				return fmt.Errorf("pg_stat_statements: %w", err)
			}
			s.Statements = st
		}
		return nil
	})
	return s, err
}

// statements reads pg_stat_statements for this database and role.
func (r *Reader) statements(ctx context.Context, tx pgx.Tx) (map[string]Statement, error) {
	rows, err := tx.Query(ctx, `SELECT coalesce(queryid, 0)::text, coalesce(query, ''), calls, rows, total_exec_time
		FROM `+r.statsView+`
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Statement{}
	for rows.Next() {
		var id string
		var s Statement
		if err := rows.Scan(&id, &s.Query, &s.Calls, &s.Rows, &s.TotalMs); err != nil {
			return nil, err
		}
		if observing.MatchString(s.Query) {
			continue
		}
		s.Control = IsControl(s.Query)
		prev := out[id] // top-level and nested entries share a queryid (PostgreSQL 14+)
		s.Calls += prev.Calls
		s.Rows += prev.Rows
		s.TotalMs += prev.TotalMs
		out[id] = s
	}
	return out, rows.Err()
}

// control matches what is not counted as a statement of the run: transaction control and
// session commands (counted in commits, or nothing at all), PostgreSQL's and MySQL's.
var control = regexp.MustCompile(`(?is)^\s*(begin|start\s+transaction|commit|end|rollback|abort|savepoint|release|set|reset|show|discard|deallocate|prepare\s+transaction|listen|unlisten|xa|use)\b`)

// IsControl says whether a statement's text is transaction control or a session command, not
// work of the run's (BEGIN, COMMIT, SET, SHOW, ...).
func IsControl(query string) bool { return control.MatchString(query) }

// observing matches the statistics views the engine's observers read (when Untrack was
// refused): never the run's.
var observing = regexp.MustCompile(`(?is)pg_stat_activity|pg_locks|pg_stat_statements|pg_stat_force_next_flush|pg_stat_clear_snapshot`)

// Inputs is what Delta needs beyond two snapshots.
type Inputs struct {
	// Requests is how many requests completed in the window (the per-request divisor).
	Requests int64
	// HotTables get a HOT-update ratio and are always listed.
	HotTables []string
	// WaitEvents are the monitor's totals over the run.
	WaitEvents map[string]int64
	// ObserverTransactions are the monitor's own transactions in the window (subtracted).
	ObserverTransactions int64
	// Shared is set on a server this invocation did not start.
	Shared bool
	// Top is how many statements to list (default 5).
	Top int
}

// DatabaseWide names the figures that count every session of the server or database.
var DatabaseWide = []string{"wal_bytes", "wal_records", "wal_full_page_images", "xact_commit", "xact_rollback",
	"statements", "per_request.wal_bytes_per_request", "per_request.commits_per_request",
	"per_request.statements_per_request"}

// Delta is what the run cost between start and end.
func (r *Reader) Delta(start, end Snapshot, in Inputs) *results.Database {
	d := &results.Database{
		WALBytes:          nonNegative(end.WALBytes - start.WALBytes),
		WALRecords:        nonNegative(end.WALRecords - start.WALRecords),
		WALFullPageImages: nonNegative(end.WALFullPageImages - start.WALFullPageImages),
		WALSource:         "pg_stat_wal",
		XactRollback:      nonNegative(end.XactRollback - start.XactRollback),
		WaitEvents:        in.WaitEvents,
		DatabaseWide:      DatabaseWide,
		Shared:            in.Shared,
		Tables:            map[string]results.TableStats{},
	}
	if r.version < 140000 {
		d.WALSource = "insert_lsn"
	}
	// Not the run's commits: the reader's and the observers' transactions, and the transaction
	// every session opened in the window began with (its catalog reads), which counts
	// connections, not work.
	own := end.readerTransactions - start.readerTransactions + in.ObserverTransactions
	if r.version >= 140000 {
		d.Sessions = nonNegative(end.Sessions - start.Sessions)
		own += d.Sessions
	}
	d.XactCommit = nonNegative(end.XactCommit - start.XactCommit - own)
	d.Autovacuums = nonNegative(end.Autovacuums - start.Autovacuums)
	if start.Statements != nil && end.Statements != nil {
		d.Statements = StatementsDelta(start.Statements, end.Statements, in.Top)
	}
	for name, e := range end.Tables {
		s := start.Tables[name]
		t := results.TableStats{
			Inserted:   nonNegative(e.inserted - s.inserted),
			Updated:    nonNegative(e.updated - s.updated),
			HotUpdated: nonNegative(e.hotUpdated - s.hotUpdated),
			Deleted:    nonNegative(e.deleted - s.deleted),
			DeadTuples: e.dead,
		}
		if t.Inserted+t.Updated+t.Deleted == 0 && !slices.Contains(in.HotTables, name) {
			continue
		}
		d.Tables[name] = t
	}
	d.PerRequest = d.Per(in.Requests)
	for _, name := range in.HotTables {
		if t := d.Tables[name]; t.Updated > 0 {
			if d.PerRequest.HOTUpdateRatio == nil {
				d.PerRequest.HOTUpdateRatio = map[string]float64{}
			}
			d.PerRequest.HOTUpdateRatio[name] = units.Round(float64(t.HotUpdated)/float64(t.Updated), 4)
		}
	}
	return d
}

// StatementsDelta sums the statements' calls and time over the window, transaction control
// left out, and lists the top ones by total time. An entry missing at the start (new, or
// evicted and re-added) counts whole.
func StatementsDelta(start, end map[string]Statement, top int) *results.Statements {
	if top <= 0 {
		top = 5
	}
	out := &results.Statements{}
	var list []results.Statement
	for id, e := range end {
		if e.Control {
			continue
		}
		d := e.Since(start[id])
		if d.Calls == 0 {
			continue
		}
		out.Calls += d.Calls
		out.TotalExecMs += d.TotalMs
		list = append(list, results.Statement{Query: clip(e.Query, 300), Calls: d.Calls, Rows: d.Rows,
			TotalMs: units.Round(d.TotalMs, 3), MeanMs: units.Round(d.TotalMs/float64(d.Calls), 4)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].TotalMs > list[j].TotalMs })
	if len(list) > top {
		list = list[:top]
	}
	out.Top = list
	out.TotalExecMs = units.Round(out.TotalExecMs, 3)
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func nonNegative(v int64) int64 { return max(v, 0) }

// Timed is one statement's calls and execution time on the server over a window, transaction
// control included (a COMMIT's time is its wait for the WAL flush).
type Timed struct {
	Calls   int64
	TotalMs float64
}

// ServerTimes is every statement's server time between start and end, by its text
// (stmttime.Normalize of pg_stat_statements' query; nil when it is not loaded), summed over the
// sessions of the run's database and role: the run's pools, and anything else that sends the
// same text.
func ServerTimes(start, end Snapshot) map[string]Timed {
	return StatementTimes(start.Statements, end.Statements, stmttime.Normalize)
}

// StatementTimes is every statement's calls and time between two readings, summed per key(its
// text) (nil when either reading has none), transaction control included.
func StatementTimes(start, end map[string]Statement, key func(string) string) map[string]Timed {
	if start == nil || end == nil {
		return nil
	}
	out := map[string]Timed{}
	for id, e := range end {
		if d := e.Since(start[id]); d.Calls > 0 {
			q := key(e.Query)
			t := out[q]
			t.Calls += d.Calls
			t.TotalMs += d.TotalMs
			out[q] = t
		}
	}
	return out
}

// Requests is what RequestTime needs of the load beyond the statements: how many requests ran
// (the divisor of the statement figures) and the measured ones' mean latency and pool wait.
type Requests struct {
	N                    int64
	LatencyMs, AcquireMs float64
	GCPauseMs            float64
}

// RequestTime is where the request path's time went (results.RequestTime): the client's view
// of its statements (the load pool's tracer), beside the server's times for the same texts,
// and what of the requests' latency lies outside the pool and the statements. It is nil when
// the requests sent no statement (a queue mode's only enqueue).
func RequestTime(client []stmttime.Timed, server map[string]Timed, req Requests) *results.RequestTime {
	if len(client) == 0 || req.N == 0 {
		return nil
	}
	n := float64(req.N)
	rt := &results.RequestTime{Requests: req.N, LatencyMeanMs: req.LatencyMs, AcquireMeanMs: req.AcquireMs,
		GCPauseMs: units.Round(req.GCPauseMs, 3)}
	var onClient, onServer float64 // ms, over every request
	for _, t := range client {
		q := stmttime.Normalize(t.SQL)
		ms := t.Total.Seconds() * 1000
		st := results.StatementTime{Query: clip(q, 300), Calls: t.Calls,
			ClientMeanMs: units.Round(ms/float64(t.Calls), 4), PerRequest: units.Round(float64(t.Calls)/n, 4)}
		onClient += ms
		if s, ok := server[q]; ok && s.Calls > 0 {
			mean := s.TotalMs / float64(s.Calls)
			st.ServerMeanMs = units.Round(mean, 4)
			onServer += mean * float64(t.Calls)
		}
		rt.Statements = append(rt.Statements, st)
	}
	rt.StatementsMeanMs = units.Round(onClient/n, 4)
	if server != nil {
		rt.ServerMeanMs = units.Round(onServer/n, 4)
	}
	rt.OtherMeanMs = units.Round(rt.LatencyMeanMs-rt.AcquireMeanMs-rt.StatementsMeanMs, 4)
	return rt
}
