package usagecounter

import (
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestNetworkFaultsKeepRunsExact strikes the network faults on both paths in the middle of
// short runs: a blackhole hangs requests for its window and then lets them finish (the
// longest request shows the hang), a reset breaks every connection at once (requests fail
// or are looked up); every run is exact either way.
func TestNetworkFaultsKeepRunsExact(t *testing.T) {
	// A reset connection's consumer leaves what it had read pending, taken over after
	// --reclaim-idle-ms: 1 s instead of the default's wait keeps the drain short.
	redis := []string{"--modes", "async-compact", "--queue-backend", "redis", "--redis", "managed", "--reclaim-idle-ms", "1000"}
	for _, c := range []struct {
		fault   string
		args    []string
		hangsMs float64 // the longest request took at least this long
	}{
		{"net-blackhole:pg@300ms+500ms", []string{"--modes", "sync"}, 400},
		{"net-reset:pg@300ms", []string{"--modes", "outbox"}, 0},
		{"net-blackhole:redis@300ms+500ms", redis, 400},
		{"net-reset:redis@300ms", redis, 0},
	} {
		t.Run(c.fault, func(t *testing.T) {
			if slices.Contains(c.args, "--redis") {
				redistest.Need(t)
			}
			kind, _, _ := strings.Cut(c.fault, ":")
			rep, _ := suitetest.Runs(t, New(), 1, append([]string{"--duration", "1200ms", "--requests", "0", "--rate", "400", "--concurrency", "8",
				"--fault", c.fault}, c.args...)...)
			r := rep.Runs[0]
			if !suitetest.Fired(r, kind) {
				t.Fatalf("%s did not strike: %+v", c.fault, r.Faults)
			}
			suitetest.Exact(t, r)
			if o := r.FaultOutcome; o == nil || o.LongestRequestMs < c.hangsMs || len(o.EndedBy) == 0 {
				t.Errorf("fault outcome %+v, want the longest request ≥ %v ms", o, c.hangsMs)
			}
			// Whatever the fault broke or hung, the run closed: no connection or goroutine left.
			if l := r.Leftover; l == nil || l.Leaked() {
				t.Errorf("after the run: %+v", l)
			}
		})
	}
}

// TestRTTLadderIsOneLevelPerRoundTrip runs --rtt-levels over two modes: one verified run per
// mode and round trip, each recording its own round trip, and one RTT ladder per mode.
func TestRTTLadderIsOneLevelPerRoundTrip(t *testing.T) {
	rep, stderr := suitetest.Runs(t, New(), 4, "--modes", "sync,async-compact", "--rtt-levels", "0,1ms",
		"--requests", "100", "--concurrency", "4")
	for _, r := range rep.Runs {
		if rtt := r.Rung()["db_rtt_ms"]; !r.Verification.Passed || rtt.Num != r.Config.DBRTTMs || (rtt.Num != 0 && rtt.Num != 1) {
			t.Errorf("%s at %v ms: verified %v, config's round trip %v", r.Mode, rtt, r.Verification.Passed, r.Config.DBRTTMs)
		}
	}
	if len(rep.Ladders) != 2 {
		t.Fatalf("%d ladders, want 2 (an RTT ladder per mode)", len(rep.Ladders))
	}
	for _, l := range rep.Ladders {
		if lv := l.Levels; l.Axis != "db_rtt_ms" || len(lv) != 2 || lv[0].Value.Num != 0 || lv[1].Value.Num != 1 || lv[1].Figures["throughput_rps"] <= 0 {
			t.Errorf("%s %s ladder %+v", l.Mode, l.Axis, lv)
		}
	}
	if !strings.Contains(stderr, "sync RTT ladder: 0 (measured ") || !strings.Contains(stderr, "1ms (measured ") {
		t.Errorf("the summary does not show the ladder:\n%s", stderr)
	}
}
