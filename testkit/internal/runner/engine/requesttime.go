package engine

import (
	"runtime/debug"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// gcPauses is the process's total GC stop-the-world time so far.
func gcPauses() time.Duration {
	var s debug.GCStats
	debug.ReadGCStats(&s)
	return s.PauseTotal
}

// requestTime is where the request path's time went (dbstats.RequestTime), from the load
// pool's tracer, the server's times and the load's own figures: the measured requests' mean
// latency (their service time in an open loop, not their wait for a worker) and pool wait.
func requestTime(tr *stmttime.Tracer, server map[string]dbstats.Timed, res *load.Result, gcPause time.Duration) *results.RequestTime {
	latency := res.Latency.Summary().Mean
	if ol := res.OpenLoop; ol != nil {
		latency = ol.Service.Summary().Mean
	}
	return dbstats.RequestTime(tr.Totals(), server, dbstats.Requests{N: res.Attempted(), LatencyMs: latency,
		AcquireMs: res.AcquireWait.Summary().Mean, GCPauseMs: gcPause.Seconds() * 1000})
}
