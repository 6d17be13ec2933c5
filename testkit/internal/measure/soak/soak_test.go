package soak

import (
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// series builds 100 ms samples over d at rps(t) requests per second, with rss(t) and
// goroutines(t).
func series(start time.Time, d time.Duration, rps func(time.Duration) float64, rss func(time.Duration) int64, gr func(time.Duration) int) []monitor.Point {
	var pts []monitor.Point
	var done float64
	for t := time.Duration(0); t <= d; t += 100 * time.Millisecond {
		pts = append(pts, monitor.Point{Time: start.Add(t), Completed: int64(done), RSSBytes: rss(t), Goroutines: gr(t), OpenConns: 10})
		done += rps(t) / 10
	}
	return pts
}

func TestAnalyzeGrowthAndRecovery(t *testing.T) {
	start := time.Unix(1000, 0)
	// 1000 rps, nothing for 3 s after a fault at 70 s, 500 rps for the next 2 s, then back.
	rps := func(t time.Duration) float64 {
		switch {
		case t >= 70*time.Second && t < 73*time.Second:
			return 0
		case t >= 73*time.Second && t < 75*time.Second:
			return 500
		}
		return 1000
	}
	rss := func(t time.Duration) int64 { return 100<<20 + int64(t/time.Second)<<10 } // +1 KiB/s
	gr := func(t time.Duration) int {
		if t < 30*time.Second {
			return 50 + int(t/time.Second)
		}
		return 80
	}
	pts := series(start, 100*time.Second, rps, rss, gr)
	s := Analyze(pts, start, start.Add(100*time.Second), []Fault{{Kind: "crash-postgres", At: start.Add(70 * time.Second)}})
	if s.RSSAtMinuteBytes != 100<<20+60<<10 || s.RSSEndBytes != 100<<20+99<<10 {
		t.Errorf("rss at minute %d, end %d", s.RSSAtMinuteBytes, s.RSSEndBytes)
	}
	if s.RSSGrowthPct != 0 { // 39 KiB of 100 MiB rounds to 0.0%
		t.Errorf("rss growth %.1f%%, want 0.0", s.RSSGrowthPct)
	}
	if s.GoroutineGrowth != 0 || s.GoroutinesAtMinute != 80 || s.MaxOpenConns != 10 {
		t.Errorf("goroutines %d -> %d (growth %d), conns %d", s.GoroutinesAtMinute, s.GoroutinesEnd, s.GoroutineGrowth, s.MaxOpenConns)
	}
	if len(s.Recoveries) != 1 {
		t.Fatalf("recoveries %+v", s.Recoveries)
	}
	r := s.Recoveries[0]
	// The first window at ≥ 900 rps starts once at most 0.1 s of it is at 500 rps: from
	// 74.9 s, ending 75.9 s, 5.9 s after the fault.
	if r.BaselineRPS != 1000 || r.RecoveryMs < 5800 || r.RecoveryMs > 6000 || r.AtMs != 70000 {
		t.Errorf("recovery %+v, want baseline 1000, ~5900 ms", r)
	}
}

func TestAnalyzeNeverRecovered(t *testing.T) {
	start := time.Unix(1000, 0)
	rps := func(t time.Duration) float64 {
		if t >= 5*time.Second {
			return 10
		}
		return 1000
	}
	pts := series(start, 10*time.Second, rps, func(time.Duration) int64 { return 1 }, func(time.Duration) int { return 1 })
	s := Analyze(pts, start, start.Add(10*time.Second), []Fault{{Kind: "restart-postgres", At: start.Add(5 * time.Second)}})
	if r := s.Recoveries[0]; r.RecoveryMs != -1 {
		t.Errorf("recovery %+v, want -1 (never)", r)
	}
}
