package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// --advise takes several ladder flags at once as its space (a queue's axis beside modes without
// a queue), its objectives and budget, and every trial runs for its length, recording the
// axes of its rung only.
func TestAdviseSpace(t *testing.T) {
	p := parse(t, usagecounter.New(), "--advise --modes sync,async-compact --slots-levels 1,16 --pool-levels 8,32 "+
		"--batch-levels 200,1000 --flush-interval-levels 10,100 --slo-p99-ms 50 --slo-lag-p99-ms 200 --max-server-sessions 40 "+
		"--duration 8s --rate 1000 --advise-budget 5m")
	if !p.Advice.On || p.Advice.Budget != 5*time.Minute || p.Advice.Objectives != (results.Objectives{P99Ms: 50, LagP99Ms: 200, MaxServerSessions: 40}) {
		t.Errorf("advice %+v", p.Advice)
	}
	space := p.Space()
	for _, a := range []*results.Axis{results.AxisSlots, results.AxisPool, results.AxisBatch, results.AxisFlushInterval} {
		if len(space[a.Name]) != 2 {
			t.Errorf("space %v lacks %s", space, a.Name)
		}
	}
	rung := results.Position{results.AxisPool.Name: results.Number(8), results.AxisRate.Name: results.Number(2000)}
	if !p.ForDuration(rung) || !p.ForDuration(nil) {
		t.Error("a search's trial must run for its length")
	}
	rc := p.RunConfig(rung, 0)
	if rc.MaxConnections != 8 || rc.Rate != 2000 || !slices.Equal(values(rc.Ladder[results.AxisPool.Name]), []float64{8, 32}) ||
		!slices.Equal(values(rc.Ladder[results.AxisRate.Name]), []float64{2000}) || len(rc.Ladder) != 2 {
		t.Errorf("a headroom step's config: pool %d, rate %v, ladder %v", rc.MaxConnections, rc.Rate, rc.Ladder)
	}
	if p.MaxPool() != 32 {
		t.Errorf("MaxPool %d: the server must fit the largest pool of the space", p.MaxPool())
	}
}

// What --advise refuses, one line each, before anything starts.
func TestAdviseRefusals(t *testing.T) {
	const base = "--advise --duration 8s "
	for args, want := range map[string]string{
		base + "--slo-p99-ms 0":                                       "--slo-p99-ms must be positive",
		base + "--slo-p99-ms -5":                                      "--slo-p99-ms must be positive",
		base + "--slo-lag-p99-ms 0":                                   "--slo-lag-p99-ms must be positive",
		base + "--max-server-sessions -1":                             "--max-server-sessions must be positive",
		base:                                                          "--advise needs an objective",
		base + "--slo-p99-ms 5 --advise-budget 0s":                    "--advise-budget must be positive",
		base + "--slo-p99-ms 5 --advise-budget -1m":                   "--advise-budget must be positive",
		base + "--slo-p99-ms 5 --pool-levels 0,8":                     `--pool-levels: "0" is not a positive integer`,
		base + "--slo-p99-ms 5 --slots-levels 1,2000":                 "--slots-levels: 2000 is above 1024",
		base + "--slo-p99-ms 5 --flush-interval-levels 0":             `--flush-interval-levels: "0" is not a positive integer`,
		base + "--slo-p99-ms 5 --rate 0":                              "--rate must be positive",
		base + "--slo-p99-ms 5 --levels 1,2":                          "--levels cannot be combined with --advise",
		base + "--slo-p99-ms 5 --rates 10,20":                         "--rates cannot be combined with --advise",
		base + "--slo-p99-ms 5 --rtt-levels 0,1ms":                    "--rtt-levels cannot be combined with --advise",
		base + "--slo-p99-ms 5 --requests 100":                        "--requests cannot be combined with --advise",
		base + "--slo-p99-ms 5 --repeat 3":                            "--repeat cannot be combined with --advise",
		base + "--slo-p99-ms 5 --fault terminate-backends@1s":         "--fault cannot be combined with --advise",
		base + "--slo-p99-ms 5 --warmup 2s":                           "--warmup and --ramp must be shorter than a quarter of --duration",
		base + "--slo-p99-ms 5 --batch-levels 50 --modes sync,outbox": "--batch-levels: sync and outbox have no queue",
		"--advise --slo-p99-ms 5":                                     "--advise needs --duration",
		"--slo-lag-p99-ms 100":                                        "--slo-lag-p99-ms needs --advise",
		"--max-server-sessions 10":                                    "--max-server-sessions needs --advise",
		"--advise-budget 1m":                                          "--advise-budget needs --advise",
	} {
		refused(t, usagecounter.New(), args, want)
	}
	refused(t, candidates.New(), base+"--slo-p99-ms 5 --slots-levels 1,4", "--slots-levels: request_candidate_persistence_baseline has no counter rows to split into slots")
}
