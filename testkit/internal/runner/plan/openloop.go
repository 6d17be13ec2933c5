package plan

import (
	"math"
	"strconv"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// OpenLoop is the open loop's settings typed: --arrivals, --ramp and --max-lag, which with
// --rate (or the --rates ladder) and --slo-p99-ms are settings of RunConfig's (settings.go).
// Without --rate or --rates a run is closed-loop, as always.
type OpenLoop struct {
	Arrivals load.Arrivals
	Ramp     time.Duration
	MaxLag   time.Duration
}

// registerRates registers --rates, the rate ladder, in increasing order.
func (c *parser) registerRates() {
	c.fs.StringVar(&c.ratesRaw, "rates", "", "open-loop rate ladder, requests per second, e.g. 100,200,400,800 (one run per mode and rate, each for --duration)")
}

// validateOpenLoop checks the open-loop flags against each other and against the closed
// loop's.
func (c *parser) validateOpenLoop(bad func(string, ...any)) {
	changed, o := c.fs.Changed, &c.OpenLoop
	if changed("rate") && c.Rate <= 0 {
		bad("--rate must be positive (requests per second)")
	}
	open := changed("rate") || c.ratesRaw != ""
	for _, f := range []string{"arrivals", "ramp", "max-lag"} {
		if changed(f) && !open {
			bad("--%s needs --rate or --rates (it shapes an open-loop run)", f)
		}
	}
	if changed("slo-p99-ms") && c.ratesRaw == "" && c.poolLevelsRaw == "" {
		bad("--slo-p99-ms needs --rates or --pool-levels (it judges a rate ladder or a pool ladder)")
	} else if changed("slo-p99-ms") && c.SLOP99Ms <= 0 {
		bad("--slo-p99-ms must be positive")
	}
	if open && (c.levelsRaw != "") {
		bad("--rate and --rates cannot be combined with --levels (a ladder is over concurrency or over rate)")
	}
	if c.ratesRaw != "" && c.Settings.Role != "" && c.Settings.Role != "both" {
		bad("--role %s cannot be combined with --rates", c.Settings.Role)
	}
	if changed("rate") && c.ratesRaw != "" {
		bad("--rate and --rates cannot be combined (--rates runs each rate in turn)")
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
	c.Rates = ladderRungs(c.ratesRaw, "--rates", "a positive rate (requests per second)", func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && v > 0 && !math.IsInf(v, 0)
	}, bad)
	c.needsDuration("--rates", "rate", len(c.Rates), bad)
}

// LoadConfig sets the open loop of a run at rate (0: closed loop, nothing set).
func (o *OpenLoop) LoadConfig(lcfg *load.Config, rate float64, seed int64) {
	if rate == 0 {
		return
	}
	lcfg.Rate, lcfg.Arrivals, lcfg.Seed, lcfg.Ramp, lcfg.MaxLag = rate, o.Arrivals, seed, o.Ramp, o.MaxLag
}

// Rung is one step of a ladder: a concurrency level (--levels) or an offered rate (--rates),
// or the single run of each mode outside a ladder (Rate = --rate, 0 in a closed loop), at a
// slot count (--slots, or a --slots-levels count; 0 for a suite without slots).
type Rung struct {
	Level int
	Rate  float64
	Slots int
	// RTT is the round trip added to PostgreSQL (--db-rtt, or an --rtt-levels rung).
	RTT time.Duration
	// Pool is the size of the load's pool (--max-connections, or a --pool-levels rung).
	Pool int
}

// Rungs lists the runs of each mode (before repetitions), slot counts outermost, then round
// trips, then pool sizes.
func (c *Plan) Rungs() []Rung {
	var per []Rung
	for _, l := range c.Levels {
		per = append(per, Rung{Level: l})
	}
	for _, r := range c.Rates {
		per = append(per, Rung{Rate: r})
	}
	if len(per) == 0 {
		per = []Rung{{Rate: c.Rate}}
	}
	var out []Rung
	for _, n := range c.slotCounts() {
		for _, rtt := range c.rttRungs() { // network.go
			for _, pool := range c.poolRungs() { // pool.go
				for _, g := range per {
					g.Slots, g.RTT, g.Pool = n, rtt, pool
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// ForDuration says whether a run is bounded by --duration alone: a ladder rung, or a run at a
// rate with --duration, unless --requests was given.
func (c *Plan) ForDuration(g Rung) bool {
	return (g.Level > 0 || (g.Rate > 0 && c.Duration > 0)) && !c.RequestsGiven
}
