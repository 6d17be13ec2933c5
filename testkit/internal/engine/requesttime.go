package engine

import (
	"math"
	"runtime/debug"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/dbstats"
	"github.com/hotspotkit/hotspotkit/testkit/internal/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/stmttime"
)

// gcPauses is the process's total GC stop-the-world time so far.
func gcPauses() time.Duration {
	var s debug.GCStats
	debug.ReadGCStats(&s)
	return s.PauseTotal
}

// requestTime is where the request path's time went (results.RequestTime): the load pool's
// statements as its tracer saw them, beside the server's times for the same texts, and what of
// the requests' latency lies outside the pool and the statements. It is nil when the requests
// sent no statement (a queue mode's only enqueue).
func requestTime(tr *stmttime.Tracer, server map[string]dbstats.Timed, res *load.Result, gcPause time.Duration) *results.RequestTime {
	totals := tr.Totals()
	requests := res.Attempted()
	if len(totals) == 0 || requests == 0 {
		return nil
	}
	byText := make(map[string]dbstats.Timed, len(server))
	for q, t := range server {
		byText[stmttime.Normalize(q)] = t
	}
	n := float64(requests)
	latency := res.Latency.Summary().Mean
	if ol := res.OpenLoop; ol != nil {
		latency = ol.Service.Summary().Mean // the request's own time, not its wait for a worker
	}
	rt := &results.RequestTime{Requests: requests, LatencyMeanMs: latency,
		AcquireMeanMs: res.AcquireWait.Summary().Mean, GCPauseMs: roundTo(gcPause.Seconds()*1000, 3)}
	var client, onServer float64 // ms, over every request
	for _, t := range totals {
		st := results.StatementTime{Query: clip(stmttime.Normalize(t.SQL), 300), Calls: t.Calls,
			ClientMeanMs: roundTo(t.Total.Seconds()*1000/float64(t.Calls), 4), PerRequest: roundTo(float64(t.Calls)/n, 4)}
		client += t.Total.Seconds() * 1000
		if s, ok := byText[stmttime.Normalize(t.SQL)]; ok && s.Calls > 0 {
			mean := s.TotalMs / float64(s.Calls)
			st.ServerMeanMs = roundTo(mean, 4)
			onServer += mean * float64(t.Calls)
		}
		rt.Statements = append(rt.Statements, st)
	}
	rt.StatementsMeanMs = roundTo(client/n, 4)
	if server != nil {
		rt.ServerMeanMs = roundTo(onServer/n, 4)
	}
	rt.OtherMeanMs = roundTo(rt.LatencyMeanMs-rt.AcquireMeanMs-rt.StatementsMeanMs, 4)
	return rt
}

func roundTo(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
