// Package soak owns the figures of a long run under rotating faults (--fault-every): how
// much the process's resident memory and goroutines grew after the first minute of load,
// and for each fault how long the throughput took to come back. It reads the monitor's
// series (testkit/internal/measure/monitor) and the injected faults, and computes; it samples nothing itself.
package soak

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// Settle is how long the load runs before the reference point of the growth figures.
const Settle = time.Minute

const (
	window   = time.Second // the throughput a recovery is judged on
	before   = time.Minute // the throughput a recovery is measured against
	recovery = 0.9         // share of that throughput that counts as recovered
)

// Fault is one fault that struck, at At.
type Fault struct {
	Kind string
	At   time.Time
}

// Analyze computes the soak figures from the monitor's series between the load's start and
// end. With a load shorter than Settle the growth is measured from its first sample.
func Analyze(series []monitor.Point, start, end time.Time, faults []Fault) *results.Soak {
	var pts []monitor.Point
	for _, p := range series {
		if !p.Time.Before(start) && !p.Time.After(end) {
			pts = append(pts, p)
		}
	}
	out := &results.Soak{Recoveries: []results.Recovery{}}
	if len(pts) == 0 {
		return out
	}
	ref := pts[0]
	for _, p := range pts {
		if p.Time.Sub(start) >= Settle {
			ref = p
			break
		}
	}
	// The end point is the last sample a window before the load ended: the workers are
	// still all there (at the very end they are returning).
	last := pts[len(pts)-1]
	for i := len(pts) - 1; i > 0 && end.Sub(pts[i].Time) < window; i-- {
		last = pts[i-1]
	}
	out.RSSAtMinuteBytes, out.RSSEndBytes = ref.RSSBytes, last.RSSBytes
	if ref.RSSBytes > 0 {
		out.RSSGrowthPct = units.Round(100*float64(last.RSSBytes-ref.RSSBytes)/float64(ref.RSSBytes), 1)
	}
	out.GoroutinesAtMinute, out.GoroutinesEnd = ref.Goroutines, last.Goroutines
	out.GoroutineGrowth = last.Goroutines - ref.Goroutines
	for _, p := range pts {
		out.MaxOpenConns = max(out.MaxOpenConns, p.OpenConns)
	}
	for _, f := range faults {
		out.Recoveries = append(out.Recoveries, recoveryOf(pts, start, f))
	}
	return out
}

// recoveryOf measures the throughput of the minute before f (or since the load started), then
// finds the first 1 s window from f on whose throughput is back at 90% of it.
func recoveryOf(pts []monitor.Point, start time.Time, f Fault) results.Recovery {
	r := results.Recovery{Kind: f.Kind, AtMs: units.Ms(f.At.Sub(start)), RecoveryMs: -1}
	from := f.At.Add(-before)
	if from.Before(start) {
		from = start
	}
	base, ok := rate(pts, from, f.At)
	if !ok || base <= 0 {
		return r
	}
	r.BaselineRPS = units.Round(base, 1)
	for i, p := range pts {
		if p.Time.Before(f.At) {
			continue
		}
		j := i
		for j < len(pts) && pts[j].Time.Sub(p.Time) < window {
			j++
		}
		if j == len(pts) {
			break
		}
		q := pts[j]
		if float64(q.Completed-p.Completed)/q.Time.Sub(p.Time).Seconds() >= recovery*base {
			r.RecoveryMs = units.Ms(q.Time.Sub(f.At))
			break
		}
	}
	return r
}

// rate is the throughput between the samples nearest after from and before to.
func rate(pts []monitor.Point, from, to time.Time) (float64, bool) {
	var a, b *monitor.Point
	for i := range pts {
		p := &pts[i]
		if a == nil && !p.Time.Before(from) {
			a = p
		}
		if p.Time.Before(to) {
			b = p
		}
	}
	if a == nil || b == nil || !b.Time.After(a.Time) {
		return 0, false
	}
	return float64(b.Completed-a.Completed) / b.Time.Sub(a.Time).Seconds(), true
}
