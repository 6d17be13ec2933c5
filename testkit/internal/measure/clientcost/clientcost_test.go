package clientcost

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// spin keeps a processor busy for about d of this process's processor time.
func spin(d time.Duration) {
	u0, s0 := ProcessCPU()
	for x := 1.0; ; x = math.Sqrt(x + 1) {
		if u, s := ProcessCPU(); u+s-u0-s0 >= d {
			return
		}
	}
}

// TestWindowOfThisProcess: the processor time a window reads is what the process spent in it,
// per request and over the machine; its runtime figures are read; without a server there is
// none.
func TestWindowOfThisProcess(t *testing.T) {
	m := New(nil)
	from := m.Read()
	spin(50 * time.Millisecond)
	runtime.GC() // one collection at least: a pause to count
	to := m.Read()
	g := m.Window(from, to, 100, 7)
	used := g.Client.UserS + g.Client.SystemS
	if used < 0.05 || g.Requests != 100 || g.MaxGoroutines != 7 {
		t.Fatalf("window: %+v", g)
	}
	if want := used / 100 * 1e6; math.Abs(g.Client.PerRequestUs-want) > 10.1 { // the seconds are to the ms
		t.Errorf("per request %v µs, want %v", g.Client.PerRequestUs, want)
	}
	if g.MachineCores != MachineCores() || g.MachineCores < 1 || g.ClientCores < 1 || g.ClientCores > g.MachineCores {
		t.Errorf("cores: machine %d, client %d", g.MachineCores, g.ClientCores)
	}
	if share := g.Client.Cores / float64(g.MachineCores); math.Abs(g.Client.MachineShare-share) > 0.001 {
		t.Errorf("machine share %v, want %v", g.Client.MachineShare, share)
	}
	if g.GCPauses < 1 || g.GCPauseTotalMs <= 0 || g.GCPauseP99Ms <= 0 || g.GCPauseP99Ms > g.GCPauseTotalMs {
		t.Errorf("GC pauses: %d, total %v ms, p99 %v ms", g.GCPauses, g.GCPauseTotalMs, g.GCPauseP99Ms)
	}
	if g.ClientCoresBusy <= 0 || g.ClientCoresBusy > 1 {
		t.Errorf("the client's cores busy %v of the window", g.ClientCoresBusy)
	}
	if g.Server != nil || g.ServerCores != 0 {
		t.Errorf("a server read without one: %+v", g.Server)
	}
	if p := Phase(from, to); p.ClientCPUS < 0.05 || p.ServerCPUS != nil || p.WallMs <= 0 {
		t.Errorf("phase %+v", p)
	}
}

// TestWindowOfAServer: a server process (here a shell's loop) is read beside the client, with
// the cores it may run on; a server that changed between the readings (a restart) is not.
func TestWindowOfAServer(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo burnt; read x`)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	m := New(func() int { return pid })
	from := m.ReadCPU()
	if !bufio.NewScanner(out).Scan() {
		t.Fatal("the loop never finished")
	}
	to := m.Read()
	g := m.Window(from, to, 10, 0)
	if g.Server == nil || g.Server.UserS+g.Server.SystemS < 0.03 || g.ServerCores < 1 || g.SharedCores > g.ServerCores {
		t.Fatalf("server %+v, cores %d, shared %d", g.Server, g.ServerCores, g.SharedCores)
	}
	if p := Phase(from, to); p.ServerCPUS == nil || *p.ServerCPUS < 0.03 {
		t.Errorf("phase %+v", p)
	}
	restarted := to
	restarted.serverPID = os.Getpid()
	if g := m.Window(from, restarted, 10, 0); g.Server != nil {
		t.Errorf("a server read across a restart: %+v", g.Server)
	}
}

// TestHistogram: the difference of two readings, its count, sum and quantiles, each value at
// its bucket's middle, an open bucket at its finite bound.
func TestHistogram(t *testing.T) {
	earlier := histogram{counts: []uint64{1, 0, 0, 0}, buckets: []float64{math.Inf(-1), 1, 2, 4, math.Inf(1)}}
	later := histogram{counts: []uint64{1, 10, 10, 1}, buckets: earlier.buckets}
	h := later.minus(earlier)
	if h.count() != 21 {
		t.Fatalf("count %d, want 21", h.count())
	}
	if got, want := h.sum(), 10*1.5+10*3+4.0; got != want {
		t.Errorf("sum %v, want %v", got, want)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 3}, {0.25, 1.5}, {0.99, 4}, {1, 4}} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if (histogram{}).quantile(0.99) != 0 || (histogram{}).sum() != 0 {
		t.Error("an empty histogram has figures")
	}
	if d := later.minus(histogram{counts: []uint64{1}}); d.count() != 0 {
		t.Errorf("histograms that do not line up gave %d", d.count())
	}
}

// TestSampler: a sample's share is the processor time since the last one over the machine.
func TestSampler(t *testing.T) {
	s := NewSampler()
	at, used := s.at, s.used
	spin(30 * time.Millisecond)
	now := time.Now()
	u, sys := ProcessCPU()
	share := s.Share()
	want := (u + sys - used).Seconds() / now.Sub(at).Seconds() / float64(MachineCores())
	if share < want*0.8 || share > want*1.2 {
		t.Errorf("share %v, want %v", share, want)
	}
	if s.at.Before(now) || s.used < u+sys {
		t.Errorf("the next share does not start where this one ended")
	}
}
