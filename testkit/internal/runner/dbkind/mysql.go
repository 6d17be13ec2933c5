package dbkind

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/innodb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
)

// mysqlKind is MySQL's and MariaDB's dbKind: InnoDB's figures and lock view (package
// innodb), the temporary MariaDB's restart and crash (package mariadbserver), the protocol's
// ping for the probes. No calibration: package calibrate measures PostgreSQL only, and a
// PostgreSQL figure on a MySQL run would compare nothing with anything.
type mysqlKind struct {
	target *database.MySQL
	server *mariadbserver.Server // the temporary server; nil with --mysql-url
	srv    *innodb.Server        // what the server has (innodb.Probe)
	// innodbSettings are the server's hot-row settings as it has them (record).
	innodbSettings map[string]string
	// restarts counts the restarts and crashes the faults struck (the figures' windows).
	restarts atomic.Int64
}

// openMySQL starts the temporary MariaDB or reaches the URL's server, opens the run's
// database on it, and checks what only the server can say: it is InnoDB's, and it can take
// the faults asked for.
func openMySQL(ctx context.Context, o Options) (database.Target, Kind, error) {
	target, srv, err := openOn(ctx, o.Database, func(ctx context.Context) (*mariadbserver.Server, error) { return startMariaDB(ctx, o) }, database.OpenMySQL)
	if err != nil {
		return nil, nil, err
	}
	k := &mysqlKind{target: target, server: srv}
	if err := k.inspect(ctx, o.Faults); err != nil {
		return nil, nil, errors.Join(BadInput{err}, target.Close())
	}
	return target, k, nil
}

// startMariaDB starts the temporary MariaDB with the run's InnoDB settings, sized for the
// invocation's sessions as the temporary PostgreSQL is.
func startMariaDB(ctx context.Context, o Options) (*mariadbserver.Server, error) {
	bins, err := mariadbserver.FindBinaries(o.MariaDBBinDir)
	if err != nil {
		return nil, err
	}
	cfg := mariadbserver.Config{Binaries: bins, TempDir: o.Dir, Unsafe: o.Unsafe,
		MaxConnections: o.MaxConnections, DeadlockDetectOff: o.DeadlockDetectOff,
		LockWaitTimeout: results.Duration(o.LockWaitTimeoutMs)}
	if !o.Unsafe {
		cfg.FlushLogAtTrxCommit = o.FlushLogAtTrxCommit
	}
	return mariadbserver.Start(ctx, cfg)
}

// inspect probes the server (innodb.Probe), reads its hot-row settings, and refuses what it
// cannot do: a statement timeout on MySQL 8 (its max_execution_time bounds a SELECT only, not
// a write: no setting of it would end the writes a statement-timeout fault is there to end).
func (k *mysqlKind) inspect(ctx context.Context, fs []faults.Fault) error {
	q, ok := sqldb.AsSQL(k.target.Admin())
	if !ok {
		return errors.New("the MySQL target's admin connection is not database/sql's")
	}
	srv, err := innodb.Probe(ctx, q)
	if err != nil {
		return err
	}
	k.srv = srv
	for _, f := range fs {
		if f.Kind == faults.StatementTimeout && !srv.MariaDB() {
			return fmt.Errorf("--fault %s: MySQL %s has no timeout of a statement that writes (max_execution_time bounds a SELECT only); MariaDB's max_statement_time does", f, srv.Version)
		}
	}
	info, err := k.target.Info(ctx)
	if err != nil {
		return fmt.Errorf("reading the server's settings: %w", err)
	}
	k.innodbSettings = info.Settings
	return nil
}

func (k *mysqlKind) Name() string { return results.KindName(k.target.Kind()) }

// admin is the admin connection as package innodb queries it.
func (k *mysqlKind) admin() (innodb.Queryer, error) {
	q, ok := sqldb.AsSQL(k.target.Admin())
	if !ok {
		return nil, errors.New("the MySQL target's admin connection is not database/sql's")
	}
	return q, nil
}

// FiguresFrom reads InnoDB's counters on the admin connection; a closed session's figures are
// counted at once (no wait for the sessions of prior).
func (k *mysqlKind) FiguresFrom(ctx context.Context, _ []int64) (Figures, error) {
	q, err := k.admin()
	if err != nil {
		return nil, err
	}
	var cpu func() time.Duration
	if k.server != nil {
		cpu = k.server.CPUTime
	}
	reader, err := innodb.NewReader(ctx, q, k.srv, k.target.Schema(), cpu)
	if err != nil {
		return nil, err
	}
	reader.Restarts(k.restarts.Load)
	start, err := reader.Take(ctx, q)
	if err != nil {
		return nil, err
	}
	return innodbFigures{k: k, reader: reader, start: start}, nil
}

// innodbFigures is InnoDB's counters at the start of a run.
type innodbFigures struct {
	k      *mysqlKind
	reader *innodb.Reader
	start  innodb.Snapshot
}

func (w innodbFigures) End(ctx context.Context, _ []int64, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error) {
	q, err := w.k.admin()
	if err != nil {
		return nil, nil, err
	}
	end, err := w.reader.Take(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return w.reader.Delta(w.start, end, in()), innodb.ServerTimes(w.start, end), nil
}

// Watch samples InnoDB's lock view on a connection of its own, directly to the server, of the
// service's sessions by their ids (the target's; the probe of the service's path is no
// session of the service's, as on PostgreSQL).
func (k *mysqlKind) Watch(ctx context.Context, cfg monitor.Config) (Locks, error) {
	connector, err := k.target.ObserverConnector("hotspotkit-monitor")
	if err != nil {
		return nil, err
	}
	sessions := func() []int64 { return k.target.ServiceSessions(netpath.ProbeApp) }
	view, err := innodb.NewLockView(ctx, connector, k.srv, innodb.Service{Database: k.target.Schema(), Sessions: sessions})
	if err != nil {
		return nil, err
	}
	return viewMonitor{monitor.StartView(ctx, view, cfg)}, nil
}

// viewMonitor is a monitor whose view counts what it ran (its set-up included).
type viewMonitor struct{ *monitor.Monitor }

func (m viewMonitor) Transactions() int64 { return m.Statements() }

func (k *mysqlKind) Restart(ctx context.Context) error {
	if k.server == nil {
		return errNoServer
	}
	k.restarts.Add(1)
	_, err := k.server.Restart(ctx)
	return err
}

func (k *mysqlKind) Crash(ctx context.Context) (string, error) {
	if k.server == nil {
		return "", errNoServer
	}
	k.restarts.Add(1)
	if err := k.server.Kill(); err != nil {
		return "", err
	}
	recovered, err := k.server.Restart(ctx)
	return crashed(recovered, err, "mariadbd killed (SIGKILL: no shutdown, no checkpoint), started again on the same port and data; InnoDB's crash recovery ran")
}

// ServerProcess is the temporary server's mariadbd (one process); a server given by URL's is
// not looked for.
func (k *mysqlKind) ServerProcess(context.Context) func() int {
	if k.server == nil {
		return nil
	}
	return k.server.PID
}

func (k *mysqlKind) Probe() netpath.Connect { return netpath.MySQLProbe(k.target) }

// notCalibrated is why a MySQL run has no calibration.
const notCalibrated = "not calibrated on MySQL: the calibration measures PostgreSQL"

func (k *mysqlKind) Calibrate(context.Context, int, int) (*results.Calibration, error) {
	return &results.Calibration{Skipped: true, Why: notCalibrated}, nil
}

// CheckRoom: max_connections, less the sessions open now and the one MySQL keeps for an
// administrator, must hold the invocation's.
func (k *mysqlKind) CheckRoom(ctx context.Context, need, storm int) error {
	if storm == 0 || k.server != nil {
		return nil
	}
	var maxConns, open int
	err := k.target.Admin().QueryRow(ctx, "SELECT @@max_connections, (SELECT COUNT(*) FROM information_schema.PROCESSLIST)").Scan(&maxConns, &open)
	if err != nil {
		return fmt.Errorf("reading the server's max_connections for --fault conn-storm: %w", err)
	}
	if room := maxConns - open; need > room {
		return roomError(storm, room, maxConns, 0, open, need)
	}
	return nil
}

func (k *mysqlKind) Temporary() (time.Duration, string, bool) {
	if k.server == nil {
		return 0, "", false
	}
	return k.server.StartDuration(), k.server.Dir(), true
}

// Record puts the server's kind and its InnoDB settings, as it has them, in the run's config:
// on the temporary server they are the flags', read back; on a server given by URL its own.
func (k *mysqlKind) Record(c *results.RunConfig) {
	s := k.innodbSettings
	c.Database = k.target.Kind()
	c.InnoDBDeadlockDetect = strings.ToLower(s["innodb_deadlock_detect"])
	if secs, err := strconv.Atoi(s["innodb_lock_wait_timeout"]); err == nil {
		c.InnoDBLockWaitTimeoutMs = float64(secs) * 1000
	}
	c.InnoDBFlushLogAtTrxCommit = s["innodb_flush_log_at_trx_commit"]
}
