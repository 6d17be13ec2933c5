package plan

import (
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// The ladders: a flag per axis (results.Axes: --levels, --slots-levels, --rtt-levels,
// --pool-levels, --rates, ...), each registered right after the setting it steps, parsed and
// bounded as its axis says, and checked against the invocation by the rules here, the same for
// every axis. The values given are recorded in the RunConfig's Ladder; Rungs crosses them, and
// each run takes its rung's value in the axis's setting (RunConfig), so the engine reads a
// run's concurrency, slots, round trip, pool size and rate from its config alone.

// registerLadders registers the ladder flag of every axis that steps setting s (called right
// after s is registered, so --help lists a ladder below what it steps), hidden where the suite
// lacks what the axis needs.
func (c *parser) registerLadders(s results.Setting) {
	for _, a := range results.Axes {
		if a.Name != s.Key {
			continue
		}
		if c.ladderRaw == nil {
			c.ladderRaw = map[string]*string{}
		}
		c.ladderRaw[a.Name] = c.fs.String(a.Flag, "", a.Usage)
		if a.Needs == results.NeedsSlots && !c.Slotted {
			_ = c.fs.MarkHidden(a.Flag)
		}
	}
}

// validateLadders parses the ladder flags into the config's Ladder and checks each against
// the invocation, with one rule for all: its values as its axis bounds them; not beside the
// flag of the setting it steps; what it needs (a suite with slots, modes with a queue); a
// --duration when its rungs run for one; every process of a split run the same rungs; and one
// ladder per invocation. That last is a choice of this rule alone: Rungs, the runs' configs,
// the summaries and BuildLadders all work over several axes at once, and --advise searches
// over several (advise.go): with it, several are given at once, and an axis of the queue's
// needs only some mode of --modes with a queue (the others run without it).
func (c *parser) validateLadders(bad func(string, ...any)) {
	c.Ladder = nil
	var given []string
	for _, a := range results.Axes {
		raw, ok := c.ladderRaw[a.Name]
		if !ok || *raw == "" {
			continue
		}
		values, errs := a.ParseList(*raw)
		for _, err := range errs {
			bad("%s: %v", a.FlagName(), err)
		}
		if len(values) == 0 {
			continue
		}
		if c.Ladder == nil {
			c.Ladder = map[string][]results.Value{}
		}
		c.Ladder[a.Name] = values
		given = append(given, a.FlagName())
		if s, _ := results.LookupSetting(a.Name); c.fs.Changed(s.Flag) {
			bad("--%s and %s exclude each other (%s sets it for each run)", s.Flag, a.FlagName(), a.FlagName())
		}
		if why := c.lacks(a); why != "" {
			bad("%s: %s", a.FlagName(), why)
		}
		if a.ForDuration && c.Duration == 0 {
			bad("%s needs --duration (the time spent at each level)", a.FlagName())
		}
		if role := c.Settings.Role; role != "" && role != "both" {
			bad("--role %s cannot be combined with %s (every process of a split run must run the same rungs)", role, a.FlagName())
		}
	}
	if len(given) > 1 && !c.Advice.On {
		bad("%s exclude each other (one ladder per invocation); --advise searches over several at once", strings.Join(given, " and "))
	}
}

// lacks says what the invocation lacks for a ladder over a to mean anything ("" nothing).
func (c *parser) lacks(a *results.Axis) string {
	switch a.Needs {
	case results.NeedsSlots:
		if !c.Slotted {
			return c.info.Name + " has no counter rows to split into slots"
		}
	case results.NeedsQueue:
		if c.Advice.On && slices.ContainsFunc(c.Modes, testkit.Mode.Async) {
			return "" // a search gives the queue's axis to the modes with a queue
		}
		var without []string
		for _, m := range c.Modes {
			if !m.Async() {
				without = append(without, m.String())
			}
		}
		if have := "has"; len(without) > 0 {
			if len(without) > 1 {
				have = "have"
			}
			return strings.Join(without, " and ") + " " + have + " no queue, whose " + a.Title + " it steps (--modes with async modes only)"
		}
	}
	return ""
}

// objectiveFlags names the ladder flags whose rule judges by --slo-p99-ms: "--pool-levels or
// --rates".
func objectiveFlags() string {
	var flags []string
	for _, a := range results.Axes {
		if a.Rule != nil && a.Rule.Objective {
			flags = append(flags, a.FlagName())
		}
	}
	return strings.Join(flags, " or ")
}

// Steps says the invocation steps over axis a (its ladder flag was given).
func (c *Plan) Steps(a *results.Axis) bool { return len(c.Ladder[a.Name]) > 0 }

// Rungs lists the runs of each mode (before repetitions): every combination of the values of
// the axes stepped over, the first axis outermost, each a position on them; one empty
// position (every setting as its flag gives it) without a ladder.
func (c *Plan) Rungs() []results.Position {
	out := []results.Position{{}}
	for _, a := range results.Axes {
		out = results.Cross(out, a, c.Ladder[a.Name])
	}
	return out
}

// ForDuration says whether a run at rung is bounded by --duration alone: a rung of an axis
// whose rungs run for it (a concurrency, a rate), a run at a rate with --duration, or a trial
// of --advise (for its own length), unless --requests was given.
func (c *Plan) ForDuration(rung results.Position) bool {
	if c.RequestsGiven {
		return false
	}
	if c.Advice.On { // every trial of a search runs for its length
		return true
	}
	for name := range rung {
		if a := results.AxisNamed(name); a != nil && a.ForDuration {
			return true
		}
	}
	return c.Rate > 0 && c.Duration > 0
}

// Most is the largest value any run of the invocation takes on axis a: its ladder's last, or
// the setting's own (the temporary server's max_connections and the calibration are sized for
// the largest pool, a suite seeds the most slots any run splits a row into).
func (c *Plan) Most(a *results.Axis) results.Value {
	if values := c.Ladder[a.Name]; len(values) > 0 {
		return values[len(values)-1]
	}
	return a.Of(c.Settings.RunConfig)
}

// MaxPool is the largest pool of any run (Most of the pool's axis).
func (c *Plan) MaxPool() int { return int(c.Most(results.AxisPool).Num) }

// SlotsAt is the slots of a run at rung: its slot count, 0 for a suite without slots.
func (c *Plan) SlotsAt(rung results.Position) int {
	if !c.Slotted {
		return 0
	}
	if v, ok := rung[results.AxisSlots.Name]; ok {
		return int(v.Num)
	}
	return c.Slots
}
