// Package dbkind owns what differs between the kinds of database a run can be on, as the
// run's instruments see it: opening the run's database (a temporary PostgreSQL or MariaDB, or
// a server given by URL), the figures each kind keeps of its own work, its lock view, the
// faults that stop its server, where its server's processes are, the probes' ping, the
// calibration and the settings a report records. One implementation per kind (postgres.go,
// mysql.go), chosen once by Open; the engine holds a Kind and never asks which one it is.
package dbkind

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
	"github.com/hotspotkit/hotspotkit/testkit/servers/mariadbserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// Kind is what the kind of database an invocation runs on lends the invocation and its
// runs' instruments: the figures it keeps of its own work, read at a run's start and end; the
// watch on its locks and sessions while the load runs; the faults that stop its server; where
// its server's processes are, for their processor time; the probes' ping; the machine's
// calibration; what a server given by URL has room for; and what each run's config records of
// it. PostgreSQL (postgres, postgres.go) and MySQL or MariaDB (mysqlKind, mysql.go) are
// its two implementations, chosen once with the server (Open), and no instrument asks
// which it has. What the run's SQL handles differ in is the target's (package database).
type Kind interface {
	// Name is the server's kind as a message names it: "PostgreSQL", "MariaDB", "MySQL".
	Name() string
	// FiguresFrom reads the figures a run starts from, once the sessions closed before it
	// (prior) have exited.
	FiguresFrom(ctx context.Context, prior []int64) (Figures, error)
	// Watch starts a run's monitor, on connections of its own that its figures leave out.
	Watch(ctx context.Context, cfg monitor.Config) (Locks, error)
	// Restart stops and starts the temporary server on the same data; crash kills it without a
	// checkpoint and starts it again, and says what recovery did (package faults' Target).
	Restart(ctx context.Context) error
	Crash(ctx context.Context) (string, error)
	// ServerProcess says how to find the server's main process on this machine, for its
	// processor time (package clientcost): nil when it is not this machine's, or not visible.
	ServerProcess(ctx context.Context) func() int
	// Probe opens the probes' connections (package netpath).
	Probe() netpath.Connect
	// Calibrate measures the machine's reference rates before the first run (package
	// Calibrate) on a pool of conns connections and batchConns batch writers, or says in the
	// calibration why it was not.
	Calibrate(ctx context.Context, conns, batchConns int) (*results.Calibration, error)
	// CheckRoom refuses, before any run, an invocation a server given by URL has no room for:
	// need sessions at once, storm of them a conn-storm's (checked only with one, as the
	// temporary server is sized for them instead).
	CheckRoom(ctx context.Context, need, storm int) error
	// Temporary is the Temporary server's first start and its working directory; ok is false
	// on a server given by URL.
	Temporary() (started time.Duration, dir string, ok bool)
	// Record puts in a run's config what the kind says of the run's server (MySQL's kind and
	// InnoDB settings as the server has them).
	Record(c *results.RunConfig)
}

// Figures is the database's figures from a run's start.
type Figures interface {
	// End reads them again once the sessions given (the run's, closed) have exited, and returns
	// what the run cost between the two readings, given what in says once that reading is
	// made, and every statement's server time.
	End(ctx context.Context, sessions []int64, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error)
}

// Locks is a run's monitor as its instruments read it (monitor.Monitor's methods).
type Locks interface {
	Stop(ctx context.Context) (results.LockMonitor, results.Pool)
	Last() results.Sample
	Series() []monitor.Point
	WaitEvents() map[string]int64
	MaxGoroutines() int
	Pooler() results.Pooler
	// Transactions is what it ran on the database, its connections' set-up included.
	Transactions() int64
}

// Options are what opening the run's database takes: the database's options, whichever its
// kind, and the temporary server's settings when no URL is given.
type Options struct {
	Database database.Options
	// MySQL picks MySQL's or MariaDB's kind; PostgreSQL's otherwise.
	MySQL bool
	// Faults are the run's faults, for what only the server can say it can take.
	Faults []faults.Fault

	// The temporary server: its working directory, durability, and room for MaxConnections
	// sessions.
	Dir            string
	Unsafe         bool
	MaxConnections int
	// PostgreSQL's: its binaries, the unprivileged user it runs as when root, and
	// embedded-postgres's download when no local binaries are found (Notice says so first).
	PgBinDir   string
	PgUser     string
	PgDownload pgserver.DownloadConfig
	Notice     func(msg string)
	// MariaDB's: its binaries and InnoDB's hot-row settings.
	MariaDBBinDir       string
	DeadlockDetectOff   bool
	LockWaitTimeoutMs   float64
	FlushLogAtTrxCommit string
}

// BadInput is an error opening the run's database that is the invocation's: a server given by
// URL that is unreachable, refuses us or holds our schema already, or cannot take what the run
// asks of it. It is found before any work started.
type BadInput struct{ Err error }

func (b BadInput) Error() string { return b.Err.Error() }
func (b BadInput) Unwrap() error { return b.Err }

// StopAll stops every temporary server of either kind this process started and has not
// stopped (a panic's last resort; a run stops its own through its target).
func StopAll() error {
	return errors.Join(pgserver.StopAll(), mariadbserver.StopAll())
}

// Open opens the run's database — the temporary server of the kind the options name, or the
// one given by URL — and its kind's part of the instruments: the one place a run learns the
// kind.
func Open(ctx context.Context, o Options) (database.Target, Kind, error) {
	if o.MySQL {
		return openMySQL(ctx, o)
	}
	return openPostgres(ctx, o)
}

// openOn starts the temporary server with start when the options give no URL, and opens the
// run's database with open on it, or on the server of the URL. An error reaching a server given
// by URL is bad input.
func openOn[S database.Server, T any](ctx context.Context, opts database.Options, start func(context.Context) (S, error),
	open func(context.Context, database.Options) (T, error)) (T, S, error) {
	var srv S
	if opts.URL == "" {
		var err error
		if srv, err = start(ctx); err != nil {
			var none T
			return none, srv, err
		}
		opts.Server = srv
	}
	t, err := open(ctx, opts)
	if err != nil && opts.URL != "" {
		err = BadInput{err}
	}
	return t, srv, err
}

// sessionExitDeadline bounds the wait for closed connections' backends to exit (and so flush
// their statistics) before a reading.
const sessionExitDeadline = 5 * time.Second

// errNoServer is a server fault with no temporary server to strike (the plan refuses it).
var errNoServer = errors.New("needs the temporary server")

// crashed is what a crash fault says once the server is back: detail when its log shows the
// crash recovery it must have run, else why not.
func crashed(recovered bool, err error, detail string) (string, error) {
	switch {
	case err != nil:
		return "", err
	case !recovered:
		return "", errors.New("the server came back, but its log shows no crash recovery")
	}
	return detail, nil
}

// pids converts session ids to PostgreSQL's backend PIDs.
func pids(sessions []int64) []uint32 {
	out := make([]uint32, len(sessions))
	for i, s := range sessions {
		out[i] = uint32(s)
	}
	return out
}

// roomError is a conn-storm a server given by URL has no room for.
func roomError(storm, room, maxConns, reserved, open, need int) error {
	return fmt.Errorf("--fault conn-storm of %d sessions: the server has room for %d more (max_connections %d, %d reserved, %d open), and the run needs up to %d with the storm's: fewer sessions, or a server with a higher max_connections",
		storm, room, maxConns, reserved, open, need)
}
