package engine

import "github.com/hotspotkit/hotspotkit/results"

// finishReport adds the repetition summaries and ladders.
func (e *engine) finishReport() {
	e.finishRateLadders()
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
