// Package innodb owns what a MySQL or MariaDB server's InnoDB shows a run, as packages monitor
// and dbstats own PostgreSQL's: the lock view the monitor samples while the load runs
// (LockView: lock waiters by table and row, the longest wait, the blocking transaction, the
// service's sessions and what they do), and the run's figures read at its start and end
// (Reader: redo bytes, commits, rows written, row lock waits, deadlocks, lock wait timeouts,
// fsyncs, statement digests, the server's processor time). What the server has is probed once
// (Probe) and each reading is written for it; nothing here changes a database, and the one
// server setting it may change is to turn on InnoDB's own counters (Reader).
//
// Which server it was run against: MariaDB 10.11, the Debian package this kit's temporary
// MariaDB runs, in this package's tests. MySQL 8's side — performance_schema.data_locks and
// data_lock_waits for the lock view, Innodb_redo_log_current_lsn (8.0.30) or INNODB_METRICS'
// log_lsn_current or SHOW ENGINE INNODB STATUS for the redo, Innodb_os_log_fsyncs, the
// INNODB_METRICS column STATUS — is written to MySQL 8.0's documented schema and has not been
// run against a MySQL 8 server: none could be installed where it was written. Probe chooses by
// what the server has, never by its version string, so a MariaDB without the
// information_schema lock tables would take the MySQL 8 path, equally untested.
//
// The sessions are read from information_schema.PROCESSLIST on both (deprecated in MySQL 8.0,
// still there in 8.4, and needing PROCESS to show other users' sessions).
//
// The two lock views differ (InnoDB's own, both): MariaDB (and MySQL 5.7) show the waits in
// information_schema.INNODB_LOCK_WAITS and INNODB_LOCKS; MySQL 8 moved them to
// performance_schema.data_lock_waits and data_locks, which need performance_schema on. Both
// list, for every waiting lock, every lock ahead of it that it conflicts with: N sessions
// queued on one row are N(N+1)/2 pairs, which the server builds at each read (MariaDB keeps
// them for 0.1 s and caps them at 16 MiB). The lock view reads only each waiter's own lock and
// its granted blockers, but the server's cost of building the pairs is the view's price at a
// thousand waiters.
package innodb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Queryer is a database/sql handle on the server: *sql.DB, *sql.Conn or *sql.Tx (what
// sqldb.AsSQL returns), with ? placeholders.
type Queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Locks names which tables hold InnoDB's lock waits on a server.
type Locks string

const (
	// InformationSchemaLocks are information_schema.INNODB_LOCK_WAITS and INNODB_LOCKS
	// (MariaDB; MySQL 5.7).
	InformationSchemaLocks Locks = "information_schema"
	// PerformanceSchemaLocks are performance_schema.data_lock_waits and data_locks (MySQL 8).
	PerformanceSchemaLocks Locks = "performance_schema"
)

// Server is what a server offers the lock view and the figures, probed once (Probe).
type Server struct {
	// Version is @@version ("10.11.19-MariaDB-0+deb12u1", "8.0.36").
	Version string
	// Locks says where its lock waits are shown ("" when nowhere this package reads).
	Locks Locks
	// PerformanceSchema is @@performance_schema: statement digests, the tables' row counts
	// and the sessions' program names need it.
	PerformanceSchema bool
	// StatementTimeMs: information_schema.PROCESSLIST has TIME_MS (MariaDB), the waiting
	// statement's time in ms; without it a wait is timed from INNODB_TRX.trx_wait_started, to
	// the second.
	StatementTimeMs bool
	// metricsEnabled is INNODB_METRICS' test of an enabled counter: MariaDB's column ENABLED
	// (1), MySQL's STATUS ('enabled').
	metricsEnabled string
	// globalStatus is the table of the server's status variables for a statement's
	// subquery: information_schema.GLOBAL_STATUS (MariaDB, MySQL 5.7), else
	// performance_schema.global_status (MySQL 8).
	globalStatus string
	// connectAttrs: performance_schema.session_connect_attrs is readable (sessions by program).
	connectAttrs bool
}

// MariaDB reports whether the server says it is MariaDB.
func (s *Server) MariaDB() bool { return strings.Contains(s.Version, "MariaDB") }

// Probe asks the server on q what it has.
func Probe(ctx context.Context, q Queryer) (*Server, error) {
	s := &Server{}
	if err := q.QueryRowContext(ctx, "SELECT @@version, @@performance_schema").Scan(&s.Version, &s.PerformanceSchema); err != nil {
		return nil, fmt.Errorf("innodb: reading the server's version: %w", err)
	}
	tables := map[string]bool{}
	err := queryEach(ctx, q, "the lock tables", func(r *sql.Rows) error {
		var schema, name string
		if err := r.Scan(&schema, &name); err != nil {
			return err
		}
		tables[schema+"."+name] = true
		return nil
	}, `SELECT LOWER(TABLE_SCHEMA), LOWER(TABLE_NAME) FROM information_schema.TABLES
		WHERE (LOWER(TABLE_SCHEMA) = 'information_schema' AND LOWER(TABLE_NAME) IN ('innodb_lock_waits', 'innodb_locks', 'innodb_trx', 'innodb_metrics', 'global_status'))
		   OR (LOWER(TABLE_SCHEMA) = 'performance_schema' AND LOWER(TABLE_NAME) IN ('data_lock_waits', 'data_locks', 'session_connect_attrs', 'global_status'))`)
	if err != nil {
		return nil, err
	}
	if !tables["information_schema.innodb_trx"] || !tables["information_schema.innodb_metrics"] {
		return nil, errors.New("innodb: the server has no information_schema.INNODB_TRX or INNODB_METRICS: is InnoDB its engine?")
	}
	switch {
	case tables["information_schema.innodb_lock_waits"] && tables["information_schema.innodb_locks"]:
		s.Locks = InformationSchemaLocks
	case s.PerformanceSchema && tables["performance_schema.data_lock_waits"] && tables["performance_schema.data_locks"]:
		s.Locks = PerformanceSchemaLocks
	}
	s.connectAttrs = s.PerformanceSchema && tables["performance_schema.session_connect_attrs"]
	s.globalStatus = "information_schema.GLOBAL_STATUS"
	if !tables["information_schema.global_status"] {
		s.globalStatus = "performance_schema.global_status"
	}
	err = queryEach(ctx, q, "the columns of PROCESSLIST and INNODB_METRICS", func(r *sql.Rows) error {
		var table, column string
		if err := r.Scan(&table, &column); err != nil {
			return err
		}
		switch column {
		case "TIME_MS":
			s.StatementTimeMs = true
		case "ENABLED":
			s.metricsEnabled = "ENABLED = 1"
		case "STATUS":
			s.metricsEnabled = "STATUS = 'enabled'"
		}
		return nil
	}, `SELECT UPPER(TABLE_NAME), UPPER(COLUMN_NAME) FROM information_schema.COLUMNS
		WHERE LOWER(TABLE_SCHEMA) = 'information_schema'
		  AND ((UPPER(TABLE_NAME) = 'PROCESSLIST' AND UPPER(COLUMN_NAME) = 'TIME_MS')
		    OR (UPPER(TABLE_NAME) = 'INNODB_METRICS' AND UPPER(COLUMN_NAME) IN ('ENABLED', 'STATUS')))`)
	if err != nil {
		return nil, err
	}
	if s.metricsEnabled == "" {
		return nil, errors.New("innodb: information_schema.INNODB_METRICS has neither ENABLED nor STATUS")
	}
	return s, nil
}

// queryEach runs query on q and calls fn for each row; its error says what was read.
func queryEach(ctx context.Context, q Queryer, what string, fn func(*sql.Rows) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err == nil {
		err = scanEach(rows, fn)
	}
	if err != nil {
		return fmt.Errorf("innodb: reading %s: %w", what, err)
	}
	return nil
}

// scanEach calls fn for each row, then closes rows and returns the first error.
func scanEach(rows *sql.Rows, fn func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// splitTable reads MariaDB's INNODB_LOCKS.lock_table, "`db`.`table`" (a partition's
// "/* Partition `p` */" after it is dropped), as its schema and name; a text of another shape
// is returned whole as the name.
func splitTable(s string) (schema, name string) {
	parts := []string{}
	i := 0
	for i < len(s) && len(parts) < 2 {
		if s[i] != '`' {
			if len(parts) == 1 && s[i] == '.' {
				i++
				continue
			}
			break
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(s); j++ {
			if s[j] == '`' {
				if j+1 < len(s) && s[j+1] == '`' {
					b.WriteByte('`')
					j++
					continue
				}
				break
			}
			b.WriteByte(s[j])
		}
		if j >= len(s) {
			return "", s
		}
		parts = append(parts, b.String())
		i = j + 1
	}
	if len(parts) != 2 {
		return "", s
	}
	return parts[0], parts[1]
}
