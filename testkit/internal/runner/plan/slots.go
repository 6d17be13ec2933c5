package plan

import (
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// Slotted hot rows (--slots): a suite with slots (Info.Slots: the ones built on package
// counters) splits each hot logical row into N physical rows, and --slots-levels runs each mode
// once per slot count. The plan only validates, records and lists the counts; the suite owns
// the rows.

// MaxSlots caps --slots (its max tag): past it the read of a total (a sum over the slots) costs more than
// any contention it could spare, and slots are a smallint.
const MaxSlots = 1024

var slotFlags = []string{"slots", "slot-pick", "slots-levels"}

// registerSlots registers --slots-levels, after --slots and --slot-pick (settings of
// RunConfig's, settings.go), and hides the three from a suite without slots.
func (c *parser) registerSlots() {
	fs := c.fs
	fs.StringVar(&c.slotsLevelsRaw, "slots-levels", "", "compare slot counts in one invocation, e.g. 1,4,16,64 (one run per mode and count)")
	if !c.Slotted {
		for _, name := range slotFlags {
			_ = fs.MarkHidden(name)
		}
	}
}

// validateSlots checks --slots, --slot-pick and --slots-levels.
func (c *parser) validateSlots(bad func(string, ...any)) {
	if !c.Slotted {
		for _, name := range slotFlags {
			if c.fs.Changed(name) {
				bad("--%s: %s has no counter rows to split into slots", name, c.info.Name)
			}
		}
		return
	}
	if !slices.Contains(testkit.SlotPicks, c.SlotPick) {
		picks := testkit.SlotPicks
		bad("--slot-pick must be %s or %s, not %q", strings.Join(picks[:len(picks)-1], ", "), picks[len(picks)-1], c.SlotPick)
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
	case len(c.SlotsLevels) > 0 && c.ratesRaw != "":
		bad("--slots-levels and --rates exclude each other (one ladder per invocation)")
	}
}

// slotCounts are the slot counts each mode runs at (Rungs crosses them with the ladder):
// --slots-levels, else --slots, and 0 for a suite without slots.
func (c *Plan) slotCounts() []int {
	switch {
	case !c.Slotted:
		return []int{0}
	case len(c.SlotsLevels) > 0:
		return c.SlotsLevels
	}
	return []int{c.Slots}
}
