package testkit

import (
	"slices"

	"github.com/spf13/pflag"
)

// Slotted hot rows (--slots): the suites built on package counters split each hot logical row
// into N physical rows, and --slots-levels runs each mode once per slot count. The engine only
// validates, records and loops over the counts; package counters owns the rows.
const (
	// MaxSlots caps --slots: past it the read of a total (a sum over the slots) costs more than
	// any contention it could spare, and slots are a smallint.
	MaxSlots = 1024
	// SlotPickHash picks a write's slot by a hash of its request id (reproducible).
	SlotPickHash = "hash"
	// SlotPickRandom draws a write's slot at random.
	SlotPickRandom = "random"
	// SlotPickRoundRobin gives request i slot i mod N (reproducible, and even over the
	// requests in flight together).
	SlotPickRoundRobin = "round-robin"
	// SlotPickSession gives each database session its own slot: the writing connection's seat
	// in the load pool mod N (database.Seat), so that at most ceil(sessions/N) sessions ever
	// write one physical row. In the queue modes, where a record's slot is its queue key and
	// every slot key belongs to one queue worker, it is round-robin over the requests.
	SlotPickSession = "session"
)

func (c *Config) registerSlots(fs *pflag.FlagSet, info Info) {
	fs.IntVar(&c.Slots, "slots", 1, "split each hot counter row into this many physical rows (slots, 1..1024); a write adds to one, a read sums them (1: one row, as without slots)")
	fs.StringVar(&c.SlotPick, "slot-pick", SlotPickHash, "how a write picks its slot: hash (of the request id), random, round-robin (request index mod N), or session (the writing connection's seat in the pool mod N)")
	fs.StringVar(&c.slotsLevelsRaw, "slots-levels", "", "compare slot counts in one invocation, e.g. 1,4,16,64 (one run per mode and count)")
	if !info.Slots {
		for _, name := range []string{"slots", "slot-pick", "slots-levels"} {
			_ = fs.MarkHidden(name)
		}
	}
}

// validateSlots checks --slots, --slot-pick and --slots-levels.
func (c *Config) validateSlots(info Info, bad func(string, ...any)) {
	if !info.Slots {
		for _, name := range []string{"slots", "slot-pick", "slots-levels"} {
			if c.fs.Changed(name) {
				bad("--%s: %s has no counter rows to split into slots", name, info.Name)
			}
		}
		return
	}
	if c.Slots < 1 || c.Slots > MaxSlots {
		bad("--slots must be 1..%d", MaxSlots)
	}
	if !slices.Contains([]string{SlotPickHash, SlotPickRandom, SlotPickRoundRobin, SlotPickSession}, c.SlotPick) {
		bad("--slot-pick must be %s, %s, %s or %s, not %q", SlotPickHash, SlotPickRandom, SlotPickRoundRobin, SlotPickSession, c.SlotPick)
	}
	c.SlotsLevels = ladderRungs(c.slotsLevelsRaw, "--slots-levels", "a positive integer", positiveInt, bad)
	for _, n := range c.SlotsLevels {
		if n > MaxSlots {
			bad("--slots-levels: %d is above %d", n, MaxSlots)
		}
	}
	switch {
	case len(c.SlotsLevels) > 0 && c.fs.Changed("slots"):
		bad("--slots and --slots-levels exclude each other")
	case len(c.SlotsLevels) > 0 && len(c.Levels) > 0:
		bad("--slots-levels and --levels exclude each other (one ladder per invocation)")
	case len(c.SlotsLevels) > 0 && c.OpenLoop.ratesRaw != "":
		bad("--slots-levels and --rates exclude each other (one ladder per invocation)")
	}
}

// slotValues records the slot flags of a suite that has slots: the pick only where it shapes
// anything, the ladder; each run's own count is recorded by runOne.
func (c *Config) slotValues(out map[string]any) {
	if c.fs.Lookup("slots").Hidden {
		return
	}
	if c.Slots > 1 || len(c.SlotsLevels) > 0 {
		out["slot-pick"] = c.SlotPick
	}
	if len(c.SlotsLevels) > 0 {
		out["slots-levels"] = c.SlotsLevels
	}
}

// slotCounts are the slot counts each mode runs at (rungs crosses them with the ladder):
// --slots-levels, else --slots, and 0 for a suite without slots.
func (c *Config) slotCounts() []int {
	switch {
	case c.fs.Lookup("slots").Hidden:
		return []int{0}
	case len(c.SlotsLevels) > 0:
		return c.SlotsLevels
	}
	return []int{c.Slots}
}
