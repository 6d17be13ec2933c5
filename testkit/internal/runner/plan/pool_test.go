package plan

import (
	"slices"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// --pool-levels: sizes sorted without repeats, one rung per size (the pool ladder's only
// rungs), the server and calibration sized for the largest, the ladder and the objective in
// every run's config.
func TestPoolLevelsAreRungs(t *testing.T) {
	p := parse(t, usagecounter.New(), "--pool-levels 16,4,64,16 --slo-p99-ms 50 --requests 300")
	if !slices.Equal(p.PoolLevels, []int{4, 16, 64}) {
		t.Fatalf("pool levels %v, want [4 16 64]", p.PoolLevels)
	}
	var pools []int
	for _, g := range p.Rungs() {
		if g.Level != 0 || g.Rate != 0 || g.RTT != 0 || p.ForDuration(g) {
			t.Errorf("rung %+v: want a closed-loop run bounded by --requests", g)
		}
		pools = append(pools, g.Pool)
	}
	if !slices.Equal(pools, []int{4, 16, 64}) {
		t.Errorf("rungs' pools %v, want [4 16 64]", pools)
	}
	if p.MaxPool() != 64 {
		t.Errorf("MaxPool %d, want 64 (the largest level, not --max-connections' default)", p.MaxPool())
	}
	rc := p.RunConfig(0, 100, 300, 0)
	if !slices.Equal(rc.PoolLevels, []int{4, 16, 64}) || rc.SLOP99Ms != 50 {
		t.Errorf("recorded pool_levels %v, slo_p99_ms %v", rc.PoolLevels, rc.SLOP99Ms)
	}

	// Without the ladder: one rung per mode at --max-connections, which the server fits.
	p = parse(t, usagecounter.New(), "--max-connections 12")
	if g := p.Rungs(); len(g) != 1 || g[0].Pool != 12 || p.MaxPool() != 12 {
		t.Errorf("rungs %+v, MaxPool %d: want one at pool 12", g, p.MaxPool())
	}
	if rc := p.RunConfig(0, 100, 300, 0); rc.PoolLevels != nil || rc.SLOP99Ms != 0 {
		t.Errorf("a run off a pool ladder records pool_levels %v, slo_p99_ms %v", rc.PoolLevels, rc.SLOP99Ms)
	}
}

// A bad size, or the ladder beside what it excludes, is one line before anything starts.
func TestPoolLevelsRefusals(t *testing.T) {
	for args, want := range map[string]string{
		"--pool-levels 4,0":                             `--pool-levels: "0" is not a positive integer`,
		"--pool-levels -4":                              `--pool-levels: "-4" is not a positive integer`,
		"--pool-levels 4,eight":                         `--pool-levels: "eight" is not a positive integer`,
		"--pool-levels 4,2.5":                           `--pool-levels: "2.5" is not a positive integer`,
		"--pool-levels 4,":                              `--pool-levels: "" is not a positive integer`,
		"--pool-levels 4,20000":                         "--pool-levels: 20000 is above 10000",
		"--pool-levels 4,8 --max-connections 8":         "--max-connections and --pool-levels exclude each other",
		"--pool-levels 4,8 --levels 1,2 --duration 1s":  "one ladder per invocation",
		"--pool-levels 4,8 --slots-levels 1,4":          "one ladder per invocation",
		"--pool-levels 4,8 --rates 10,20 --duration 1s": "one ladder per invocation",
		"--pool-levels 4,8 --rtt-levels 0,1ms":          "one ladder per invocation",
		"--slo-p99-ms 50":                               "--slo-p99-ms needs --rates or --pool-levels",
		"--pool-levels 4,8 --slo-p99-ms -1":             "--slo-p99-ms must be positive",
		"--pool-levels 4,8 --role producer --redis-url redis://localhost:1 --queue-backend redis": "--role producer cannot be combined with --pool-levels",
	} {
		refused(t, usagecounter.New(), args, want)
	}
}
