package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
)

// sessionExitDeadline bounds the wait for closed connections' backends to exit (and so flush
// their statistics) before a reading.
const sessionExitDeadline = 5 * time.Second

// calibrate records the machine's reference rates in the environment, once, before the first
// run (package calibrate), on the largest pool of any run (plan.MaxPool), or through a pooler
// on the pooler's pool when that is smaller (serverPool: what PostgreSQL sees); with
// --calibrate=false, or on a kind of database it does not measure, the report says it was
// skipped.
func (e *engine) calibrate(ctx context.Context) error {
	c := e.cfg
	if !c.Calibrate {
		e.report.Environment.Calibration = &results.Calibration{Skipped: true}
		return nil
	}
	cal, err := e.db.calibrate(ctx, e.serverPool(), c.QueueWorkers) // the kind's (dbkind.go)
	if err != nil {
		return err
	}
	e.report.Environment.Calibration = cal
	return nil
}

// dbFigures is the database's own figures over a run (results.Database), read through the
// database's kind (dbKind). The figures are an addition to the run: when they cannot be read,
// the run goes on without them (said on stderr).
type dbFigures struct {
	e     *engine
	r     *run
	pool  database.Pool
	wl    *testkit.Workload
	prior []int64 // the sessions closed before the run
	// reached says whether the servers answered after the load; waits are the monitor's wait
	// events; observers are the instruments whose transactions are not the run's.
	reached   interface{ reachable() bool }
	waits     interface{ waitEvents() map[string]int64 }
	observers []observer

	window figuresWindow // nil when the figures cannot be read
	pings  int64         // the target's pool pings at the start reading (database.Target.Pings)
	// server is every statement's server time over the run (dbstats.ServerTimes), once ended.
	server map[string]dbstats.Timed
}

// begin reads the database's counters the run starts from, once the sessions closed before
// the run (prior: the calibration's, earlier runs') have exited and flushed their statistics.
// The run's own sessions, open by now (a Redis consumer's flush pool connects at once), are
// end's to wait for: waiting here for them to exit would wait out sessionExitDeadline on every
// run.
func (f *dbFigures) begin(ctx context.Context) error {
	w, err := f.e.db.figuresFrom(ctx, f.prior)
	if err != nil {
		f.e.figuresLeftOut(err)
		return nil
	}
	f.window, f.pings = w, f.e.target.Pings()
	return nil
}

// end closes the run's write connections — their backends flush their statistics as they
// exit; the pools stay usable for verification — and, when the servers answered, writes what
// the run cost the database between the start reading and now, with the sessions the pooler
// held (RECONNECT) waited for as well.
func (f *dbFigures) end(ctx context.Context, ran ranLoad, out *results.Run) {
	if ran.res == nil {
		return
	}
	releaseConns(ctx, f.pool, f.r, f.wl)
	if !f.reached.reachable() || f.window == nil {
		return
	}
	e := f.e
	sessions := append(e.target.TakeSessions(), e.releasePooler(ctx)...)
	db, server, err := f.window.end(ctx, sessions, func() dbstats.Inputs {
		// Not the run's work: the observers' transactions, and the pools' liveness pings (one
		// transaction each).
		observed := e.target.Pings() - f.pings
		for _, o := range f.observers {
			observed += o.observed()
		}
		return dbstats.Inputs{
			Requests:             ran.res.Completed + ran.res.WarmupCompleted,
			HotTables:            e.info.HotTables,
			WaitEvents:           f.waits.waitEvents(),
			ObserverTransactions: observed,
			Shared:               !e.target.Managed(),
		}
	})
	if err != nil {
		e.figuresLeftOut(err)
		return
	}
	out.Database, f.server = db, server
}

// figuresLeftOut says on stderr why the run goes on without the database's figures.
func (e *engine) figuresLeftOut(err error) {
	fmt.Fprintf(e.stderr, "%s: the database's own figures are left out of this run: %s\n", e.info.Name, database.Redact(err.Error()))
}

// releaseConns closes the run's connections (the load's pool, the queue's, the outbox
// flusher's) so that their backends exit before the database's figures are read.
func releaseConns(ctx context.Context, pool database.Pool, r *run, wl *testkit.Workload) {
	pool.Reset()
	r.backend.Release()
	if o := wl.FlushLoop; o != nil {
		o.Stop()
		_ = o.Close(ctx)
	}
}
