package results

import (
	"time"

	"github.com/hotspotkit/hotspotkit/results/units"
)

// Generator is what the load generator — the process that ran the load, the kit's own client —
// cost over a run, and the processor time of the database server beside it where the server
// ran on the same machine. The kit shares the machine with the server it measures as often as
// not (a laptop, a CI runner), and every processor-second it spends is taken from that server:
// these figures say how much of a run's result is the kit's, and GeneratorLimit says whether
// the generator was the run's limit.
//
// The window figures cover the run's measured window: from load.measured_from (after the
// warm-up) to the end of its drain, the window its throughput is counted over. The set-up
// before the window and the verification after it have their own figures (SetUp,
// Verification) and are never in a run's throughput. Absent from a report written before
// them (not measured), and from one merged from a split run's processes (each process's own
// report has its own).
type Generator struct {
	// WindowMs is the measured window's length; Requests the requests completed in it
	// (load.completed_requests), which the per-request figures divide by.
	WindowMs float64 `json:"window_ms"`
	Requests int64   `json:"requests"`
	// MachineCores is the machine's online processors; ClientCores those the process may run
	// on (its affinity: fewer under taskset or a container's cpuset).
	MachineCores int `json:"machine_cores"`
	ClientCores  int `json:"client_cores"`
	// ClientCoresBusy is the share of the window the processors the process may run on were
	// busy, by any process on them (/proc/stat); 0 where it could not be read.
	ClientCoresBusy float64 `json:"client_cores_busy,omitempty"`
	// Client is the process's own processor time over the window (getrusage: user and system;
	// its every goroutine: the load's, the queue's flushers, the monitor's, the pools').
	Client CPUUse `json:"client"`
	// Server is the server's processor time over the window, every process of it (the
	// postmaster and its children, those that exited in the window included): read where its
	// processes are this machine's and visible (a temporary server; a --postgres-url one whose
	// postmaster this process finds), nil otherwise. The observers' statements (the monitor's,
	// the probes') are in it.
	Server *CPUUse `json:"server,omitempty"`
	// ServerCores is the processors the server may run on, and SharedCores how many of them
	// the process may run on as well: 0 when the two were pinned apart (taskset), when neither
	// takes processor time from the other. Both absent without Server.
	ServerCores int `json:"server_cores,omitempty"`
	SharedCores int `json:"shared_cores,omitempty"`
	// GCPauses, GCPauseTotalMs and GCPauseP99Ms are the stop-the-world pauses of Go's garbage
	// collector in the window (runtime/metrics /sched/pauses/total/gc:seconds, which
	// /gc/pauses:seconds is the older name of): their count, total and p99. GCCPUShare is the
	// share of the process's processor time the collector took (/cpu/classes/gc/total).
	GCPauses       int64   `json:"gc_pauses"`
	GCPauseTotalMs float64 `json:"gc_pause_total_ms"`
	GCPauseP99Ms   float64 `json:"gc_pause_p99_ms"`
	GCCPUShare     float64 `json:"gc_cpu_share"`
	// SchedLatencyP50Ms and SchedLatencyP99Ms are how long goroutines waited runnable before
	// they ran, over the window (/sched/latencies:seconds): the process's own wait for a
	// processor, each time a goroutine woke (a reply read, a lock released, a timer fired).
	SchedLatencyP50Ms float64 `json:"sched_latency_p50_ms"`
	SchedLatencyP99Ms float64 `json:"sched_latency_p99_ms"`
	// MaxGoroutines is the most goroutines the process had at a monitor sample of the run.
	MaxGoroutines int `json:"max_goroutines,omitempty"`
	// SetUp is the run's set-up before its window: the tables reset, the seed, the workload
	// prepared, the pool opened and warmed. Verification is the run's verification and
	// reconciliation after its drain.
	SetUp        *Phase `json:"set_up,omitempty"`
	Verification *Phase `json:"verification,omitempty"`
}

// CPUUse is a process's processor time over a run's window.
type CPUUse struct {
	UserS   float64 `json:"user_s"`
	SystemS float64 `json:"system_s"`
	// PerRequestUs is the processor time (user and system) per request completed in the
	// window; UserPerRequestUs and SystemPerRequestUs are its two parts.
	PerRequestUs       float64 `json:"per_request_us"`
	UserPerRequestUs   float64 `json:"user_per_request_us"`
	SystemPerRequestUs float64 `json:"system_per_request_us"`
	// Cores is the processor time over the window's wall time (1: one processor busy all
	// along), and MachineShare that over the machine's processors.
	Cores        float64 `json:"cores"`
	MachineShare float64 `json:"machine_share"`
}

// Phase is a part of a run outside its window: its wall time, and the processor time the
// client spent on it and, where it is read, the server.
type Phase struct {
	WallMs     float64  `json:"wall_ms"`
	ClientCPUS float64  `json:"client_cpu_s"`
	ServerCPUS *float64 `json:"server_cpu_s,omitempty"`
}

// CPUOver is the processor time user and system spent over a window of wall time in which
// requests completed, on a machine of cores processors.
func CPUOver(user, system, wall time.Duration, requests int64, cores int) CPUUse {
	u := CPUUse{UserS: units.Round(user.Seconds(), 3), SystemS: units.Round(system.Seconds(), 3)}
	if requests > 0 {
		n := float64(requests)
		u.UserPerRequestUs = units.Round(float64(user.Microseconds())/n, 1)
		u.SystemPerRequestUs = units.Round(float64(system.Microseconds())/n, 1)
		u.PerRequestUs = units.Round(float64((user+system).Microseconds())/n, 1)
	}
	if wall > 0 {
		used := (user + system).Seconds() / wall.Seconds()
		u.Cores = units.Round(used, 3)
		if cores > 0 {
			u.MachineShare = units.Round(used/float64(cores), 4)
		}
	}
	return u
}

// PhaseOf is a phase of wall time in which the client used clientCPU, and the server
// serverCPU when known.
func PhaseOf(wall, clientCPU time.Duration, serverCPU time.Duration, serverKnown bool) *Phase {
	p := &Phase{WallMs: units.Round(float64(wall.Microseconds())/1000, 3), ClientCPUS: units.Round(clientCPU.Seconds(), 3)}
	if serverKnown {
		s := units.Round(serverCPU.Seconds(), 3)
		p.ServerCPUS = &s
	}
	return p
}

// The rules that decide whether the generator was a run's limit (GeneratorLimit), and their
// thresholds, in one place (docs/overhead.md states them for readers):
//
//  1. Processors. Where the client shares processors with the server (or the server's are
//     not known): the processors the client may run on were busy at least GeneratorSaturated
//     of the window, and the client took at least GeneratorCPUPart of the processor time it
//     and the server spent together (where the server's was not read, of the processors' busy
//     time). On saturated processors every processor-second the client spent was one the
//     server waited for: at a quarter, the server could have had a third more. Where the two
//     were pinned apart: the client used at least GeneratorSaturated of its own processors,
//     so that it could not have sent faster.
//  2. Scheduling and GC. Goroutines waited runnable for a processor, at p99, at least
//     GeneratorSchedLag of what the run measured at its median (the request's p50; a queue
//     mode's persist lag p50, its request being an enqueue); or the collector stopped the
//     process for at least GeneratorGCPause of the window.
//  3. The pool. Requests waited for a pool connection at least GeneratorPoolWait of their mean
//     latency while at least GeneratorSessionsOnClient of the service's sessions on the server,
//     over the monitor's samples, sat waiting on the client (idle, or idle in a transaction
//     waiting for its next statement): the pool ran short because its connections were held
//     by goroutines that had not run, not by the server's work. Not judged where the run added
//     a round trip (--db-rtt, a pooler's hop), whose wait the server sees as the client's.
const (
	GeneratorSaturated        = 0.85
	GeneratorCPUPart          = 0.25
	GeneratorSchedLag         = 0.25
	GeneratorGCPause          = 0.01
	GeneratorPoolWait         = 0.10
	GeneratorSessionsOnClient = 0.5
)

// GeneratorVerdict is the answer of GeneratorLimit for one run: each rule's figures and
// whether it held.
type GeneratorVerdict struct {
	// Apart: the server's processors are known and the client shared none of them. CoresBusy
	// is then the share of its own processors the client used, else the share of the window
	// they were busy (by anyone; the client's and the server's time where /proc/stat was not
	// read). ClientPart is the client's share of the processor time it and the server spent
	// (of the busy time where the server's was not read; 1 when apart).
	Apart      bool
	CoresBusy  float64
	ClientPart float64
	CPUBound   bool
	// SchedRef names what the scheduling latency is set against ("request p50", "persist lag
	// p50"), SchedRefMs its value (0: nothing to set it against), SchedShare the p99 over it.
	SchedRef   string
	SchedRefMs float64
	SchedShare float64
	SchedBound bool
	// GCShare is the pauses' total over the window.
	GCShare float64
	GCBound bool
	// PoolJudged: the run has the monitor's session counts and added no round trip.
	// PoolWaitShare is the mean pool wait over the mean latency, SessionsOnClient the share of
	// the service's sessions that waited on the client.
	PoolJudged       bool
	PoolWaitShare    float64
	SessionsOnClient float64
	PoolBound        bool
}

// Bound says whether any rule held: the generator was the run's limit.
func (v GeneratorVerdict) Bound() bool { return v.CPUBound || v.SchedBound || v.GCBound || v.PoolBound }

// GeneratorLimit applies the rules above to run r's figures; ok is false when the run has no
// measured window (a report written before them, a load that ended within its warm-up).
func GeneratorLimit(r Run) (v GeneratorVerdict, ok bool) {
	g := r.Generator
	if g == nil || g.WindowMs <= 0 {
		return v, false
	}
	cores := g.ClientCores
	if cores <= 0 {
		cores = g.MachineCores
	}
	if cores > 0 {
		v.Apart = g.Server != nil && g.ServerCores > 0 && g.SharedCores == 0
		switch {
		case v.Apart:
			v.CoresBusy, v.ClientPart = g.Client.Cores/float64(cores), 1
		case g.ClientCoresBusy > 0:
			v.CoresBusy = g.ClientCoresBusy
		default:
			used := g.Client.Cores
			if g.Server != nil {
				used += g.Server.Cores
			}
			v.CoresBusy = min(used/float64(cores), 1)
		}
		switch {
		case v.Apart:
		case g.Server != nil && g.Client.Cores+g.Server.Cores > 0:
			v.ClientPart = g.Client.Cores / (g.Client.Cores + g.Server.Cores)
		case v.CoresBusy > 0:
			v.ClientPart = min(g.Client.Cores/(v.CoresBusy*float64(cores)), 1)
		}
		v.CPUBound = v.CoresBusy >= GeneratorSaturated && v.ClientPart >= GeneratorCPUPart
	}
	v.SchedRef, v.SchedRefMs = "request p50", r.Load.LatencyMs.P50
	if q := r.Queue; q != nil {
		v.SchedRef, v.SchedRefMs = "persist lag p50", q.PersistLagMs.P50
	}
	if v.SchedRefMs > 0 {
		v.SchedShare = g.SchedLatencyP99Ms / v.SchedRefMs
		v.SchedBound = v.SchedShare >= GeneratorSchedLag
	}
	if g.WindowMs > 0 {
		v.GCShare = g.GCPauseTotalMs / g.WindowMs
		v.GCBound = v.GCShare >= GeneratorGCPause
	}
	addedRTT := r.Config.DBRTTMs > 0 || r.Pooler != nil && (r.Pooler.PoolerRTTMs > 0 || r.Pooler.DBRTTMs > 0)
	if p := r.Pool; p.SessionSamples > 0 && r.Load.LatencyMs.Mean > 0 && !addedRTT {
		v.PoolJudged = true
		v.PoolWaitShare = r.Load.AcquireWaitMs.Mean / r.Load.LatencyMs.Mean
		v.SessionsOnClient = float64(p.ClientWaitSamples) / float64(p.SessionSamples)
		v.PoolBound = v.PoolWaitShare >= GeneratorPoolWait && v.SessionsOnClient >= GeneratorSessionsOnClient
	}
	return v, true
}
