package advise

import (
	"cmp"
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// The space and its order of cost: every mode crossed with the values of every axis it uses,
// ranked by how much each asks of the service.

// CostOrder is the order of cost in words, as the advice records it.
const CostOrder = "the least change to the service first (sync; sync with its hot rows split into slots, " +
	"fewer slots first; an outbox; a queue: async, then async-compact; a mode of the suite's own, " +
	"another client in the service, last), then fewer sessions (a smaller pool), then less WAL per " +
	"request, then less persist lag"

// SpaceAxes are the axes a search may step, in the order a configuration is ranked by after
// its mode: slots (a change to the schema), the pool (sessions), then the queue's batch and
// flush interval (settings of the queue, ranked by what they measure: WAL, then lag).
var SpaceAxes = []*results.Axis{results.AxisSlots, results.AxisPool, results.AxisBatch, results.AxisFlushInterval}

// changeRank is how much a mode changes the service: sync none; an outbox a table and a flush
// loop; a queue a process's queue and its workers, compacting or not; a mode of the suite's
// own (River's client) another library in the service.
func changeRank(m testkit.Mode) int {
	switch {
	case m == testkit.Sync:
		return 0
	case m.Async() && m.Compacts():
		return 3
	case m.Async():
		return 2
	case m.Flushes():
		return 1
	}
	return 4
}

// uses says mode m has a use for axis a: a queue's settings only a mode with a queue; every
// other axis of the space every mode.
func uses(m testkit.Mode, a *results.Axis) bool {
	return a.Needs != results.NeedsQueue || m.Async()
}

// config is one configuration of the space, and what the search knows of it.
type config struct {
	index int
	mode  testkit.Mode
	at    results.Position
	// group is the index of its group: the configurations equal in the order of cost but for
	// what is measured (the queue's batch and flush interval), ranked among themselves by
	// their screening figures.
	group int

	status   string // results.Config*, or "" while the search is under way on it
	why      string
	prunedBy int // -1: none
	trials   []trial
	// rung is the longest rung it held (or nearly held) so far, -1 before its screening.
	rung int
}

// trial is one run of a configuration, judged.
type trial struct {
	run    int
	phase  string
	rung   int // the search's rung (-1: a confirmation or headroom run)
	length float64
	figs   figures
	misses []results.Miss
}

// held says the trial missed nothing.
func (t trial) held() bool { return len(t.misses) == 0 }

// buildSpace is every configuration of modes × the axes' values, in the order of cost, each
// with its group.
func buildSpace(modes []testkit.Mode, space map[string][]results.Value) []*config {
	var out []*config
	for _, m := range modes {
		positions := []results.Position{{}}
		for _, a := range SpaceAxes {
			if uses(m, a) {
				positions = results.Cross(positions, a, space[a.Name])
			}
		}
		for _, p := range positions {
			if len(p) == 0 {
				p = nil
			}
			out = append(out, &config{mode: m, at: p, prunedBy: -1, rung: -1})
		}
	}
	modeIndex := func(m testkit.Mode) int { return slices.Index(modes, m) }
	slices.SortStableFunc(out, func(x, y *config) int {
		if c := cmp.Compare(changeRank(x.mode), changeRank(y.mode)); c != 0 {
			return c
		}
		if c := cmp.Compare(modeIndex(x.mode), modeIndex(y.mode)); c != 0 {
			return c
		}
		for _, a := range SpaceAxes {
			if c := valueOf(x.at, a).Compare(valueOf(y.at, a)); c != 0 {
				return c
			}
		}
		return 0
	})
	group := -1
	for i, c := range out {
		c.index = i
		if i == 0 || !sameStructure(out[i-1], c) {
			group++
		}
		c.group = group
	}
	return out
}

// valueOf is p's value on axis a, its Unset value (or 0) when p leaves it out.
func valueOf(p results.Position, a *results.Axis) results.Value {
	if v, ok := p[a.Name]; ok {
		return v
	}
	if a.Unset != nil {
		return *a.Unset
	}
	return results.Value{}
}

// sameStructure says x and y are equal in the order of cost but for what is measured: the same
// mode, slots and pool.
func sameStructure(x, y *config) bool {
	return x.mode == y.mode && valueOf(x.at, results.AxisSlots) == valueOf(y.at, results.AxisSlots) &&
		valueOf(x.at, results.AxisPool) == valueOf(y.at, results.AxisPool)
}

// siblingAbove says y is x with a larger value on axis a and everything else equal: what a
// monotonicity rule over a prunes when x failed.
func siblingAbove(x, y *config, a *results.Axis) bool {
	if x.mode != y.mode || valueOf(y.at, a).Compare(valueOf(x.at, a)) <= 0 {
		return false
	}
	for _, b := range SpaceAxes {
		if b != a && valueOf(x.at, b) != valueOf(y.at, b) {
			return false
		}
	}
	return true
}
