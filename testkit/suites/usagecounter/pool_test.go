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
		pool := int(r.Rung()["max_connections"].Num)
		if pool != 2 && pool != 4 || r.Config.MaxConnections != pool || int(r.Pool.MaxConns) != pool {
			t.Errorf("%s: pool size %d, config's max_connections %d, the pool's MaxConns %d", r.Mode, pool,
				r.Config.MaxConnections, r.Pool.MaxConns)
		}
		if r.Pool.MaxAcquired > int32(pool) {
			t.Errorf("%s at pool %d: %d connections acquired at once", r.Mode, pool, r.Pool.MaxAcquired)
		}
	}
	if len(rep.Ladders) != 2 {
		t.Fatalf("%d ladders, want 2 (a pool ladder per mode)", len(rep.Ladders))
	}
	for i, l := range rep.Ladders {
		if want := []string{"sync", "async-compact"}[i]; l.Axis != "max_connections" || l.Mode != want || len(l.Levels) != 2 ||
			l.Levels[0].Value.Num != 2 || l.Levels[1].Value.Num != 4 {
			t.Fatalf("ladder %d: %+v, want %s at pools 2 and 4", i, l, want)
		}
		for _, lv := range l.Levels {
			if !lv.Verified || lv.Figures["throughput_rps"] <= 0 || !lv.MetSLO {
				t.Errorf("%s at pool %v: %+v", l.Mode, lv.Value, lv)
			}
		}
		// Every size is verified and within a minute's p99: the best is the faster of the two.
		if best := l.Found; best == nil || best.Num != 2 && best.Num != 4 || l.SLOP99Ms != 60000 {
			t.Errorf("%s: best pool %v at objective %v", l.Mode, best, l.SLOP99Ms)
		}
	}
	for _, want := range []string{"sync pool ladder: 2 → ", "async-compact pool ladder: 2 → ", "highest throughput with p99 ≤"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
}
