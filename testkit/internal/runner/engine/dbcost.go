package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/calibrate"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// sessionExitDeadline bounds the wait for closed connections' backends to exit (and so flush
// their statistics) before a reading.
const sessionExitDeadline = 5 * time.Second

// calibrate records the machine's reference rates in the environment, once, before the first
// run (package calibrate), on the largest pool of any run (plan.MaxPool), or through a pooler
// on the pooler's pool when that is smaller (serverPool: what PostgreSQL sees); with
// --calibrate=false the report says it was skipped.
func (e *engine) calibrate(ctx context.Context) error {
	c := e.cfg
	if !c.Calibrate {
		e.report.Environment.Calibration = &results.Calibration{Skipped: true}
		return nil
	}
	conns := e.serverPool()
	pool, err := e.target.NewPool(ctx, database.PoolOptions{MaxConns: int32(max(conns, c.QueueWorkers)),
		AppName: "hotspotkit-calibrate", Direct: true}) // it measures the machine, not the network
	if err != nil {
		return err
	}
	defer pool.Close()
	cal, err := calibrate.Run(ctx, e.target.Admin(), pool, calibrate.Config{PoolConns: conns, BatchConns: c.QueueWorkers})
	if err != nil {
		return err
	}
	e.report.Environment.Calibration = cal
	return nil
}

// costWindow is the database's statistics at the start of a run (package dbstats).
type costWindow struct {
	reader *dbstats.Reader
	start  dbstats.Snapshot
	// untracks counts the monitor's connections set up by monitorConnect (one transaction each).
	untracks atomic.Int64
	// pings is the target's pool pings at the start reading (database.Target.Pings).
	pings int64
}

// monitorConnect opens the monitor's connections; with a cost window, their statements are
// left out of pg_stat_statements (dbstats.Untrack) and their transactions are counted.
func (e *engine) monitorConnect(w *costWindow) monitor.Connect {
	return func(ctx context.Context) (*pgx.Conn, error) {
		conn, err := e.target.ConnectDirect(ctx, "hotspotkit-monitor") // it observes: never through --db-rtt's proxy
		if err == nil && w != nil {
			dbstats.Untrack(ctx, conn)
			w.untracks.Add(1)
		}
		return conn, err
	}
}

// beginCost reads the database's counters a run starts from, once the sessions closed before
// the run (prior: the calibration's, earlier runs') have exited and flushed their statistics.
// The run's own sessions, open by now (a Redis consumer's flush pool connects at once), are
// endCost's to wait for: waiting here for them to exit would wait out sessionExitDeadline on
// every run. The figures are an addition to the run: when they cannot be read, the run goes on
// without them (said on stderr).
func (e *engine) beginCost(ctx context.Context, prior []uint32) *costWindow {
	admin := e.target.Admin()
	reader, err := dbstats.NewReader(ctx, admin, e.target.Schema())
	if err == nil {
		var w costWindow
		// The calibration's and earlier runs' connections are closed: their backends may
		// still be flushing what they did.
		if w.start, err = reader.Take(ctx, admin, prior, sessionExitDeadline); err == nil {
			w.reader, w.pings = reader, e.target.Pings()
			return &w
		}
	}
	fmt.Fprintf(e.stderr, "%s: the database's own figures are left out of this run: %s\n", e.info.Name, database.Redact(err.Error()))
	return nil
}

// endCost closes the run's write connections — their backends flush their statistics as they
// exit; the pools stay usable for verification — and returns what the run cost the database
// between the start reading and now, with every statement's server time (dbstats.ServerTimes).
func (e *engine) endCost(ctx context.Context, m *measured) (*results.Database, map[string]dbstats.Timed) {
	releaseConns(ctx, m.pool, m.r, m.wl)
	w, res, mon := m.cost, m.res, m.mon
	if w == nil {
		return nil, nil
	}
	admin := e.target.Admin()
	sessions := e.target.TakeSessions()
	if e.pooler != nil { // the pooler's server connections, which the pools' closing left open
		sessions = append(sessions, e.pooler.release(ctx, admin)...)
	}
	end, err := w.reader.Take(ctx, admin, sessions, sessionExitDeadline)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: the database's own figures are left out of this run: %s\n", e.info.Name, database.Redact(err.Error()))
		return nil, nil
	}
	return w.reader.Delta(w.start, end, dbstats.Inputs{
		Requests:   res.Completed + res.WarmupCompleted,
		HotTables:  e.info.HotTables,
		WaitEvents: mon.WaitEvents(),
		// Not the run's work either: the pools' liveness pings (one transaction each).
		// And a conn-storm's statements.
		ObserverTransactions: mon.Statements() + w.untracks.Load() + e.target.Pings() - w.pings + m.injector.StormStatements(),
		Shared:               !e.target.Managed(),
	}), dbstats.ServerTimes(w.start, end)
}

// releaseConns closes the run's connections (the load's pool, the queue's, the outbox
// flusher's) so that their backends exit before the database's figures are read.
func releaseConns(ctx context.Context, pool *pgxpool.Pool, r *run, wl *testkit.Workload) {
	pool.Reset()
	r.backend.Release()
	if o := wl.FlushLoop; o != nil {
		o.Stop()
		_ = o.Close(ctx)
	}
}
