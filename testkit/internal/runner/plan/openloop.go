package plan

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// OpenLoop is the open loop's settings typed: --arrivals, --ramp and --max-lag, which with
// --rate and --slo-p99-ms are settings of RunConfig's (settings.go); --rates is the rate's
// axis (ladder.go). Without --rate or --rates a run is closed-loop, as always.
type OpenLoop struct {
	Arrivals load.Arrivals
	Ramp     time.Duration
	MaxLag   time.Duration
}

// validateOpenLoop checks the open-loop flags against each other and against the closed
// loop's.
func (c *parser) validateOpenLoop(bad func(string, ...any)) {
	changed, o := c.fs.Changed, &c.OpenLoop
	if changed("rate") && c.Rate <= 0 {
		bad("--rate must be positive (requests per second)")
	}
	open := changed("rate") || c.Steps(results.AxisRate)
	for _, f := range []string{"arrivals", "ramp", "max-lag"} {
		if changed(f) && !open {
			bad("--%s needs --rate or --rates (it shapes an open-loop run)", f)
		}
	}
	if changed("slo-p99-ms") && !c.Settings.JudgedByObjective() && !c.Advice.On {
		bad("--slo-p99-ms needs %s (it judges their ladders), or --advise", objectiveFlags())
	} else if changed("slo-p99-ms") && c.SLOP99Ms <= 0 {
		bad("--slo-p99-ms must be positive")
	}
	if changed("rate") && c.Steps(results.AxisConcurrency) {
		bad("--rate cannot be combined with --levels (a ladder is over concurrency or over rate)")
	}
	a, err := load.ParseArrivals(c.Settings.Arrivals)
	if err != nil {
		bad("--arrivals: %v", err)
	}
	o.Arrivals, c.Settings.Arrivals = a, string(a)
	if o.Ramp < 0 || o.MaxLag < 0 {
		bad("--ramp and --max-lag must not be negative")
	}
	if c.Duration > 0 && o.Ramp >= c.Duration {
		bad("--ramp must be shorter than --duration")
	}
}

// LoadConfig sets the open loop of a run at rate (0: closed loop, nothing set).
func (o *OpenLoop) LoadConfig(lcfg *load.Config, rate float64, seed int64) {
	if rate == 0 {
		return
	}
	lcfg.Rate, lcfg.Arrivals, lcfg.Seed, lcfg.Ramp, lcfg.MaxLag = rate, o.Arrivals, seed, o.Ramp, o.MaxLag
}
