package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestPoolLadderIsOneLevelPerSize runs --pool-levels over sync and async-compact: one verified
// run per mode and pool size, each on a pool of its own size (as its config records it and as
// the monitor saw the pool), and one pool ladder per mode with a level per size and a best
// size named by the objective.
func TestPoolLadderIsOneLevelPerSize(t *testing.T) {
	rep, stderr := suitetest.Runs(t, New(), 4, "--modes", "sync,async-compact", "--pool-levels", "2,4",
		"--requests", "200", "--concurrency", "8", "--slo-p99-ms", "60000")
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		suitetest.Completed(t, r, 200)
		if r.PoolSize != 2 && r.PoolSize != 4 || r.Config.MaxConnections != r.PoolSize || int(r.Pool.MaxConns) != r.PoolSize {
			t.Errorf("%s: pool size %d, config's max_connections %d, the pool's MaxConns %d", r.Mode, r.PoolSize,
				r.Config.MaxConnections, r.Pool.MaxConns)
		}
		if r.Pool.MaxAcquired > int32(r.PoolSize) {
			t.Errorf("%s at pool %d: %d connections acquired at once", r.Mode, r.PoolSize, r.Pool.MaxAcquired)
		}
	}
	if len(rep.PoolLadders) != 2 || len(rep.Ladders)+len(rep.RTTLadders)+len(rep.SlotLadders)+len(rep.RateLadders) != 0 {
		t.Fatalf("%d pool ladders (want 2) and other ladders %d %d %d %d", len(rep.PoolLadders), len(rep.Ladders),
			len(rep.RTTLadders), len(rep.SlotLadders), len(rep.RateLadders))
	}
	for i, l := range rep.PoolLadders {
		if want := []string{"sync", "async-compact"}[i]; l.Mode != want || len(l.Levels) != 2 || l.Levels[0].Pool != 2 || l.Levels[1].Pool != 4 {
			t.Fatalf("ladder %d: %+v, want %s at pools 2 and 4", i, l, want)
		}
		for _, lv := range l.Levels {
			if !lv.Verified || lv.ThroughputRPS <= 0 || !lv.MetSLO {
				t.Errorf("%s at pool %d: %+v", l.Mode, lv.Pool, lv)
			}
		}
		// Every size is verified and within a minute's p99: the best is the faster of the two.
		if best := l.BestPool; best != 2 && best != 4 || l.SLOP99Ms != 60000 {
			t.Errorf("%s: best pool %d at objective %v", l.Mode, best, l.SLOP99Ms)
		}
	}
	for _, want := range []string{"sync pool: 2 → ", "async-compact pool: 2 → ", "highest throughput with p99 ≤"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
}
