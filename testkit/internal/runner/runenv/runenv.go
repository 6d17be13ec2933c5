// Package runenv is what the engine hands one run of a suite: its place in the invocation, the
// database and pools it runs on, the flags its write paths are built from (Env), and what
// opens its async queue (QueueOpener: the run's queue backend, the in-process queue or a
// Redis stream in this process's role, chosen by the engine). Records cross it with their
// types erased (Spec, OpenedQueue); package asyncrun turns a suite's typed queue into them and back.
// Package testkit wraps an Env in the read-only Run a suite sees (testkit.NewRun). Nothing here
// knows suites, modes beyond their names, or Redis.
package runenv

import (
	"context"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
)

// Env is one run as the engine set it up.
type Env struct {
	// Index counts runs in the invocation from 0; Mode is the run's mode's name.
	Index int
	Mode  string
	// Slots is the run's slot count (0: the suite has no slots); Requests its --requests (0:
	// bound by --duration; a verifying consumer sets the run-wide count before Verify).
	Slots    int
	Requests int64
	Target   database.Target
	// Pool is the load's pool (--max-connections); a queue writes inline through it.
	Pool sqldb.Pool
	// Context ends on a hard abort (second signal): background work uses it.
	Context context.Context
	// CheckSkew breaks every expectation by this much (--debug-break-expectations).
	CheckSkew int64
	// Config is the run's settings as its report records them (results.RunConfig declares
	// each one): what the backends build the queue from (the --queue-* and --flush-* flags).
	Config results.RunConfig
	// SessionSettings are the session settings of the service's connections (the *-timeout
	// faults').
	SessionSettings map[string]string
	// Opener opens the run's async queue.
	Opener QueueOpener
}

// QueueOpener is where a run's async queue lives: OpenQueue opens it for a suite's write path.
type QueueOpener interface {
	OpenQueue(ctx context.Context, env *Env, spec Spec) (OpenedQueue, error)
}

// Spec is a suite's async write path with its types erased: a record is a value of the
// suite's record type T in an any, a slot key a value of its key type K in an any.
type Spec struct {
	Key     func(rec any) any
	Worker  func(key any, workers int) int // nil: the queue deals slots out itself
	Spread  bool
	Merge   func(pending *any, newer any)
	Compare func(a, b any) int // nil: no order
	Writer  queue.TxWriter[any]
	// Codec stores a record in a Redis stream entry; CodecErr says why there is none (T's
	// fields are not exported and the suite wrote no codec).
	Codec    queue.Codec[any]
	CodecErr error
	Compact  bool
	// InProcess opens the queue in this process with the suite's own types (no record in an
	// any): what a backend whose queue is in this process opens.
	InProcess func(ctx context.Context, env *Env) (OpenedQueue, error)
}

// TypedEnqueuer is an opened queue that takes a suite's records as they are (the in-process
// queue's): package asyncrun enqueues through it where it can.
type TypedEnqueuer[T any] interface {
	EnqueueTyped(ctx context.Context, recs []T) (queue.Outcome, error)
}

// OpenedQueue is a run's opened queue as the code that enqueues into it sees it.
type OpenedQueue interface {
	// EnqueueAll hands a request's records to the queue as one unit; an enqueue whose reply
	// was lost fails with an error package load classes as an unknown outcome.
	EnqueueAll(ctx context.Context, recs []any) (queue.Outcome, error)
	// Offset is the index of this process's first request: a producer's in a split run, else 0.
	Offset() int64
	// Drain closes the queue, which writes everything it accepted; Close releases what it
	// holds (idempotent, after Drain at once).
	Drain(ctx context.Context) error
	Close() error
	// Faults are the fault kinds the queue injects itself (kill-flusher, kill-consumer).
	Faults() map[string]faults.Hook
}
