package engine

import (
	"context"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
)

// generatorCost is what the load generator — this process — costs over the run's measured
// window, and the local server's processor time beside it (package clientcost), into the
// run's Generator. The window opens with the load's (load.Config.Measuring, after the warm-up)
// and closes when this instrument ends, right after the drain: it ends before every other
// instrument but the abort watch (whose end does nothing), so that theirs (the database's
// figures waiting for sessions to exit, the monitor's last sample) stay out of the window. The
// run's set-up and verification are phases of their own (runOne).
type generatorCost struct {
	meter      *clientcost.Meter
	goroutines interface{ maxGoroutines() int }
	// from is the window's first reading, taken by measuring; nil when the load ended before
	// its window opened. The load has returned from measuring before the run reads it.
	from *clientcost.Reading
}

func (g *generatorCost) begin(context.Context) error { return nil }

// measuring is the load's Config.Measuring: the window's first reading.
func (g *generatorCost) measuring() {
	r := g.meter.Read()
	g.from = &r
}

func (g *generatorCost) end(_ context.Context, ran ranLoad, out *results.Run) {
	if ran.res == nil || g.from == nil {
		return
	}
	out.Generator = g.meter.Window(*g.from, g.meter.Read(), ran.res.Completed, g.goroutines.maxGoroutines())
}
