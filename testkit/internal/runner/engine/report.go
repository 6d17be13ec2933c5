package engine

import "github.com/hotspotkit/hotspotkit/results"

// finishReport adds the repetition summaries and the ladders: one per mode and axis the
// invocation stepped over, each built from the runs and judged by the objective they recorded
// (results.BuildLadders), the same way for every axis; or a search's advice, whose runs differ
// in more than one axis and in length, and make no ladder (trials.go).
func (e *engine) finishReport() {
	e.finishNetwork() // network.go
	if e.advice != nil {
		e.finishAdvice()
		return
	}
	if e.cfg.Repeat > 1 {
		e.report.Summaries = results.Summarize(e.report.Runs)
	}
	e.report.Ladders = results.BuildLadders(e.report.Runs)
}
