package innodb

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
)

// What a run's figures count on InnoDB (Reader, Delta), and where each is read:
//
//   - redo bytes: the advance of the log sequence number — Innodb_lsn_current (MariaDB),
//     Innodb_redo_log_current_lsn (MySQL 8.0.30+), INNODB_METRICS' log_lsn_current, or the
//     "Log sequence number" of SHOW ENGINE INNODB STATUS, the first the server has —
//     server-wide: every session's writes and the server's own (purge, persistent statistics);
//     the observers write nothing. The LSN survives a restart.
//   - commits and rollbacks: INNODB_METRICS' trx_rw_commits and trx_rollbacks, turned on when
//     they are off (SET GLOBAL innodb_monitor_enable, which needs SUPER; a restart turns them
//     off again). Read-write transactions only, server-wide, the server's own included (its
//     persistent statistics are written in transactions of their own); the observers only
//     read, so none is theirs. Neither status counter counts a transaction: Com_commit counts
//     COMMIT statements (an autocommit statement none), Handler_commit every statement's
//     commit as well as the transaction's (a transaction of two UPDATEs three times).
//   - rows written: performance_schema.table_io_waits_summary_by_table's inserts, updates and
//     deletes of each table of the run's database, every session's (a row whose UPDATE
//     changed nothing is not counted); needs performance_schema.
//   - row lock waits and their time (Innodb_row_lock_waits, Innodb_row_lock_time),
//     deadlocks (INNODB_METRICS' lock_deadlocks, on by default; else MariaDB's
//     Innodb_deadlocks), lock wait timeouts (INNODB_METRICS' lock_timeouts, on by default),
//     fsyncs (Innodb_data_fsyncs, and MySQL's Innodb_os_log_fsyncs): server-wide.
//   - statements: performance_schema.events_statements_summary_by_digest for the run's
//     database (the sessions whose default database it is), transaction control left out as
//     on PostgreSQL; the monitor's are left out (Untrack), the reader's own by their text (they
//     read information_schema and performance_schema, or are SHOW and SET).
//   - sessions: Connections, the connection attempts to the server.
//   - the server's processor time, where the caller can read it (a temporary server's
//     mariadbd).
//
// A restart in the window (Uptime fell, or the caller caused one: Reader.Restarts) is told in
// InnoDBStats.Restarted: the counters then
// count from the restart, and those the reader turned on are not read.

// The sources of the redo's LSN (results.Database.RedoSource).
const (
	RedoLSNCurrent   = "innodb_lsn_current"
	RedoLogLSN       = "innodb_redo_log_current_lsn"
	RedoMetrics      = "innodb_metrics"
	RedoEngineStatus = "engine_status"
)

// CommitSource is results.Database.CommitSource on InnoDB.
const CommitSource = "trx_rw_commits"

// The INNODB_METRICS counters read, and the figure each gives.
var counters = []struct{ name, figure string }{
	{"trx_rw_commits", "xact_commit"},
	{"trx_rollbacks", "xact_rollback"},
	{"lock_deadlocks", "innodb.deadlocks"},
	{"lock_timeouts", "innodb.lock_wait_timeouts"},
}

// statusNames are the status variables a snapshot reads.
var statusNames = []string{"Uptime", "Connections", "Innodb_lsn_current", "Innodb_redo_log_current_lsn",
	"Innodb_row_lock_waits", "Innodb_row_lock_time", "Innodb_deadlocks", "Innodb_data_fsyncs", "Innodb_os_log_fsyncs"}

// Reader reads the figures on one connection of the engine's (never the load's). NewReader
// finds what the server gives; Take reads it; Delta is the window between two readings.
type Reader struct {
	srv      *Server
	database string
	cpu      func() time.Duration
	// metrics are the INNODB_METRICS counters read (on), enabled those the reader turned on.
	metrics, enabled []string
	// status are the status variables of statusNames the server has.
	status map[string]bool
	redo   string
	// notRead are the figures the server does not give, with the reason.
	notRead map[string]string
	// restarts, when set, counts the server's restarts that the caller caused (Restarts).
	restarts func() int64
}

// Restarts has the reader tell a restart in a window by count, besides the server's Uptime:
// count says how many restarts of the server the caller has caused so far (a fault's). A
// restart within a second or two of a reading is not always told by the Uptime alone, which
// the server counts in whole seconds.
func (r *Reader) Restarts(count func() int64) { r.restarts = count }

// NewReader inspects the server on q (srv: Probe's) for the figures of the run's database,
// and turns on the INNODB_METRICS counters it reads where they are off. cpu, when not nil,
// reads the server process's processor time so far.
func NewReader(ctx context.Context, q Queryer, srv *Server, database string, cpu func() time.Duration) (*Reader, error) {
	r := &Reader{srv: srv, database: database, cpu: cpu, status: map[string]bool{}, notRead: map[string]string{}}
	st, err := readStatus(ctx, q)
	if err != nil {
		return nil, err
	}
	for name := range st {
		r.status[name] = true
	}
	wanted := []string{}
	for _, c := range counters {
		wanted = append(wanted, c.name)
	}
	switch {
	case r.status["Innodb_lsn_current"]:
		r.redo = RedoLSNCurrent
	case r.status["Innodb_redo_log_current_lsn"]:
		r.redo = RedoLogLSN
	default:
		wanted = append(wanted, "log_lsn_current")
	}
	on, err := r.metricsOn(ctx, q, wanted)
	if err != nil {
		return nil, err
	}
	for _, name := range wanted {
		why, ok := on[name]
		if ok && why == "" {
			r.metrics = append(r.metrics, name)
			continue
		}
		if !ok {
			why = "INNODB_METRICS has no " + name
		}
		switch {
		case name == "log_lsn_current":
			// The engine's status is the redo's last source (below).
		case name == "lock_deadlocks" && r.status["Innodb_deadlocks"]:
			// Innodb_deadlocks counts the same (MariaDB).
		default:
			r.notRead[figureOf(name)] = why
		}
	}
	if r.redo == "" {
		if slices.Contains(r.metrics, "log_lsn_current") {
			r.redo = RedoMetrics
		} else if _, err := engineLSN(ctx, q); err == nil {
			r.redo = RedoEngineStatus
		} else {
			r.notRead["redo_bytes"] = "the server shows no LSN: no Innodb_lsn_current or Innodb_redo_log_current_lsn, INNODB_METRICS' log_lsn_current off, and SHOW ENGINE INNODB STATUS " + err.Error()
		}
	}
	if !srv.PerformanceSchema {
		r.notRead["tables"] = "performance_schema is off: rows written are counted in table_io_waits_summary_by_table"
		r.notRead["statements"] = "performance_schema is off: statements are counted in events_statements_summary_by_digest"
	}
	return r, nil
}

// figureOf is the figure an INNODB_METRICS counter gives.
func figureOf(metric string) string {
	for _, c := range counters {
		if c.name == metric {
			return c.figure
		}
	}
	return metric
}

// metricsOn says, of the counters wanted, which are on ("") once the reader turned on those
// that were off, and why the others are not (absent: INNODB_METRICS has no such counter).
func (r *Reader) metricsOn(ctx context.Context, q Queryer, wanted []string) (map[string]string, error) {
	args := make([]any, len(wanted))
	for i, n := range wanted {
		args[i] = n
	}
	out := map[string]string{}
	err := queryEach(ctx, q, "INNODB_METRICS", func(rs *sql.Rows) error {
		var name string
		var on bool
		if err := rs.Scan(&name, &on); err != nil {
			return err
		}
		out[name] = map[bool]string{true: "", false: "off"}[on]
		return nil
	}, "SELECT NAME, "+r.srv.metricsEnabled+" FROM information_schema.INNODB_METRICS WHERE NAME IN ("+sqldb.Marks(len(wanted))+")", args...)
	if err != nil {
		return nil, err
	}
	for _, name := range wanted {
		if out[name] != "off" {
			continue
		}
		// The names are this package's own: safe in the statement's text.
		if _, err := q.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = '"+name+"'"); err != nil {
			out[name] = "INNODB_METRICS' " + name + " is off and turning it on was refused: " + err.Error()
			continue
		}
		out[name] = ""
		r.enabled = append(r.enabled, name)
	}
	return out, nil
}

// readStatus reads the status variables of statusNames the server has.
func readStatus(ctx context.Context, q Queryer) (map[string]int64, error) {
	args := make([]any, len(statusNames))
	for i, n := range statusNames {
		args[i] = n
	}
	out := map[string]int64{}
	err := queryEach(ctx, q, "the server's status", func(rs *sql.Rows) error {
		var name, value string
		if err := rs.Scan(&name, &value); err != nil {
			return err
		}
		for _, n := range statusNames { // the server's spelling may differ in case
			if strings.EqualFold(n, name) {
				name = n
			}
		}
		if v, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = v
		}
		return nil
	}, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+sqldb.Marks(len(statusNames))+")", args...)
	return out, err
}

// lsnLine is the "Log sequence number" line of SHOW ENGINE INNODB STATUS.
var lsnLine = regexp.MustCompile(`(?m)^Log sequence number\s+(\d+)`)

// engineLSN reads the LSN from SHOW ENGINE INNODB STATUS (it needs PROCESS).
func engineLSN(ctx context.Context, q Queryer) (int64, error) {
	var typ, name, status string
	if err := q.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return 0, fmt.Errorf("failed: %w", err)
	}
	m := lsnLine.FindStringSubmatch(status)
	if m == nil {
		return 0, fmt.Errorf("shows no Log sequence number")
	}
	return strconv.ParseInt(m[1], 10, 64)
}

// Snapshot is one reading of the counters.
type Snapshot struct {
	At time.Time
	// Uptime is the server's, in seconds: a restart in the window is a smaller one.
	Uptime int64
	// LSN is the redo's log sequence number (0 when not read).
	LSN     int64
	status  map[string]int64
	metrics map[string]int64
	tables  map[string]tableRows
	// digests are the statements of the run's database by digest (nil: not read).
	digests map[string]dbstats.Statement
	cpu     time.Duration
	// restarts is the caller's count of restarts (Reader.Restarts).
	restarts int64
}

// tableRows are one table's row operations (performance_schema).
type tableRows struct{ inserted, updated, deleted int64 }

// Take reads every counter.
func (r *Reader) Take(ctx context.Context, q Queryer) (Snapshot, error) {
	s := Snapshot{At: time.Now()}
	var err error
	if s.status, err = readStatus(ctx, q); err != nil {
		return s, err
	}
	s.Uptime = s.status["Uptime"]
	if s.metrics, err = r.readMetrics(ctx, q); err != nil {
		return s, err
	}
	switch r.redo {
	case RedoLSNCurrent:
		s.LSN = s.status["Innodb_lsn_current"]
	case RedoLogLSN:
		s.LSN = s.status["Innodb_redo_log_current_lsn"]
	case RedoMetrics:
		s.LSN = s.metrics["log_lsn_current"]
	case RedoEngineStatus:
		if s.LSN, err = engineLSN(ctx, q); err != nil {
			return s, fmt.Errorf("innodb: SHOW ENGINE INNODB STATUS %w", err)
		}
	}
	if r.srv.PerformanceSchema {
		if s.tables, err = r.readTables(ctx, q); err != nil {
			return s, err
		}
		if s.digests, err = r.readDigests(ctx, q); err != nil {
			return s, err
		}
	}
	if r.cpu != nil {
		s.cpu = r.cpu()
	}
	if r.restarts != nil {
		s.restarts = r.restarts()
	}
	return s, nil
}

func (r *Reader) readMetrics(ctx context.Context, q Queryer) (map[string]int64, error) {
	out := map[string]int64{}
	if len(r.metrics) == 0 {
		return out, nil
	}
	args := make([]any, len(r.metrics))
	for i, n := range r.metrics {
		args[i] = n
	}
	err := queryEach(ctx, q, "INNODB_METRICS", func(rs *sql.Rows) error {
		var name string
		var n int64
		if err := rs.Scan(&name, &n); err != nil {
			return err
		}
		out[name] = n
		return nil
	}, "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ("+sqldb.Marks(len(r.metrics))+")", args...)
	return out, err
}

func (r *Reader) readTables(ctx context.Context, q Queryer) (map[string]tableRows, error) {
	out := map[string]tableRows{}
	err := queryEach(ctx, q, "performance_schema.table_io_waits_summary_by_table", func(rs *sql.Rows) error {
		var name string
		var t tableRows
		if err := rs.Scan(&name, &t.inserted, &t.updated, &t.deleted); err != nil {
			return err
		}
		out[name] = t
		return nil
	}, `SELECT OBJECT_NAME, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE
		FROM performance_schema.table_io_waits_summary_by_table WHERE OBJECT_TYPE = 'TABLE' AND OBJECT_SCHEMA = ?`, r.database)
	return out, err
}

// observing matches the texts of the observers' own statements: never the run's.
var observing = regexp.MustCompile(`(?i)information_schema|performance_schema`)

func (r *Reader) readDigests(ctx context.Context, q Queryer) (map[string]dbstats.Statement, error) {
	out := map[string]dbstats.Statement{}
	err := queryEach(ctx, q, "performance_schema.events_statements_summary_by_digest", func(rs *sql.Rows) error {
		var digest string
		var s dbstats.Statement
		var picoseconds uint64
		if err := rs.Scan(&digest, &s.Query, &s.Calls, &picoseconds, &s.Rows); err != nil {
			return err
		}
		if observing.MatchString(s.Query) {
			return nil
		}
		s.TotalMs = float64(picoseconds) / 1e9
		s.Control = dbstats.IsControl(s.Query)
		out[digest] = s
		return nil
	}, `SELECT COALESCE(DIGEST, ''), COALESCE(DIGEST_TEXT, ''), COUNT_STAR, SUM_TIMER_WAIT, SUM_ROWS_AFFECTED + SUM_ROWS_SENT
		FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = ?`, r.database)
	return out, err
}

// DatabaseWide names the figures that count every session of the server (or, for the
// statements, of the run's database), not the run's alone.
var DatabaseWide = []string{"redo_bytes", "xact_commit", "xact_rollback", "sessions", "server_cpu_s", "innodb",
	"statements", "per_request.redo_bytes_per_request", "per_request.commits_per_request",
	"per_request.statements_per_request", "per_request.fsyncs_per_request", "per_request.server_cpu_us_per_request"}

// Delta is what the run cost between start and end. in's ObserverTransactions are not
// subtracted: the commits counted are read-write transactions, and the observers only read.
func (r *Reader) Delta(start, end Snapshot, in dbstats.Inputs) *results.Database {
	restarted := end.Uptime+2 < start.Uptime+int64(end.At.Sub(start.At).Seconds()) || end.restarts != start.restarts
	// since is a counter's count in the window: from the restart when there was one.
	since := func(s, e int64) int64 {
		if restarted || e < s {
			return e
		}
		return e - s
	}
	d := &results.Database{
		RedoSource:   r.redo,
		CommitSource: CommitSource,
		WaitEvents:   in.WaitEvents,
		DatabaseWide: DatabaseWide,
		Shared:       in.Shared,
		Tables:       map[string]results.TableStats{},
	}
	if r.redo != "" {
		d.RedoBytes = max(end.LSN-start.LSN, 0)
	}
	notRead := map[string]string{}
	for k, v := range r.notRead {
		notRead[k] = v
	}
	metric := func(name string) (int64, bool) {
		if !slices.Contains(r.metrics, name) {
			return 0, false
		}
		if restarted && slices.Contains(r.enabled, name) {
			notRead[figureOf(name)] = "the server restarted in the window, and INNODB_METRICS' " + name + ", which the run turned on, was off again"
			return 0, false
		}
		return since(start.metrics[name], end.metrics[name]), true
	}
	status := func(name string) int64 { return since(start.status[name], end.status[name]) }
	d.XactCommit, _ = metric("trx_rw_commits")
	d.XactRollback, _ = metric("trx_rollbacks")
	d.Sessions = status("Connections")
	i := &results.InnoDBStats{
		RowLockWaits:  status("Innodb_row_lock_waits"),
		RowLockTimeMs: status("Innodb_row_lock_time"),
		DataFsyncs:    status("Innodb_data_fsyncs"),
		LogFsyncs:     status("Innodb_os_log_fsyncs"),
		Restarted:     restarted,
	}
	var ok bool
	if i.Deadlocks, ok = metric("lock_deadlocks"); !ok && r.status["Innodb_deadlocks"] {
		i.Deadlocks = status("Innodb_deadlocks")
		delete(notRead, "innodb.deadlocks")
	}
	i.LockWaitTimeouts, _ = metric("lock_timeouts")
	d.InnoDB = i
	if r.cpu != nil {
		cpu := end.cpu - start.cpu
		if cpu < 0 {
			cpu = end.cpu
		}
		d.ServerCPUSeconds = units.Round(cpu.Seconds(), 6)
	}
	for name, e := range end.tables {
		s := start.tables[name]
		if restarted {
			s = tableRows{}
		}
		t := results.TableStats{Inserted: since(s.inserted, e.inserted), Updated: since(s.updated, e.updated), Deleted: since(s.deleted, e.deleted)}
		if t.Inserted+t.Updated+t.Deleted == 0 && !slices.Contains(in.HotTables, name) {
			continue
		}
		d.Tables[name] = t
	}
	if end.tables != nil {
		for _, name := range in.HotTables {
			if _, ok := d.Tables[name]; !ok {
				d.Tables[name] = results.TableStats{} // not opened in the window: nothing written
			}
		}
	}
	if start.digests != nil && end.digests != nil {
		from := start.digests
		if restarted {
			from = nil
		}
		d.Statements = dbstats.StatementsDelta(from, end.digests, in.Top)
	}
	if len(notRead) > 0 {
		d.NotRead = notRead
	}
	d.PerRequest = d.Per(in.Requests)
	return d
}

// ServerTimes is every statement's calls and server time between start and end, by its
// DigestKey, transaction control included (nil without performance_schema).
func ServerTimes(start, end Snapshot) map[string]dbstats.Timed {
	return dbstats.StatementTimes(start.digests, end.digests, DigestKey)
}
