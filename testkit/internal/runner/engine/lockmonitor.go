package engine

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// lockMonitor is the run's monitor of the database (dbKind.watch): lock waiters, sessions and
// the load's pool sampled while the load runs, into the run's LockMonitor and Pool, the samples
// file and, for the other instruments, its latest sample, its series and its totals.
type lockMonitor struct {
	e   *engine
	cfg monitor.Config
	mon locks // nil until begun
}

// monitorConfig is the monitor of run r, whose load runs on pool and counts its requests in live.
func (e *engine) monitorConfig(r *run, pool database.Pool, wl *testkit.Workload, live *load.Live) monitor.Config {
	c := e.cfg
	mcfg := monitor.Config{
		Interval:   time.Duration(c.MonitorIntervalMs) * time.Millisecond,
		HotTables:  e.info.HotTables,
		Pool:       poolUsage(pool),
		PendingSQL: wl.PendingSQL,
		TotalSQL:   e.info.TotalSQL,
		Progress:   func() (int64, int64) { return live.Completed(), live.Failed() },
		Samples:    e.samples,
		Process:    e.samples != nil || c.FaultEvery > 0, // the samples file, soakFigures
		Label:      results.Sample{Run: r.Index, Mode: r.Mode, Repetition: r.repetition, Level: r.level},
		Pooler:     e.pooler.Sampler(),
	}
	if q := r.backend.Figures(); q != nil {
		mcfg.Queue = func() (int64, int64) { m := q.Metrics(); return m.Depth, m.PendingDepth }
	}
	return mcfg
}

func (l *lockMonitor) begin(ctx context.Context) error {
	mon, err := l.e.db.watch(ctx, l.cfg)
	l.mon = mon
	return err
}

func (l *lockMonitor) end(ctx context.Context, _ ranLoad, out *results.Run) {
	out.LockMonitor, out.Pool = l.mon.Stop(ctx)
}

// last is the latest sample (the metrics endpoint's, the outbox's drain).
func (l *lockMonitor) last() results.Sample { return l.mon.Last() }

// series is every sample's progress and process figures (the soak's).
func (l *lockMonitor) series() []monitor.Point { return l.mon.Series() }

// waitEvents are the totals of the run's sessions by wait event (the database's figures).
func (l *lockMonitor) waitEvents() map[string]int64 { return l.mon.WaitEvents() }

func (l *lockMonitor) observed() int64 { return l.mon.transactions() }

// maxGoroutines is the most goroutines the process had at a sample (the generator's cost).
func (l *lockMonitor) maxGoroutines() int { return l.mon.MaxGoroutines() }

// poolerMaxima are the maxima of the monitor's samples of the pooler; not ok when the monitor
// did not start.
func (l *lockMonitor) poolerMaxima() (_ results.Pooler, ok bool) {
	if l.mon == nil {
		return results.Pooler{}, false
	}
	return l.mon.Pooler(), true
}

// poolUsage is the load's pool as the monitor and the metrics endpoint read its usage: pgx's
// pool's statistics, or database/sql's.
func poolUsage(pool database.Pool) monitor.Pool {
	if p, ok := sqldb.AsPgx(pool.SQL()); ok {
		if pp, ok := p.(*pgxpool.Pool); ok {
			return monitor.PgxPool(pp)
		}
	}
	if s, ok := sqldb.AsSQL(pool.SQL()); ok {
		if db, ok := s.(*sql.DB); ok {
			return monitor.SQLPool(db)
		}
	}
	return nil
}
