// Package clientcost measures what the load generator — this process — costs the machine it
// runs on: its processor time (user and system, getrusage), the pauses of Go's collector and
// the scheduler's latency (runtime/metrics), how busy the processors it may run on were
// (/proc/stat), and, where the database server runs on the same machine, that server's
// processor time (every process of it: serverproc.TreeCPUTime) and the processors it may run
// on. A Meter reads all of it at one instant (Read); two readings make a run's window
// (Window) or one of its phases (Phase). The engine decides where the readings are taken.
//
// It only reads: a reading is a few system calls, a runtime/metrics read and, for a server,
// one /proc file per process of it. Nothing here runs per request.
package clientcost

import (
	"bufio"
	"bytes"
	"math/bits"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// The runtime's metrics a reading takes. The collector's pauses are read under their current
// name; /gc/pauses:seconds is the same histogram under its older one.
const (
	gcPausesMetric = "/sched/pauses/total/gc:seconds"
	schedMetric    = "/sched/latencies:seconds"
	gcCPUMetric    = "/cpu/classes/gc/total:cpu-seconds"
)

// ProcessCPU is the processor time this process has used so far, user and system
// (getrusage); zero where it cannot be read.
func ProcessCPU() (user, system time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// MachineCores is the machine's online processors (the cpuN lines of /proc/stat), not only
// those this process may run on; runtime.NumCPU where /proc/stat cannot be read.
func MachineCores() int {
	if cpus, ok := readCPUStat(); ok && len(cpus) > 0 {
		return len(cpus)
	}
	return runtime.NumCPU()
}

// Meter takes a run's readings: of this process, of the processors it may run on, and of the
// server whose main process server names.
type Meter struct {
	// server is the server's main process now (a postmaster); 0 when there is none on this
	// machine, or none this process can see.
	server       func() int
	clientCPUs   unix.CPUSet
	clientCores  int
	machineCores int
}

// New is a Meter of this process and of the server whose main process server returns (nil:
// no server to read).
func New(server func() int) *Meter {
	m := &Meter{server: server, machineCores: MachineCores()}
	if unix.SchedGetaffinity(0, &m.clientCPUs) == nil {
		m.clientCores = m.clientCPUs.Count()
	} else {
		m.clientCPUs = unix.CPUSet{}
		m.clientCores = runtime.NumCPU()
	}
	return m
}

// Reading is what a Meter read at one instant.
type Reading struct {
	at           time.Time
	user, system time.Duration
	// serverPID is the server's main process when it was read (0: none); serverUser and
	// serverSystem its whole tree's processor time.
	serverPID                int
	serverUser, serverSystem time.Duration
	// The rest is a full reading's only (Read): the runtime's counters, and the busy and total
	// clock ticks of the processors the process may run on (cpusRead: /proc/stat was read).
	full            bool
	gcPauses, sched histogram
	gcCPU           float64
	busy, total     uint64
	cpusRead        bool
}

// Read takes a full reading: the process, the runtime, the processors and the server.
func (m *Meter) Read() Reading {
	r := m.ReadCPU()
	r.full = true
	samples := []metrics.Sample{{Name: gcPausesMetric}, {Name: schedMetric}, {Name: gcCPUMetric}}
	metrics.Read(samples)
	r.gcPauses = histogramOf(samples[0].Value)
	r.sched = histogramOf(samples[1].Value)
	if samples[2].Value.Kind() == metrics.KindFloat64 {
		r.gcCPU = samples[2].Value.Float64()
	}
	if cpus, ok := readCPUStat(); ok {
		for i, c := range cpus {
			if m.clientCPUs.Count() == 0 || m.clientCPUs.IsSet(i) {
				r.busy += c.busy
				r.total += c.total
			}
		}
		r.cpusRead = true
	}
	return r
}

// ReadCPU takes a reading of processor time alone: the process's and the server's (a
// phase's).
func (m *Meter) ReadCPU() Reading {
	r := Reading{at: time.Now()}
	r.user, r.system = ProcessCPU()
	if m.server != nil {
		if pid := m.server(); pid > 0 {
			if u, s, ok := serverproc.TreeCPUTime(pid); ok {
				r.serverPID, r.serverUser, r.serverSystem = pid, u, s
			}
		}
	}
	return r
}

// serverBetween is the server's processor time between two readings; ok is false when either
// did not read it, or the server's main process changed between them (a restart).
func serverBetween(from, to Reading) (user, system time.Duration, ok bool) {
	if from.serverPID == 0 || from.serverPID != to.serverPID || to.serverUser < from.serverUser || to.serverSystem < from.serverSystem {
		return 0, 0, false
	}
	return to.serverUser - from.serverUser, to.serverSystem - from.serverSystem, true
}

// Phase is the wall and processor time between two readings.
func Phase(from, to Reading) *results.Phase {
	su, ss, ok := serverBetween(from, to)
	return results.PhaseOf(to.at.Sub(from.at), to.user+to.system-from.user-from.system, su+ss, ok)
}

// Window is a run's generator figures between two full readings, in which requests completed
// and the process had at most maxGoroutines goroutines at a sample.
func (m *Meter) Window(from, to Reading, requests int64, maxGoroutines int) *results.Generator {
	wall := to.at.Sub(from.at)
	g := &results.Generator{
		WindowMs:      float64(wall.Microseconds()) / 1000,
		Requests:      requests,
		MachineCores:  m.machineCores,
		ClientCores:   m.clientCores,
		Client:        results.CPUOver(to.user-from.user, to.system-from.system, wall, requests, m.machineCores),
		MaxGoroutines: maxGoroutines,
	}
	if from.full && to.full {
		if from.cpusRead && to.cpusRead && to.total > from.total {
			g.ClientCoresBusy = units.Round(float64(to.busy-from.busy)/float64(to.total-from.total), 4)
		}
		pauses := to.gcPauses.minus(from.gcPauses)
		g.GCPauses = int64(pauses.count())
		g.GCPauseTotalMs = units.Round(pauses.sum()*1000, 3)
		g.GCPauseP99Ms = units.Round(pauses.quantile(0.99)*1000, 3)
		if used := (to.user + to.system - from.user - from.system).Seconds(); used > 0 {
			g.GCCPUShare = units.Round(min((to.gcCPU-from.gcCPU)/used, 1), 4)
		}
		sched := to.sched.minus(from.sched)
		g.SchedLatencyP50Ms = units.Round(sched.quantile(0.5)*1000, 3)
		g.SchedLatencyP99Ms = units.Round(sched.quantile(0.99)*1000, 3)
	}
	if su, ss, ok := serverBetween(from, to); ok {
		s := results.CPUOver(su, ss, wall, requests, m.machineCores)
		g.Server = &s
		var set unix.CPUSet
		if unix.SchedGetaffinity(to.serverPID, &set) == nil {
			g.ServerCores = set.Count()
			g.SharedCores = shared(set, m.clientCPUs, m.clientCores)
		}
	}
	return g
}

// shared counts the processors in both sets; an unread client set (all zero) counts as every
// processor.
func shared(server, client unix.CPUSet, clientCores int) int {
	if client.Count() == 0 && clientCores > 0 {
		return server.Count()
	}
	n := 0
	for i := range server {
		n += bits.OnesCount64(uint64(server[i] & client[i]))
	}
	return n
}

// cpuTicks is one processor's clock ticks so far: busy (user, nice, system, irq, softirq,
// steal; a guest's time is in user) and in all (busy, idle and iowait).
type cpuTicks struct{ busy, total uint64 }

// readCPUStat reads /proc/stat's cpuN lines, indexed by N (a processor offline between two
// online ones reads as zero ticks).
func readCPUStat() ([]cpuTicks, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, false
	}
	var out []cpuTicks
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 9 || !bytes.HasPrefix(f[0], []byte("cpu")) || len(f[0]) == 3 {
			continue
		}
		n, err := strconv.Atoi(string(f[0][3:]))
		if err != nil {
			continue
		}
		var v [8]uint64
		for i := range v {
			v[i], _ = strconv.ParseUint(string(f[1+i]), 10, 64)
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		for len(out) <= n {
			out = append(out, cpuTicks{})
		}
		busy := user + nice + system + irq + softirq + steal
		out[n] = cpuTicks{busy: busy, total: busy + idle + iowait}
	}
	return out, len(out) > 0
}

// Sampler gives this process's share of the machine's processors between one call of Share and
// the next: a monitor sample's.
type Sampler struct {
	cores int
	at    time.Time
	used  time.Duration
}

// NewSampler starts a Sampler now.
func NewSampler() *Sampler {
	u, s := ProcessCPU()
	return &Sampler{cores: MachineCores(), at: time.Now(), used: u + s}
}

// Share is the processor time the process used since the last call (or NewSampler) over the
// machine's processors and the time between: 0.5 on two processors is one of them busy. The
// time is read with the processor time, so that the two cover the same span.
func (s *Sampler) Share() float64 {
	now := time.Now()
	u, sys := ProcessCPU()
	used, wall := u+sys-s.used, now.Sub(s.at)
	s.at, s.used = now, u+sys
	if wall <= 0 || s.cores <= 0 || used < 0 {
		return 0
	}
	return units.Round(used.Seconds()/wall.Seconds()/float64(s.cores), 4)
}
