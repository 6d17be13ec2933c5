package engine

import (
	"context"
	"errors"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/pooler"
)

// The engine's side of the pooler between the service and PostgreSQL (package pooler): put in
// place once, after the target is open and before the service connects, and one of each
// run's instruments (poolerFigures). Without one, e.pooler is nil, which package pooler reads
// as "no pooler".

// startPooler puts the pooler the flags ask for in place (pooler.Start): a temporary
// PgBouncer (--pooler pgbouncer) or the one of --pooler-url, checked. The --db-rtt proxy, when
// there is one, is then the pooler's way to the server.
func (e *engine) startPooler(ctx context.Context) error {
	c := e.cfg
	if !c.Pooled() {
		return nil
	}
	pg, ok := database.AsPostgres(e.target)
	if !ok { // the plan refuses a pooler on another kind
		return usageError{errors.New("--pooler and --pooler-url put PgBouncer in front of PostgreSQL only")}
	}
	p, err := pooler.Start(ctx, pg, pooler.Config{URL: c.PoolerURL, Mode: c.PoolerMode, PoolSize: c.PoolerPoolSize,
		ServiceConns: max(c.MaxPool(), c.Concurrency), Settings: faults.SessionSettings(c.Faults, sqldb.Postgres), TempDir: c.PgDir,
		Upstream: e.net.PoolerUpstream, ProxyHop: c.ProxiesPooler(), RTT: c.PoolerRTT})
	var bad pooler.BadInput
	if errors.As(err, &bad) {
		return usageError{err}
	}
	e.pooler = p
	return err
}

// suiteConfig is what a suite reads of the plan (testkit.Config), with the pool mode of
// --pooler-url's PgBouncer, which only its console says.
func (e *engine) suiteConfig() testkit.Config {
	cfg := e.cfg.Config()
	if mode := e.pooler.Mode(); mode != "" {
		cfg.PoolerMode = mode
	}
	return cfg
}

// poolerConns is a temporary pooler's pool (--pooler-pool-size): the most sessions of the
// service the temporary server then holds, however many clients connect to the pooler; 0
// without one.
func poolerConns(c *plan.Plan) int {
	if c.Settings.Pooler != "pgbouncer" || c.PoolerURL != "" {
		return 0
	}
	return c.PoolerPoolSize
}

// poolerFigures is the pooler over a run (pooler.Window): its SHOW STATS totals and processor
// time from the run's start to its end, with the maxima of the monitor's samples of it, into
// the run's Pooler (nil without a pooler).
type poolerFigures struct {
	e      *engine
	r      *run
	maxima interface {
		poolerMaxima() (results.Pooler, bool)
	}
	window *pooler.Window
}

func (p *poolerFigures) begin(ctx context.Context) error {
	p.window = p.e.pooler.Begin(ctx)
	return nil
}

func (p *poolerFigures) end(ctx context.Context, _ ranLoad, out *results.Run) {
	if maxima, ok := p.maxima.poolerMaxima(); ok {
		out.Pooler = p.window.Report(ctx, maxima, pooler.Hops{Pooler: p.e.cfg.PoolerRTT, DB: p.r.rtt})
	}
}

// releasePooler has the pooler close its server connections to the run's database
// (pooler.Release), and returns their backends' PIDs; none without a pooler.
func (e *engine) releasePooler(ctx context.Context) []int64 {
	pg, ok := database.AsPostgres(e.target)
	if !ok || e.pooler == nil {
		return nil
	}
	var out []int64
	for _, pid := range e.pooler.Release(ctx, pg.Admin()) {
		out = append(out, int64(pid))
	}
	return out
}
