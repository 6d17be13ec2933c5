package backend

import (
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
)

// flushTime converts the queue's flushing times (ns) into the report's (ms, per batch).
func flushTime(t queue.FlushTimes, batches *hist.Histogram) *results.FlushTime {
	total := results.FlushPhasesMs{Build: nsMs(t.BuildNs), Begin: nsMs(t.BeginNs), Copy: nsMs(t.CopyNs),
		Statements: nsMs(t.StatementsNs), Commit: nsMs(t.CommitNs), PipelineWait: nsMs(t.PipelineWaitNs),
		Retry: nsMs(t.RetryNs), Wait: nsMs(t.WaitNs), Idle: nsMs(t.IdleNs)}
	per := results.FlushPhasesMs{}
	if n := float64(t.Batches); n > 0 {
		d := func(v float64) float64 { return units.Round(v/n, 3) }
		per = results.FlushPhasesMs{Build: d(total.Build), Begin: d(total.Begin), Copy: d(total.Copy),
			Statements: d(total.Statements), Commit: d(total.Commit), PipelineWait: d(total.PipelineWait),
			Retry: d(total.Retry), Wait: d(total.Wait), Idle: d(total.Idle)}
	}
	return &results.FlushTime{Batches: t.Batches, TotalMs: total, PerBatchMs: per, BatchMs: results.Latency(batches.Summary())}
}

// nsMs is ns in ms, to the µs.
func nsMs(ns int64) float64 { return units.Ms(time.Duration(ns)) }
