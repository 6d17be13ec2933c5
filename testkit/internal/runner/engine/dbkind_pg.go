package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/calibrate"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// postgres is PostgreSQL's dbKind: pg_stat_* and pg_stat_statements for the figures (package
// dbstats), pg_locks and pg_stat_activity for the monitor (package monitor), the temporary
// server's restart and crash (package pgserver).
type postgres struct {
	target *database.Postgres
	server *pgserver.Server // the temporary server; nil with --postgres-url
}

// openPostgres starts the temporary PostgreSQL (startPostgres) or reaches --postgres-url's, and
// opens the run's schema on it.
func (e *engine) openPostgres(ctx context.Context) (database.Target, dbKind, error) {
	target, srv, err := openOn(ctx, e.databaseOptions(), e.startPostgres, database.Open)
	if err != nil {
		return nil, nil, err
	}
	return target.Target(), postgres{target: target, server: srv}, nil
}

// startPostgres starts the temporary server: local binaries, else embedded-postgres's download.
func (e *engine) startPostgres(ctx context.Context) (*pgserver.Server, error) {
	c := e.cfg
	bins, err := pgserver.FindBinaries(c.PgBinDir)
	if errors.Is(err, pgserver.ErrNoLocalBinaries) {
		fmt.Fprintf(e.stderr, "%s: no local PostgreSQL; trying embedded-postgres's download of PostgreSQL %d\n", e.info.Name, c.PgDownload.Major)
		var derr error
		if bins, derr = pgserver.Download(c.PgDownload, ""); derr != nil {
			return nil, fmt.Errorf("%w; and the download failed: %v", err, derr)
		}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return pgserver.Start(ctx, pgserver.Config{Binaries: bins, User: c.PgUser, TempDir: c.PgDir, Unsafe: c.UnsafeNoFsync,
		MaxConnections: e.sessionsNeeded() + serverMargin})
}

func (postgres) name() string { return "PostgreSQL" }

func (p postgres) figuresFrom(ctx context.Context, prior []int64) (figuresWindow, error) {
	admin := p.target.Admin()
	reader, err := dbstats.NewReader(ctx, admin, p.target.Schema())
	if err != nil {
		return nil, err
	}
	// The calibration's and earlier runs' connections are closed: their backends may still be
	// flushing what they did.
	start, err := reader.Take(ctx, admin, pids(prior), sessionExitDeadline)
	if err != nil {
		return nil, err
	}
	return pgFigures{target: p.target, reader: reader, start: start}, nil
}

// pgFigures is PostgreSQL's statistics at the start of a run.
type pgFigures struct {
	target *database.Postgres
	reader *dbstats.Reader
	start  dbstats.Snapshot
}

func (w pgFigures) end(ctx context.Context, sessions []int64, in func() dbstats.Inputs) (*results.Database, map[string]dbstats.Timed, error) {
	end, err := w.reader.Take(ctx, w.target.Admin(), pids(sessions), sessionExitDeadline)
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

func (p postgres) restart(ctx context.Context) error {
	if p.server == nil {
		return errNoServer
	}
	return p.server.Restart(ctx)
}

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
	if p.server == nil {
		return "", errNoServer
	}
	recovered, err := p.server.Crash(ctx)
	return crashed(recovered, err, "server killed without a checkpoint (immediate stop), started again on the same port and data; crash recovery ran")
}

func (p postgres) probe() netpath.Connect { return netpath.PostgresProbe(p.target) }

// calibrate measures the hot row and the batched writes on a pool of its own that reaches the
// server directly (it measures the machine, not the network).
func (p postgres) calibrate(ctx context.Context, conns, batchConns int) (*results.Calibration, error) {
	pool, err := p.target.NewPool(ctx, database.PoolOptions{MaxConns: int32(max(conns, batchConns)),
		AppName: "hotspotkit-calibrate", Direct: true})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return calibrate.Run(ctx, p.target.Admin(), pool, calibrate.Config{PoolConns: conns, BatchConns: batchConns})
}

// checkRoom: max_connections, less the sessions reserved for superusers and those open now,
// must hold the invocation's.
func (p postgres) checkRoom(ctx context.Context, need, storm int) error {
	if storm == 0 || p.server != nil {
		return nil
	}
	var maxConns, reserved, open int
	err := p.target.Admin().QueryRow(ctx, `SELECT current_setting('max_connections')::int,
		current_setting('superuser_reserved_connections')::int,
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')`).Scan(&maxConns, &reserved, &open)
	if err != nil {
		return fmt.Errorf("reading the server's max_connections for --fault conn-storm: %w", err)
	}
	if room := maxConns - reserved - open; need > room {
		return roomError(storm, room, maxConns, reserved, open, need)
	}
	return nil
}

func (p postgres) temporary() (time.Duration, string, bool) {
	if p.server == nil {
		return 0, "", false
	}
	return p.server.StartDuration(), p.server.Dir(), true
}

func (postgres) record(*results.RunConfig) {}
