package testkit

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
)

// OpenLoop holds the open-loop flags: --rate (or the --rates ladder), --arrivals, --ramp,
// --max-lag and --slo-p99-ms. Without --rate or --rates a run is closed-loop, as always.
type OpenLoop struct {
	// Rate is --rate, requests per second for the whole invocation (0: closed loop).
	Rate     float64
	Arrivals load.Arrivals
	Ramp     time.Duration
	MaxLag   time.Duration
	// Rates is the rate ladder (--rates), in increasing order; SLOP99Ms its objective.
	Rates    []float64
	SLOP99Ms float64

	arrivalsRaw string
	ratesRaw    string
}

// openLoopFlags are the flags that are recorded in a run's config only when it is open-loop,
// so that a closed-loop report keeps the keys of the engines that had no open loop.
var openLoopFlags = []string{"rate", "arrivals", "ramp", "max-lag", "rates", "slo-p99-ms"}

func (o *OpenLoop) register(fs *pflag.FlagSet) {
	fs.Float64Var(&o.Rate, "rate", 0, "open loop: requests per second for the whole invocation, arriving on a schedule whatever the database does; latency counts from each request's intended start, --concurrency caps the requests in flight (default: closed loop)")
	fs.StringVar(&o.arrivalsRaw, "arrivals", string(load.Poisson), "open loop: how arrivals are spaced, poisson (independent clients) or uniform (evenly), drawn from --seed")
	fs.DurationVar(&o.Ramp, "ramp", 0, "open loop: climb linearly from 0 to the rate over this long first; left out of the statistics like --warmup")
	fs.DurationVar(&o.MaxLag, "max-lag", 0, "open loop: a request whose turn comes more than this after its intended start is counted skipped and not sent (pgbench's --latency-limit skipping)")
	fs.StringVar(&o.ratesRaw, "rates", "", "open-loop rate ladder, requests per second, e.g. 100,200,400,800 (one run per mode and rate, each for --duration)")
	fs.Float64Var(&o.SLOP99Ms, "slo-p99-ms", 0, "with --rates: the latency objective; the ladder names each mode's highest rate with p99 within it and ≥ 95% of its arrivals sent (max_rate_at_slo)")
}

// validate checks the open-loop flags against each other and against the closed loop's.
func (o *OpenLoop) validate(c *Config, bad func(string, ...any)) {
	changed := c.fs.Changed
	if changed("rate") && o.Rate <= 0 {
		bad("--rate must be positive (requests per second)")
	}
	open := changed("rate") || o.ratesRaw != ""
	for _, f := range []string{"arrivals", "ramp", "max-lag"} {
		if changed(f) && !open {
			bad("--%s needs --rate or --rates (it shapes an open-loop run)", f)
		}
	}
	if changed("slo-p99-ms") && o.ratesRaw == "" {
		bad("--slo-p99-ms needs --rates (it judges a rate ladder)")
	} else if changed("slo-p99-ms") && o.SLOP99Ms <= 0 {
		bad("--slo-p99-ms must be positive")
	}
	if open && (c.levelsRaw != "") {
		bad("--rate and --rates cannot be combined with --levels (a ladder is over concurrency or over rate)")
	}
	if o.ratesRaw != "" && c.RoleName != "" && c.RoleName != "both" {
		bad("--role %s cannot be combined with --rates", c.RoleName)
	}
	if changed("rate") && o.ratesRaw != "" {
		bad("--rate and --rates cannot be combined (--rates runs each rate in turn)")
	}
	a, err := load.ParseArrivals(o.arrivalsRaw)
	if err != nil {
		bad("--arrivals: %v", err)
	}
	o.Arrivals = a
	if o.Ramp < 0 || o.MaxLag < 0 {
		bad("--ramp and --max-lag must not be negative")
	}
	if c.Duration > 0 && o.Ramp >= c.Duration {
		bad("--ramp must be shorter than --duration")
	}
	o.Rates = ladderRungs(o.ratesRaw, "--rates", "a positive rate (requests per second)", func(s string) (float64, bool) {
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil && v > 0 && !math.IsInf(v, 0)
	}, bad)
	c.needsDuration("--rates", "rate", len(o.Rates), bad)
}

// values records the open-loop flags of a run at rate (0: a closed-loop run records none).
func (o *OpenLoop) values(out map[string]any, rate float64) {
	if rate == 0 {
		return
	}
	out["rate"], out["arrivals"] = rate, string(o.Arrivals)
	out["ramp"], out["max-lag"] = o.Ramp.String(), o.MaxLag.String()
	if len(o.Rates) > 0 {
		out["rates"] = o.Rates
	}
	if o.SLOP99Ms > 0 {
		out["slo-p99-ms"] = o.SLOP99Ms
	}
}

// loadConfig sets the open loop of a run at rate (0: closed loop, nothing set).
func (o *OpenLoop) loadConfig(lcfg *load.Config, rate float64, seed int64) {
	if rate == 0 {
		return
	}
	lcfg.Rate, lcfg.Arrivals, lcfg.Seed, lcfg.Ramp, lcfg.MaxLag = rate, o.Arrivals, seed, o.Ramp, o.MaxLag
}

// rung is one step of a ladder: a concurrency level (--levels) or an offered rate (--rates),
// or the single run of each mode outside a ladder (rate = --rate, 0 in a closed loop), at a
// slot count (--slots, or a --slots-levels count; 0 for a suite without slots).
type rung struct {
	level int
	rate  float64
	slots int
}

// rungs lists the runs of each mode (before repetitions), slot counts outermost.
func (c *Config) rungs() []rung {
	var per []rung
	for _, l := range c.Levels {
		per = append(per, rung{level: l})
	}
	for _, r := range c.Rates {
		per = append(per, rung{rate: r})
	}
	if len(per) == 0 {
		per = []rung{{rate: c.Rate}}
	}
	var out []rung
	for _, n := range c.slotCounts() {
		for _, g := range per {
			g.slots = n
			out = append(out, g)
		}
	}
	return out
}

// forDuration says whether a run is bounded by --duration alone: a ladder rung, or a run at a
// rate with --duration, unless --requests was given.
func (c *Config) forDuration(g rung) bool {
	return (g.level > 0 || (g.rate > 0 && c.Duration > 0)) && !c.fs.Changed("requests")
}

// openLoopStats converts what the schedule did into the report's terms.
func openLoopStats(res *load.Result) *results.OpenLoop {
	ol := res.OpenLoop
	if ol == nil {
		return nil
	}
	out := &results.OpenLoop{
		TargetRPS: ol.TargetRPS, AchievedRPS: round1(res.AchievedRPS()), Arrivals: string(ol.Arrivals),
		Scheduled: res.Scheduled(), Late: ol.Late, Skipped: ol.Skipped, Unsent: ol.Unsent,
		ServiceMs: results.Latency(ol.Service.Summary()), ScheduleLagMs: results.Latency(ol.ScheduleLag.Summary()),
	}
	if out.Scheduled > 0 {
		out.SentShare = float64(int64(float64(res.Sent())/float64(out.Scheduled)*1000)) / 1000
	}
	out.HeldRate = results.HeldRate(out.SentShare)
	if enc, err := ol.Service.Encode(); err == nil {
		out.ServiceHistogram = enc
	}
	if enc, err := ol.ScheduleLag.Encode(); err == nil {
		out.ScheduleLagHistogram = enc
	}
	return out
}

// finishRateLadders adds one rate ladder per mode when --rates was given.
func (e *engine) finishRateLadders() {
	if len(e.cfg.Rates) == 0 {
		return
	}
	for _, mode := range e.cfg.Modes {
		if l := results.BuildRateLadder(mode.String(), e.report.Runs, e.cfg.SLOP99Ms); len(l.Rates) > 0 {
			e.report.RateLadders = append(e.report.RateLadders, l)
		}
	}
}

// printOpenLoop says which runs could not hold their rate, and each rate ladder's answer.
func printOpenLoop(w io.Writer, rep *results.Report, name string) {
	for _, r := range rep.Runs {
		ol := r.Load.OpenLoop
		if ol == nil {
			continue
		}
		fmt.Fprintf(w, "  %s at %s/s: achieved %.0f/s, sent %d of %d arrivals, service p99 %.2f ms, schedule lag p99 %.2f ms, late %d, skipped %d, unsent %d\n",
			r.Mode, formatRate(ol.TargetRPS), ol.AchievedRPS, ol.Scheduled-ol.Skipped-ol.Unsent, ol.Scheduled,
			ol.ServiceMs.P99, ol.ScheduleLagMs.P99, ol.Late, ol.Skipped, ol.Unsent)
		if !ol.HeldRate {
			fmt.Fprintf(w, "%s: warning: %s could not hold --rate %s: sent %.1f%% of its arrivals, achieved %.0f/s; latency counts the wait of the requests it fell behind on\n",
				name, r.Mode, formatRate(ol.TargetRPS), 100*ol.SentShare, ol.AchievedRPS)
		}
	}
	for _, l := range rep.RateLadders {
		switch {
		case l.SLOP99Ms == 0:
		case l.MaxRateAtSLO > 0:
			fmt.Fprintf(w, "  %s rate ladder: max rate at p99 ≤ %g ms: %s/s\n", l.Mode, l.SLOP99Ms, formatRate(l.MaxRateAtSLO))
		default:
			fmt.Fprintf(w, "  %s rate ladder: no rate kept p99 ≤ %g ms with ≥ 95%% of its arrivals sent\n", l.Mode, l.SLOP99Ms)
		}
	}
}

func formatRate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
