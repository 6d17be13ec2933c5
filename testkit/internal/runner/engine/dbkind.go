package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
)

// dbKind is what the kind of database an invocation runs on lends the invocation and its
// runs' instruments: the figures it keeps of its own work, read at a run's start and end; the
// watch on its locks and sessions while the load runs; the faults that stop its server; where
// its server's processes are, for their processor time; the probes' ping; the machine's
// calibration; what a server given by URL has room for; and what each run's config records of
// it. PostgreSQL (postgres, dbkind_pg.go) and MySQL or MariaDB (mysqlKind, dbkind_mysql.go) are
// its two implementations, chosen once with the server (openDatabase), and no instrument asks
// which it has. What the run's SQL handles differ in is the target's (package database).
type dbKind interface {
	// name is the server's kind as a message names it: "PostgreSQL", "MariaDB", "MySQL".
	name() string
	// figuresFrom reads the figures a run starts from, once the sessions closed before it
	// (prior) have exited.
	figuresFrom(ctx context.Context, prior []int64) (figuresWindow, error)
	// watch starts a run's monitor, on connections of its own that its figures leave out.
	watch(ctx context.Context, cfg monitor.Config) (locks, error)
	// restart stops and starts the temporary server on the same data; crash kills it without a
	// checkpoint and starts it again, and says what recovery did (package faults' Target).
	restart(ctx context.Context) error
	crash(ctx context.Context) (string, error)
	// serverProcess says how to find the server's main process on this machine, for its
	// processor time (package clientcost): nil when it is not this machine's, or not visible.
	serverProcess(ctx context.Context) func() int
	// probe opens the probes' connections (package netpath).
	probe() netpath.Connect
	// calibrate measures the machine's reference rates before the first run (package
	// calibrate) on a pool of conns connections and batchConns batch writers, or says in the
	// calibration why it was not.
	calibrate(ctx context.Context, conns, batchConns int) (*results.Calibration, error)
	// checkRoom refuses, before any run, an invocation a server given by URL has no room for:
	// need sessions at once, storm of them a conn-storm's (checked only with one, as the
	// temporary server is sized for them instead).
	checkRoom(ctx context.Context, need, storm int) error
	// temporary is the temporary server's first start and its working directory; ok is false
	// on a server given by URL.
	temporary() (started time.Duration, dir string, ok bool)
	// record puts in a run's config what the kind says of the run's server (MySQL's kind and
	// InnoDB settings as the server has them).
	record(c *results.RunConfig)
}

// figuresWindow is the database's figures from a run's start.
type figuresWindow interface {
	// end reads them again once the sessions given (the run's, closed) have exited, and returns
	// what the run cost between the two readings, given what in says once that reading is
	// made, and every statement's server time.
	end(ctx context.Context, sessions []int64, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error)
}

// locks is a run's monitor as its instruments read it (monitor.Monitor's methods).
type locks interface {
	Stop(ctx context.Context) (results.LockMonitor, results.Pool)
	Last() results.Sample
	Series() []monitor.Point
	WaitEvents() map[string]int64
	MaxGoroutines() int
	Pooler() results.Pooler
	// transactions is what it ran on the database, its connections' set-up included.
	transactions() int64
}

// openDatabase opens the run's database — the temporary server of the kind the flags name, or
// the one given by URL — and its kind's part of the instruments: the one place the engine
// learns the kind. An error reaching a server given by URL is bad input (usageError).
func (e *engine) openDatabase(ctx context.Context) error {
	open := e.openPostgres
	if e.cfg.OnMySQL() {
		open = e.openMySQL
	}
	target, kind, err := open(ctx)
	if err != nil {
		return err
	}
	e.target, e.db = target, kind
	return nil
}

// databaseOptions are the run's database's options, whichever its kind.
func (e *engine) databaseOptions() database.Options {
	c := e.cfg
	return database.Options{URL: c.DatabaseURL(), Schema: c.Schema, KeepSchema: c.KeepsSchema(), ReuseSchema: c.ReuseSchema, SQL: e.info.SQL}
}

// openOn starts the temporary server with start when the flags give no URL, and opens the
// run's database with open on it, or on the server of the URL. An error reaching a server given
// by URL is bad input, found before any work started (it is unreachable, refuses us, or holds
// our schema already).
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
		err = usageError{err}
	}
	return t, srv, err
}

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
