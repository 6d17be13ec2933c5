package engine

import (
	"fmt"
	"io"
	"strconv"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
)

// openLoopStats converts what the schedule did into the report's terms.
func openLoopStats(res *load.Result) *results.OpenLoop {
	ol := res.OpenLoop
	if ol == nil {
		return nil
	}
	out := &results.OpenLoop{
		TargetRPS: ol.TargetRPS, AchievedRPS: round1(res.AchievedRPS()), Arrivals: string(ol.Arrivals),
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

// finishRateLadders adds one rate ladder per mode when --rates was given.
func (e *engine) finishRateLadders() {
	if len(e.cfg.Rates) == 0 {
		return
	}
	for _, mode := range e.cfg.Modes {
		if l := results.BuildRateLadder(mode.String(), e.report.Runs, e.cfg.SLOP99Ms); len(l.Rates) > 0 {
			e.report.RateLadders = append(e.report.RateLadders, l)
		}
	}
}

// printOpenLoop says which runs could not hold their rate, and each rate ladder's answer.
func printOpenLoop(w io.Writer, rep *results.Report, name string) {
	for _, r := range rep.Runs {
		ol := r.Load.OpenLoop
		if ol == nil {
			continue
		}
		fmt.Fprintf(w, "  %s at %s/s: achieved %.0f/s, sent %d of %d arrivals, service p99 %.2f ms, schedule lag p99 %.2f ms, late %d, skipped %d, unsent %d\n",
			r.Mode, formatRate(ol.TargetRPS), ol.AchievedRPS, ol.Scheduled-ol.Skipped-ol.Unsent, ol.Scheduled,
			ol.ServiceMs.P99, ol.ScheduleLagMs.P99, ol.Late, ol.Skipped, ol.Unsent)
		if !ol.HeldRate {
			fmt.Fprintf(w, "%s: warning: %s could not hold --rate %s: sent %.1f%% of its arrivals, achieved %.0f/s; latency counts the wait of the requests it fell behind on\n",
				name, r.Mode, formatRate(ol.TargetRPS), 100*ol.SentShare, ol.AchievedRPS)
		}
	}
	for _, l := range rep.RateLadders {
		switch {
		case l.SLOP99Ms == 0:
		case l.MaxRateAtSLO > 0:
			fmt.Fprintf(w, "  %s rate ladder: max rate at p99 ≤ %g ms: %s/s\n", l.Mode, l.SLOP99Ms, formatRate(l.MaxRateAtSLO))
		default:
			fmt.Fprintf(w, "  %s rate ladder: no rate kept p99 ≤ %g ms with ≥ 95%% of its arrivals sent\n", l.Mode, l.SLOP99Ms)
		}
	}
}

func formatRate(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
