package plan

import (
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// Slotted hot rows (--slots): a suite with slots (Info.Slots: the ones built on package
// counters) splits each hot logical row into N physical rows, and --slots-levels (the slots'
// axis, ladder.go) runs each mode once per slot count. The plan only validates and records the
// counts; the suite owns the rows.

// MaxSlots caps --slots (its max tag): past it the read of a total (a sum over the slots) costs more than
// any contention it could spare, and slots are a smallint.
const MaxSlots = 1024

var slotFlags = []string{"slots", "slot-pick"}

// hideSlots hides --slots and --slot-pick (settings of RunConfig's, settings.go) from a suite
// without slots.
func (c *parser) hideSlots() {
	if !c.Slotted {
		for _, name := range slotFlags {
			_ = c.fs.MarkHidden(name)
		}
	}
}

// validateSlots checks --slots and --slot-pick.
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
}
