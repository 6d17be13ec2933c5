package results

import (
	"testing"
	"time"
)

// generatorRun is a closed-loop run of 10,000 requests over a 10 s window on 2 cores, with a
// request p50 of 40 ms, whose client used clientCores, beside a server of serverCores (0: not
// read) on the same two cores.
func generatorRun(clientCores, serverCores float64) Run {
	r := Run{Mode: "sync", Load: Load{LatencyMs: Latency{P50: 40, Mean: 45}, AcquireWaitMs: Latency{Mean: 0.1}}}
	g := &Generator{WindowMs: 10000, Requests: 10000, MachineCores: 2, ClientCores: 2,
		Client: CPUUse{Cores: clientCores, MachineShare: clientCores / 2}, SchedLatencyP99Ms: 1, GCPauseTotalMs: 5}
	if serverCores > 0 {
		g.Server = &CPUUse{Cores: serverCores, MachineShare: serverCores / 2}
		g.ServerCores, g.SharedCores = 2, 2
	}
	r.Generator = g
	return r
}

// TestGeneratorLimit: each rule holds on the figures its doc names, and only there.
func TestGeneratorLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func() Run
		want func(GeneratorVerdict) bool
	}{
		{"pgbench's weight beside a saturated server: not the limit", func() Run {
			r := generatorRun(0.27, 1.65) // 14% of what the two spent
			r.Generator.ClientCoresBusy = 0.98
			return r
		}, func(v GeneratorVerdict) bool { return !v.Bound() && v.ClientPart < 0.15 && v.CoresBusy == 0.98 }},
		{"a quarter of what the two spent, on saturated cores: the limit", func() Run {
			r := generatorRun(0.44, 1.18)
			r.Generator.ClientCoresBusy = 0.99
			return r
		}, func(v GeneratorVerdict) bool { return v.CPUBound && v.ClientPart > 0.27 && v.ClientPart < 0.28 }},
		{"a heavy client on cores with room: not the limit", func() Run {
			r := generatorRun(0.6, 0.6)
			r.Generator.ClientCoresBusy = 0.7
			return r
		}, func(v GeneratorVerdict) bool { return !v.CPUBound }},
		{"no /proc/stat: the two's own time fills the cores", func() Run { return generatorRun(0.8, 1.0) },
			func(v GeneratorVerdict) bool { return v.CPUBound && v.CoresBusy == 0.9 }},
		{"no server read: the client's part of the busy cores", func() Run {
			r := generatorRun(0.9, 0)
			r.Generator.ClientCoresBusy = 0.95
			return r
		}, func(v GeneratorVerdict) bool { return v.CPUBound && v.ClientPart > 0.47 && v.ClientPart < 0.48 }},
		{"pinned apart, most of its own core: not the limit", func() Run {
			r := generatorRun(0.6, 0.98)
			r.Generator.ClientCores, r.Generator.ServerCores, r.Generator.SharedCores = 1, 1, 0
			r.Generator.ClientCoresBusy = 0.99 // other processes on its core: not the server's
			return r
		}, func(v GeneratorVerdict) bool {
			return v.Apart && !v.CPUBound && v.CoresBusy == 0.6 && v.ClientPart == 1
		}},
		{"pinned apart, its own core full: the limit", func() Run {
			r := generatorRun(0.9, 0.5)
			r.Generator.ClientCores, r.Generator.ServerCores, r.Generator.SharedCores = 1, 1, 0
			return r
		}, func(v GeneratorVerdict) bool { return v.Apart && v.CPUBound }},
		{"scheduling p99 a quarter of the request p50: the limit", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Generator.SchedLatencyP99Ms = 10
			return r
		}, func(v GeneratorVerdict) bool {
			return v.SchedBound && !v.CPUBound && v.SchedRef == "request p50" && v.SchedShare == 0.25
		}},
		{"a queue mode's scheduling against its persist lag, not its enqueue", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Load.LatencyMs.P50 = 0.002
			r.Queue = &Queue{PersistLagMs: Latency{P50: 100}}
			r.Generator.SchedLatencyP99Ms = 10
			return r
		}, func(v GeneratorVerdict) bool {
			return !v.Bound() && v.SchedRef == "persist lag p50" && v.SchedShare == 0.1
		}},
		{"GC pauses 1% of the window: the limit", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Generator.GCPauseTotalMs = 100
			return r
		}, func(v GeneratorVerdict) bool { return v.GCBound && v.GCShare == 0.01 }},
		{"a pool waiting while the server's sessions wait on the client: the limit", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Load.AcquireWaitMs.Mean = 9
			r.Pool = Pool{SessionSamples: 640, ClientWaitSamples: 400}
			return r
		}, func(v GeneratorVerdict) bool {
			return v.PoolBound && v.PoolJudged && v.PoolWaitShare == 0.2 && v.SessionsOnClient == 0.625
		}},
		{"a pool waiting on the server's locks: not the limit", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Load.AcquireWaitMs.Mean = 30
			r.Pool = Pool{SessionSamples: 640, ClientWaitSamples: 20}
			return r
		}, func(v GeneratorVerdict) bool { return v.PoolJudged && !v.PoolBound }},
		{"an added round trip: the pool not judged", func() Run {
			r := generatorRun(0.1, 0.5)
			r.Load.AcquireWaitMs.Mean = 9
			r.Pool = Pool{SessionSamples: 640, ClientWaitSamples: 600}
			r.Config.DBRTTMs = 1
			return r
		}, func(v GeneratorVerdict) bool { return !v.PoolJudged && !v.Bound() }},
	} {
		v, ok := GeneratorLimit(c.run())
		if !ok || !c.want(v) {
			t.Errorf("%s: %+v (%v)", c.name, v, ok)
		}
	}
	for name, r := range map[string]Run{"no figures": {}, "no window": {Generator: &Generator{SetUp: &Phase{WallMs: 1}}}} {
		if _, ok := GeneratorLimit(r); ok {
			t.Errorf("%s: judged", name)
		}
	}
}

func TestCPUOver(t *testing.T) {
	u := CPUOver(1200*time.Millisecond, 300*time.Millisecond, 3*time.Second, 1000, 2)
	want := CPUUse{UserS: 1.2, SystemS: 0.3, PerRequestUs: 1500, UserPerRequestUs: 1200, SystemPerRequestUs: 300, Cores: 0.5, MachineShare: 0.25}
	if u != want {
		t.Errorf("CPUOver = %+v, want %+v", u, want)
	}
	if u := CPUOver(time.Second, 0, 0, 0, 2); u.PerRequestUs != 0 || u.Cores != 0 || u.UserS != 1 {
		t.Errorf("no requests, no wall time: %+v", u)
	}
	server := 2 * time.Second
	if p := PhaseOf(1500*time.Millisecond, 250*time.Millisecond, server, true); p.WallMs != 1500 || p.ClientCPUS != 0.25 || p.ServerCPUS == nil || *p.ServerCPUS != 2 {
		t.Errorf("phase %+v", p)
	}
	if p := PhaseOf(time.Second, 0, server, false); p.ServerCPUS != nil {
		t.Errorf("a server not read has a figure: %+v", p)
	}
}
