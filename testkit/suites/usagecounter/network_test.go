package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestEveryModeVerifiesOverA1msNetwork(t *testing.T) {
	suitetest.OverNetwork(t, New(), 100, 8)
}

// TestNetworkFaultsKeepRunsExact strikes the network faults on both paths in the middle of
// short runs: a blackhole hangs requests for its window and then lets them finish (the
// longest request shows the hang), a reset breaks every connection at once (requests fail
// or are looked up); every run is exact either way.
func TestNetworkFaultsKeepRunsExact(t *testing.T) {
	redis := []string{"--modes", "async-compact", "--queue-backend", "redis", "--redis", "managed"}
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
			kind, _, _ := strings.Cut(c.fault, ":")
			rep, _ := suitetest.Runs(t, New(), 1, append([]string{"--duration", "1200ms", "--requests", "0", "--concurrency", "8",
				"--fault", c.fault}, c.args...)...)
			r := rep.Runs[0]
			if !suitetest.Fired(r, kind) {
				t.Fatalf("%s did not strike: %+v", c.fault, r.Faults)
			}
			suitetest.Exact(t, r)
			if o := r.FaultOutcome; o == nil || o.LongestRequestMs < c.hangsMs || len(o.EndedBy) == 0 {
				t.Errorf("fault outcome %+v, want the longest request ≥ %v ms", o, c.hangsMs)
			}
		})
	}
}
