package engine

// The live views of an invocation: the metrics endpoint and the drain's status line.

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/metrics"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// afterInvocation, when set (by tests), is called with the metrics endpoint's URL once the
// report is written and before the endpoint closes, so the final values can be scraped.
var afterInvocation func(metricsURL string)

// serveMetrics opens --metrics-addr before anything else starts; an address that cannot be
// bound is bad input.
func (e *engine) serveMetrics(stderr io.Writer) error {
	if e.cfg.MetricsAddr == "" {
		return nil
	}
	srv, err := metrics.Listen(e.cfg.MetricsAddr)
	if err != nil {
		return err
	}
	e.metrics = srv
	fmt.Fprintf(stderr, "%s: metrics on %s\n", e.info.Name, srv.URL())
	return nil
}

// closeMetrics stops the endpoint: after --metrics-linger (cut short by SIGINT or SIGTERM;
// skipped when a signal already ended the invocation) and the tests' look at the final values.
func (e *engine) closeMetrics() {
	if e.metrics == nil {
		return
	}
	if d := e.cfg.MetricsLinger; d > 0 && e.signalName() == "" {
		fmt.Fprintf(e.stderr, "%s: the final values stay on %s for %s (Ctrl-C to stop now)\n", e.info.Name, e.metrics.URL(), d)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-e.stopCtx.Done(): // a signal (handleSignals)
			t.Stop()
		}
	}
	if afterInvocation != nil {
		afterInvocation(e.metrics.URL())
	}
	_ = e.metrics.Close()
}

// metricsWatch puts the run on the metrics endpoint, when it is on: the endpoint reads the
// run's live state when scraped (its load's, its pool's, its queue's and the monitor's latest
// sample), and its final values once the run is over.
type metricsWatch struct {
	e    *engine
	r    *run
	live *load.Live
	last interface{ last() results.Sample }
	pool database.Pool
	run  *metrics.Run // nil when the endpoint is off
}

func (m *metricsWatch) begin(context.Context) error {
	m.run = m.e.watch(m.r, m.live, m.last.last, m.pool)
	return nil
}

func (m *metricsWatch) end(context.Context, ranLoad, *results.Run) {}

func (m *metricsWatch) over() { m.run.Finish() }

// watch puts run r on the metrics endpoint (nil when it is off): the endpoint reads the
// run's live state when scraped, and its final values once the returned run is finished.
func (e *engine) watch(r *run, live *load.Live, last func() results.Sample, pool database.Pool) *metrics.Run {
	if e.metrics == nil {
		return nil
	}
	u0, s0 := clientcost.ProcessCPU()
	usage := poolUsage(pool)
	src := metrics.Source{
		Labels:    metrics.Labels{Suite: e.info.Name, Mode: r.Mode, Role: e.cfg.Settings.Role, Run: r.Index, Level: r.level},
		Live:      live,
		Monitor:   last,
		HotTables: e.info.HotTables,
		Pool: func() metrics.Pool {
			if usage == nil {
				return metrics.Pool{}
			}
			st := usage.Stats()
			return metrics.Pool{Acquired: st.Acquired, Idle: st.Idle, Max: st.Max}
		},
		ClientCPU: func() time.Duration { u, s := clientcost.ProcessCPU(); return u + s - u0 - s0 },
	}
	if q := r.backend.Figures(); q != nil {
		src.Queue = func() results.QueueMetrics { return results.QueueMetrics(q.Metrics()) }
		src.PersistLag = q.PersistLag
		if q.Stream() != nil {
			src.Stream = q.Stream
		}
	}
	return e.metrics.Watch(src)
}

// showDrain follows the drain on the terminal from progress (drainProgress): records persisted
// of those accepted, records still waiting and the current persist lag. The returned stop
// draws the final line; drained says the drain ended with nothing left.
func (e *engine) showDrain(r *run, progress func() load.DrainStatus) (stop func(drained bool)) {
	if progress == nil {
		return func(bool) {}
	}
	var drained atomic.Bool
	status := func() load.DrainStatus {
		st := progress()
		if drained.Load() && st.Accepted == 0 { // the outbox knows what it accepted once it is empty
			st.Accepted, st.Waiting = st.Persisted, 0
		}
		return st
	}
	end := load.ShowDrain(e.stderr, e.cfg.ProgressInterval, r.Mode, status)
	return func(ok bool) {
		drained.Store(ok)
		end()
	}
}
