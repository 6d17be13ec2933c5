package pooler

import (
	"context"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
)

// A run's view of the pooler: the pool of the run's database sampled while the load runs
// (Sampler, for the monitor), and its SHOW STATS totals and processor time from the run's
// start to its end (Window).

// Sampler is what reads the pooler's pool of the run's database for the monitor's samples
// (monitor.Config.Pooler): nil without a pooler.
func (p *Pooler) Sampler() func(ctx context.Context) (*results.PoolerSample, error) {
	if p == nil {
		return nil
	}
	return p.sample
}

// sample reads the pooler's pool of the run's database, on the console it reopens after a
// restart.
func (p *Pooler) sample(ctx context.Context) (*results.PoolerSample, error) {
	var pools []pgbouncer.Pool
	err := p.onConsole(ctx, func(con *pgbouncer.Console) (err error) {
		pools, err = con.Pools(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var s results.PoolerSample
	for _, pl := range pools {
		if pl.Database != p.db {
			continue
		}
		s.ClientsActive += pl.ClActive
		s.ClientsWaiting += pl.ClWaiting
		s.ServersActive += pl.SvActive
		s.ServersIdle += pl.SvIdle + pl.SvUsed
		s.MaxWaitMs = max(s.MaxWaitMs, units.Ms(pl.MaxWait))
	}
	return &s, nil
}

// stats reads SHOW STATS' totals of the run's database (zero when it cannot).
func (p *Pooler) stats(ctx context.Context) pgbouncer.Stats {
	var all []pgbouncer.Stats
	if p.onConsole(ctx, func(con *pgbouncer.Console) (err error) {
		all, err = con.Stats(ctx)
		return err
	}) != nil {
		return pgbouncer.Stats{}
	}
	for _, s := range all {
		if s.Database == p.db {
			return s
		}
	}
	return pgbouncer.Stats{}
}

// cpuAt is the temporary pooler's processor time so far and when it was read (zero without
// one, or when /proc cannot say).
func (p *Pooler) cpuAt() cpuReading {
	if p.srv == nil {
		return cpuReading{}
	}
	return cpuReading{used: p.srv.CPUTime(), at: time.Now()}
}

// cpuReading is a reading of the pooler's processor time.
type cpuReading struct {
	used time.Duration
	at   time.Time
}

// Window is the pooler over one run: its SHOW STATS totals and processor time as the run
// began. A nil Window (no pooler) reports nothing.
type Window struct {
	p   *Pooler
	at  pgbouncer.Stats
	cpu cpuReading
}

// Begin reads what a run's window starts from; nil without a pooler.
func (p *Pooler) Begin(ctx context.Context) *Window {
	if p == nil {
		return nil
	}
	return &Window{p: p, at: p.stats(ctx), cpu: p.cpuAt()}
}

// Hops are the round trips a run added on the pooler's two hops: the service's to the pooler
// (--pooler-rtt) and the pooler's to PostgreSQL (the run's --db-rtt).
type Hops struct{ Pooler, DB time.Duration }

// Report is the run's Pooler: the monitor's maxima of its samples, what the pooler is, its
// processor time, and the SHOW STATS totals between the window's start and now. Nil for a nil
// Window.
func (w *Window) Report(ctx context.Context, maxima results.Pooler, hops Hops) *results.Pooler {
	if w == nil {
		return nil
	}
	p, out := w.p, maxima
	if cpu1 := p.cpuAt(); w.cpu.used > 0 && cpu1.used >= w.cpu.used {
		used, wall := cpu1.used-w.cpu.used, cpu1.at.Sub(w.cpu.at)
		out.CPUSeconds = units.Round(used.Seconds(), 3)
		if wall > 0 {
			out.CPUShare = units.Round(used.Seconds()/wall.Seconds(), 3)
		}
	}
	out.Kind, out.Version, out.Managed, out.Mode, out.PoolSize = "pgbouncer", p.version, p.srv != nil, p.mode, p.poolSize
	out.PoolerRTTMs, out.DBRTTMs = units.Ms(hops.Pooler), units.Ms(hops.DB)
	end := p.stats(ctx)
	if n := end.TotalXactCount - w.at.TotalXactCount; n > 0 && end.TotalXactCount >= w.at.TotalXactCount {
		out.Transactions = n
		out.AvgWaitMs = units.Ms(end.TotalWaitTime-w.at.TotalWaitTime) / float64(n)
		out.AvgXactMs = units.Ms(end.TotalXactTime-w.at.TotalXactTime) / float64(n)
	}
	return &out
}
