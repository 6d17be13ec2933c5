package engine

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// A run's instruments: what measures a run, or acts on it, beside its load. Each is a value
// made for its run that keeps its own state; what one needs of another it is handed when it is
// made, by name. runOne begins them in the order of their list before the load and ends them
// in the reverse order after the drain, each into its own part of the run's report. Adding
// one is one value in the list (runInstruments).

// instrument is one of a run's instruments.
type instrument interface {
	// begin starts it before the load. An error fails the run: the instruments begun
	// before it are ended.
	begin(ctx context.Context) error
	// end stops it after the drain, or after a load that failed (ran.res nil), and writes what
	// it measured into out.
	end(ctx context.Context, ran ranLoad, out *results.Run)
}

// lasting is an instrument whose effect outlasts its end: it is undone once the run is over
// and its report made, in the reverse order of the list.
type lasting interface {
	over()
}

// observer is an instrument that runs statements on the database: the run's database figures
// leave them out.
type observer interface {
	// observed is how many transactions it ran there; final once it has ended.
	observed() int64
}

// ranLoad is what an instrument's end is told of the load.
type ranLoad struct {
	res *load.Result // nil when the load failed
	// stalled: the drain ended on a stall, after waiting for the servers already.
	stalled bool
}

// named is an instrument in the list, with what a failure to begin it calls it.
type named struct {
	name string
	instrument
}

// runInstruments are a run's instruments: the list in order, and those runOne and the drain
// read by name.
type runInstruments struct {
	list   []named
	begun  int
	ended  bool
	dbFigs *dbFigures
	wait   *serverWait
	mon    *lockMonitor
	faults *faultInjection
	gen    *generatorCost
}

// instruments makes run r's instruments, in their order (they end in the reverse one):
//
//   - the database's figures come first, so that they are read before anything else of the
//     run touches the database and after everything else has stopped: each observer's own
//     transactions are final and left out, and the pooler has released its server connections;
//   - the wait for the servers ends just before them, after every other end (a fault's lets
//     a server come back), and says whether there is a database to read at all;
//   - the pooler's figures come before the monitor: SHOW STATS is read before the monitor's
//     first sample of the pooler and again after its last, when its maxima are final;
//   - the metrics endpoint after the monitor, whose latest sample it shows;
//   - the probes open their connections before the load, out of its window;
//   - the faults start once everything that watches the run is in place;
//   - the generator's cost ends first, right after the drain, so that the others' endings
//     stay out of its window (it reads at the load's window's start, not at its begin);
//   - the abort watch on the queue's server is the innermost: armed just before the load, and
//     disarmed first once the run, its verification included, is over.
func (e *engine) instruments(r *run, prior []int64, pool database.Pool, wl *testkit.Workload, live *load.Live, meter *clientcost.Meter) *runInstruments {
	mon := &lockMonitor{e: e, cfg: e.monitorConfig(r, pool, wl, live)}
	probes := &probes{e: e, r: r}
	faults := &faultInjection{e: e, r: r, wl: wl, series: mon}
	wait := &serverWait{e: e, r: r}
	dbFigs := &dbFigures{e: e, r: r, pool: pool, wl: wl, prior: prior, reached: wait, waits: mon,
		observers: []observer{mon, probes, faults}}
	gen := &generatorCost{meter: meter, goroutines: mon}
	return &runInstruments{dbFigs: dbFigs, wait: wait, mon: mon, faults: faults, gen: gen, list: []named{
		{"the database's figures", dbFigs},
		{"the wait for the servers", wait},
		{"the pooler's figures", &poolerFigures{e: e, r: r, maxima: mon}},
		{"the monitor", mon},
		{"the metrics endpoint", &metricsWatch{e: e, r: r, live: live, last: mon, pool: pool}},
		{"the probes", probes},
		{"the faults", faults},
		{"the generator's cost", gen},
		{"the abort watch", &abortWatch{e: e, r: r}},
	}}
}

// begin begins the instruments in order; when one fails, it ends those begun.
func (in *runInstruments) begin(ctx context.Context, out *results.Run) error {
	for _, n := range in.list {
		if err := n.begin(ctx); err != nil {
			in.end(ctx, ranLoad{}, out)
			return fmt.Errorf("starting %s: %w", n.name, err)
		}
		in.begun++
	}
	return nil
}

// end ends the instruments begun, in the reverse order, once.
func (in *runInstruments) end(ctx context.Context, ran ranLoad, out *results.Run) {
	if in.ended {
		return
	}
	in.ended = true
	for i := in.begun - 1; i >= 0; i-- {
		in.list[i].end(ctx, ran, out)
	}
}

// over undoes, in the reverse order, what the instruments begun leave in place until the run
// is over.
func (in *runInstruments) over() {
	for i := in.begun - 1; i >= 0; i-- {
		if l, ok := in.list[i].instrument.(lasting); ok {
			l.over()
		}
	}
}

// serverWait is the wait for the run's servers after its load: a fault may have broken the
// engine's own connection (restart-postgres), or the path to a server may not have come back.
// It waits at most --reconcile-timeout (none after a drain that waited already: bounds.go);
// when a server does not answer, the run is unverified (unreachable) and what waits on the
// database's sockets fails at once.
type serverWait struct {
	e           *engine
	r           *run
	unreachable error
}

func (w *serverWait) begin(context.Context) error { return nil }

func (w *serverWait) end(ctx context.Context, ran ranLoad, _ *results.Run) {
	if ran.res == nil {
		return
	}
	wait := w.e.cfg.ReconcileTimeout
	if ran.stalled {
		wait = 0
	}
	if err := w.e.awaitPaths(ctx, w.r, wait); err != nil {
		w.e.target.CutSockets() // what waits on them fails at once, closing them does not wait
		w.unreachable = err
	}
}

// reachable says the run's servers answered after the load.
func (w *serverWait) reachable() bool { return w.unreachable == nil }

// abortWatch makes what waits on the run's queue server fail at once when the invocation is
// aborted (backend.AbortOn), until the run is over.
type abortWatch struct {
	e    *engine
	r    *run
	stop func()
}

func (a *abortWatch) begin(context.Context) error {
	a.stop = a.r.backend.AbortOn(a.e.hardCtx)
	return nil
}

func (a *abortWatch) end(context.Context, ranLoad, *results.Run) {}

func (a *abortWatch) over() { a.stop() }
