package engine

import "github.com/hotspotkit/hotspotkit/results"

// finishReport adds the repetition summaries and ladders.
func (e *engine) finishReport() {
	e.finishRateLadders()
	e.finishPoolLadders()
	e.finishNetwork() // network.go
	if e.cfg.Repeat > 1 {
		e.report.Summaries = results.Summarize(e.report.Runs)
	}
	if len(e.cfg.SlotsLevels) == 0 && len(e.cfg.Levels) == 0 && len(e.cfg.RTTLevels) == 0 {
		return
	}
	for _, mode := range e.cfg.Modes {
		var runs []results.Run
		for _, r := range e.report.Runs {
			if r.Mode == mode.String() {
				runs = append(runs, r)
			}
		}
		switch {
		case len(runs) == 0:
		case len(e.cfg.RTTLevels) > 0:
			e.report.RTTLadders = append(e.report.RTTLadders, results.BuildRTTLadder(mode.String(), runs))
		case len(e.cfg.SlotsLevels) > 0:
			e.report.SlotLadders = append(e.report.SlotLadders, results.BuildSlotLadder(mode.String(), runs))
		default:
			e.report.Ladders = append(e.report.Ladders, results.BuildLadder(mode.String(), runs))
		}
	}
}

// finishPoolLadders adds one pool-size ladder per mode when --pool-levels was given, each
// naming its best size by --slo-p99-ms (or by throughput alone without it).
func (e *engine) finishPoolLadders() {
	if len(e.cfg.PoolLevels) == 0 {
		return
	}
	e.report.PoolLadders = perMode(e, func(mode string) (results.PoolLadder, bool) {
		l := results.BuildPoolLadder(mode, e.report.Runs, e.cfg.SLOP99Ms)
		return l, len(l.Levels) > 0
	})
}

// perMode is, for each mode of the invocation in turn, the ladder build makes of its runs,
// left out where build says it has no rung (a mode that never ran).
func perMode[L any](e *engine, build func(mode string) (L, bool)) []L {
	var out []L
	for _, mode := range e.cfg.Modes {
		if l, ok := build(mode.String()); ok {
			out = append(out, l)
		}
	}
	return out
}
