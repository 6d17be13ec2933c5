package plan

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

// --advise: instead of a fixed list of runs, a search over the remedy space (the modes and the
// ladder flags of the axes a configuration is made of: --slots-levels, --pool-levels,
// --batch-levels, --flush-interval-levels, several at once) for the cheapest configuration
// that holds the objectives at the load given (--rate, or --concurrency), within a budget of
// time (package advise; docs/advisor.md). Here: its flags and what they must agree with.

// Advice is --advise and its flags typed.
type Advice struct {
	// On is --advise.
	On bool
	// Budget is --advise-budget: how long the whole invocation may take.
	Budget time.Duration
	// Objectives are --slo-p99-ms, --slo-lag-p99-ms and --max-server-sessions.
	Objectives results.Objectives
}

// DefaultAdviseBudget is --advise-budget's default.
const DefaultAdviseBudget = 10 * time.Minute

// adviseAxes are the axes whose ladder flags make the space of --advise: what a configuration
// is made of. The load's axes (--levels, --rates) and the round trip's (--rtt-levels) are not
// remedies.
var adviseAxes = []*results.Axis{results.AxisSlots, results.AxisPool, results.AxisBatch, results.AxisFlushInterval}

// registerAdvise registers --advise and its flags (the request p99's objective is the setting
// --slo-p99-ms).
func (c *parser) registerAdvise() {
	fs := c.fs
	fs.BoolVar(&c.Advice.On, "advise", false, "search the remedies for the cheapest configuration that holds the objectives (--slo-p99-ms, --slo-lag-p99-ms, --max-server-sessions) at the load given (--rate, or --concurrency) for --duration: --modes crossed with the values of the ladder flags given of the slots, the pool, the queue's batch and flush interval, several at once; then its confirmation against the runner-up and its headroom (docs/advisor.md)")
	fs.DurationVar(&c.Advice.Budget, "advise-budget", DefaultAdviseBudget, "with --advise: how long the whole invocation may take, set-up included (e.g. 10m); a search the budget cannot finish says what it would run next")
	fs.Float64Var(&c.Advice.Objectives.LagP99Ms, "slo-lag-p99-ms", 0, "with --advise: the persist lag's p99 objective, in ms, for the modes that defer their writes (a queue's lag is measured; an outbox's is not, so it cannot be shown to hold)")
	fs.IntVar(&c.Advice.Objectives.MaxServerSessions, "max-server-sessions", 0, "with --advise: the most sessions of the service PostgreSQL may hold at once (a run's pool.max_server_sessions)")
}

// validateAdvise checks --advise against the other flags, and its flags without it.
func (c *parser) validateAdvise(bad func(string, ...any)) {
	changed, a := c.fs.Changed, &c.Advice
	a.Objectives.P99Ms = c.SLOP99Ms
	if !a.On {
		for _, f := range []string{"advise-budget", "slo-lag-p99-ms", "max-server-sessions"} {
			if changed(f) {
				bad("--%s needs --advise (it judges a search's configurations)", f)
			}
		}
		return
	}
	o := a.Objectives
	switch {
	case a.Budget <= 0:
		bad("--advise-budget must be positive (e.g. 10m)")
	case changed("slo-lag-p99-ms") && o.LagP99Ms <= 0:
		bad("--slo-lag-p99-ms must be positive")
	case changed("max-server-sessions") && o.MaxServerSessions <= 0:
		bad("--max-server-sessions must be positive")
	case !changed("slo-p99-ms") && o.LagP99Ms <= 0 && o.MaxServerSessions <= 0:
		bad("--advise needs an objective: --slo-p99-ms, --slo-lag-p99-ms or --max-server-sessions")
	}
	if c.Duration == 0 {
		bad("--advise needs --duration: how long a configuration must hold (shorter trials screen at a quarter and a half of it)")
	}
	if quarter := c.Duration / 4; c.Duration > 0 && (c.Warmup >= quarter || c.Ramp >= quarter) {
		bad("--warmup and --ramp must be shorter than a quarter of --duration with --advise (the screening trial's length, %s)", quarter)
	}
	for _, f := range []struct {
		flag, why string
		given     bool
	}{
		{"requests", "every trial runs for its length (--duration, or a fraction of it)", changed("requests")},
		{"repeat", "it repeats what it needs itself", c.Repeat > 1},
		{"fault", "it searches without faults", len(c.faultsRaw) > 0},
		{"fault-every", "it searches without faults", changed("fault-every")},
	} {
		if f.given {
			bad("--%s cannot be combined with --advise: %s", f.flag, f.why)
		}
	}
	for _, ax := range []*results.Axis{results.AxisConcurrency, results.AxisRate, results.AxisRTT} {
		if c.Steps(ax) {
			bad("%s cannot be combined with --advise: it holds one load (--rate or --concurrency) and one round trip, and ramps the load itself for the headroom", ax.FlagName())
		}
	}
	if role := c.Settings.Role; role != "" && role != "both" {
		bad("--role %s cannot be combined with --advise (a search runs in one process)", role)
	}
}

// Space is what --advise searches: the values of each ladder flag given of the axes a
// configuration is made of, by axis name.
func (c *Plan) Space() map[string][]results.Value {
	out := map[string][]results.Value{}
	for _, a := range adviseAxes {
		if vs := c.Ladder[a.Name]; len(vs) > 0 {
			out[a.Name] = vs
		}
	}
	return out
}
