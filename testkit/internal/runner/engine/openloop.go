package engine

import (
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// openLoopStats converts what the schedule did into the report's terms.
func openLoopStats(res *load.Result) *results.OpenLoop {
	ol := res.OpenLoop
	if ol == nil {
		return nil
	}
	out := &results.OpenLoop{
		TargetRPS: ol.TargetRPS, AchievedRPS: units.Round(res.AchievedRPS(), 1), Arrivals: string(ol.Arrivals),
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
