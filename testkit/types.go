package testkit

import (
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// What a suite needs of the engine's plumbing, under testkit's name: a suite imports testkit
// (and package counters) and nothing else of ours.

// Op is one request of a run: the load engine calls it with the request, and it returns once
// the request is done (or, in an async mode, its records are accepted).
type Op = load.Op

// Request is the request an Op runs: its Index (0-based, dense over the run), Try (the
// run's --max-tries policy around one try) and Acquire (a pooled connection, its wait
// recorded apart from the request's latency). The engine reuses it: an Op must not keep it.
type Request = load.Request

// Result is what became of a run's requests, as verification reads it.
type Result interface {
	// Len is the number of request indexes the load handed out: 0..Len()-1, attempted or not.
	Len() int64
	// Applied reports whether request i's write must be in the database: it succeeded, or its
	// outcome was unknown and the suite's Persisted (Reconciler) found it.
	Applied(i int64) bool
}

// Unresolved is how many of res's requests ended with an outcome the load could not know (a
// COMMIT whose reply was lost, a try the request timeout cut) that no Reconciler looked up:
// the suite kept nothing per request to find them by (ErrNothingToReconcile), so Applied
// counts them out though they may be in the database. A suite that verifies such a run says
// what they leave unchecked.
func Unresolved(res Result) int64 {
	if u, ok := res.(interface{ Unresolved() int64 }); ok {
		return u.Unresolved()
	}
	return 0
}

// FaultHook injects a fault a workload knows how to cause (Workload.Faults), and says what it did.
type FaultHook = faults.Hook

// The --fault kinds, for Info.Faults.
const (
	FaultTerminateBackends = faults.TerminateBackends
	FaultRestartPostgres   = faults.RestartPostgres
	FaultCrashPostgres     = faults.CrashPostgres
	FaultPauseFlush        = faults.PauseFlush
	FaultKillFlusher       = faults.KillFlusher
	FaultKillConsumer      = faults.KillConsumer
	FaultCrashRedis        = faults.CrashRedis
	FaultRedisFailover     = faults.RedisFailover
	FaultRedisReshard      = faults.RedisReshard
	FaultStatementTimeout  = faults.StatementTimeout
	FaultConnStorm         = faults.ConnStorm
	FaultPoolerRestart     = faults.PoolerRestart
	FaultPoolerPause       = faults.PoolerPause
	// FaultKillWorker is a suite's own: its workload's hook (Workload.Faults) stops one of the
	// suite's workers mid-job without releasing what it holds. Only a suite that lists it in
	// Info.Faults takes it.
	FaultKillWorker  = faults.KillWorker
	FaultLockTimeout = faults.LockTimeout
)

// Figure is one of a suite's own figures of a run (FigureReporter): a name, a value and its unit.
type Figure = results.Figure

// Check is one verification check: an expectation against what the database holds (Checks
// builds them).
type Check = results.Check

// How a write picks its slot (--slot-pick), for a suite whose hot rows are split into slots
// (Info.Slots; package counters implements them).
const (
	// SlotPickHash picks a write's slot by a hash of its request id (reproducible).
	SlotPickHash = "hash"
	// SlotPickRandom draws a write's slot at random.
	SlotPickRandom = "random"
	// SlotPickRoundRobin gives request i slot i mod N (reproducible, and even over the
	// requests in flight together).
	SlotPickRoundRobin = "round-robin"
	// SlotPickSession gives each database session its own slot: the writing connection's seat
	// in the load pool mod N, so that at most ceil(sessions/N) sessions ever write one
	// physical row. In the queue modes, where a record's slot is its queue key and every slot
	// key belongs to one queue worker, it is round-robin over the requests.
	SlotPickSession = "session"
)

// SlotPicks are the --slot-pick values, the default first.
var SlotPicks = []string{SlotPickHash, SlotPickRandom, SlotPickRoundRobin, SlotPickSession}
