package engine

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// dbKind is what the kind of database an invocation runs on lends the run's instruments: the
// figures it keeps of its own work, read at a run's start and end; the watch on its locks and
// sessions while the load runs; the faults that stop its server; and where its server's
// processes are, for their processor time. PostgreSQL is the one kind
// today (postgres); another kind is another implementation, chosen once with the server, and
// no instrument asks which it has.
type dbKind interface {
	// figuresFrom reads the figures a run starts from, once the sessions closed before it
	// (prior) have exited.
	figuresFrom(ctx context.Context, prior []uint32) (figuresWindow, error)
	// watch starts a run's monitor, on connections of its own that its figures leave out.
	watch(ctx context.Context, cfg monitor.Config) (locks, error)
	// restart stops and starts the temporary server on the same data; crash kills it without a
	// checkpoint and starts it again, and says what recovery did (package faults' Target).
	restart(ctx context.Context) error
	crash(ctx context.Context) (string, error)
	// serverProcess says how to find the server's main process on this machine, for its
	// processor time (package clientcost): nil when it is not this machine's, or not visible.
	serverProcess(ctx context.Context) func() int
}

// figuresWindow is the database's figures from a run's start.
type figuresWindow interface {
	// end reads them again once the sessions given (the run's, closed) have exited, and returns
	// what the run cost between the two readings, given what in says once that reading is
	// made, and every statement's server time.
	end(ctx context.Context, sessions []uint32, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error)
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

// postgres is PostgreSQL's dbKind: pg_stat_* and pg_stat_statements for the figures (package
// dbstats), pg_locks and pg_stat_activity for the monitor (package monitor), the temporary
// server's restart and crash (package pgserver).
type postgres struct {
	target *database.Target
	server *pgserver.Server // the temporary server; nil with --postgres-url
}

func (p postgres) figuresFrom(ctx context.Context, prior []uint32) (figuresWindow, error) {
	admin := p.target.Admin()
	reader, err := dbstats.NewReader(ctx, admin, p.target.Schema())
	if err != nil {
		return nil, err
	}
	// The calibration's and earlier runs' connections are closed: their backends may still be
	// flushing what they did.
	start, err := reader.Take(ctx, admin, prior, sessionExitDeadline)
	if err != nil {
		return nil, err
	}
	return pgFigures{target: p.target, reader: reader, start: start}, nil
}

// pgFigures is PostgreSQL's statistics at the start of a run.
type pgFigures struct {
	target *database.Target
	reader *dbstats.Reader
	start  dbstats.Snapshot
}

func (w pgFigures) end(ctx context.Context, sessions []uint32, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error) {
	end, err := w.reader.Take(ctx, w.target.Admin(), sessions, sessionExitDeadline)
	if err != nil {
		return nil, nil, err
	}
	return w.reader.Delta(w.start, end, in()), dbstats.ServerTimes(w.start, end), nil
}

// watch opens the monitor's connections directly (it observes: never through --db-rtt's proxy
// or the pooler), each with its statements left out of pg_stat_statements (dbstats.Untrack)
// and its set-up counted.
func (p postgres) watch(ctx context.Context, cfg monitor.Config) (locks, error) {
	var setups atomic.Int64
	mon, err := monitor.Start(ctx, func(ctx context.Context) (*pgx.Conn, error) {
		conn, err := p.target.ConnectDirect(ctx, "hotspotkit-monitor")
		if err == nil {
			dbstats.Untrack(ctx, conn)
			setups.Add(1)
		}
		return conn, err
	}, cfg)
	if err != nil {
		return nil, err
	}
	return pgMonitor{Monitor: mon, setups: &setups}, nil
}

// pgMonitor is PostgreSQL's monitor with the set-up of its connections counted.
type pgMonitor struct {
	*monitor.Monitor
	setups *atomic.Int64
}

func (m pgMonitor) transactions() int64 { return m.Statements() + m.setups.Load() }

func (p postgres) restart(ctx context.Context) error { return p.server.Restart(ctx) }

// serverProcess is the temporary server's postmaster, whichever it is now (a fault restarts
// it). A --postgres-url server's is the parent of the admin session's backend when that
// process is this machine's postmaster: a process of that number that started when the
// server did (pg_postmaster_start_time, within 2 s), so that the number of a process in
// another host's or container's namespace is never read here.
func (p postgres) serverProcess(ctx context.Context) func() int {
	if p.server != nil {
		return p.server.PostmasterPID
	}
	var backend int
	var started time.Time
	if err := p.target.Admin().QueryRow(ctx, "SELECT pg_backend_pid(), pg_postmaster_start_time()").Scan(&backend, &started); err != nil {
		return nil
	}
	f, ok := serverproc.Stat(backend)
	if !ok || len(f) < 2 {
		return nil
	}
	postmaster, err := strconv.Atoi(f[1])
	if err != nil {
		return nil
	}
	if at, ok := serverproc.StartTime(postmaster); !ok || at.Sub(started).Abs() > 2*time.Second {
		return nil
	}
	return func() int { return postmaster }
}

func (p postgres) crash(ctx context.Context) (string, error) {
	recovered, err := p.server.Crash(ctx)
	if err != nil {
		return "", err
	}
	if !recovered {
		return "", errors.New("the server came back, but its log shows no crash recovery")
	}
	return "server killed without a checkpoint (immediate stop), started again on the same port and data; crash recovery ran", nil
}
