// Package runenv is what the engine hands one run of a suite: its place in the invocation, the
// database, pools and Redis it runs on, and the flags its write paths are built from (Env);
// and what the run's async workload hands back, the queue the engine reports on and faults
// strike (Backend). Package testkit wraps an Env in the read-only Run a suite sees.
//
// The engine imports testkit, so testkit cannot import the engine; NewRun, which testkit sets
// when it is initialised, is how the engine makes a testkit.Run all the same. Nothing here
// knows suites or modes beyond their names.
package runenv

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
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
	Target   *database.Target
	// Pool is the load's pool (--max-connections); a queue writes inline through it.
	Pool *pgxpool.Pool
	// Context ends on a hard abort (second signal): background work uses it.
	Context context.Context
	// CheckSkew breaks every expectation by this much (--debug-break-expectations);
	// LoseCommitEvery loses the first COMMIT reply of every Nth sync request
	// (--debug-lose-commit-every).
	CheckSkew, LoseCommitEvery int64
	Queue                      Queue
	// Redis is the invocation's Redis when the Redis backend runs.
	Redis *redisrun.Target
	// Backend is set by the run's async workload: the queue its records go through.
	Backend *Backend
}

// Queue is what the async queue of a run is built from (the --queue-* and --flush-* flags, the
// Redis stream's).
type Queue struct {
	Backend       string // redisrun.BackendMemory or BackendRedis
	Capacity      int
	BatchSize     int
	FlushInterval time.Duration
	Workers       int
	FullPolicy    queue.FullPolicy
	// Retries is queue.Options.MaxRetries (0: the default, < 0: none); RetryBackoff its first wait.
	Retries      int
	RetryBackoff time.Duration
	// FlushTimeout bounds one flush (queue.Options.FlushTimeout): --request-timeout.
	FlushTimeout time.Duration
	// Settings are the session settings of the flushers' connections (the *-timeout faults').
	Settings map[string]string
	// SlowFlushPct slows every in-memory queue flush by this percentage of its own duration
	// (the hidden --debug-slow-flush-pct).
	SlowFlushPct int

	// The Redis stream's: how long an entry stays with a consumer, how often it is delivered,
	// this process's role and producer id, how many producers a consumer waits for, and
	// whether the stream is this process's to start afresh (it did not join a split run).
	ReclaimIdle     time.Duration
	MaxDeliveries   int
	Shards          int // streams the records are spread over (redisq.Options.Shards)
	Role            redisq.Role
	ProducerID      int
	ExpectProducers int
	Fresh           bool
}

// Backend is the queue a run's async workload writes through, as the engine reports on it.
type Backend struct {
	Name       string // memory or redis
	Compaction bool
	FullPolicy queue.FullPolicy
	Metrics    func() queue.Metrics
	PersistLag func() *hist.Histogram
	Pause      func()
	Resume     func()
	// StreamMetrics are the Redis stream's own counters and Stream the run's role in it (nil
	// for the memory queue).
	StreamMetrics func() redisq.StreamMetrics
	Stream        *redisrun.Stream
	// FlushTimes and FlushDurations say where the in-memory queue's flushing time went (nil
	// for the Redis one).
	FlushTimes     func() queue.FlushTimes
	FlushDurations func() *hist.Histogram
	// FlushPool is the workers' own pool; its connections are closed after the drain so that
	// their backends report their statistics.
	FlushPool *pgxpool.Pool
}

// StreamOf is the run's role on the Redis stream (nil: not on Redis, or no queue).
func (b *Backend) StreamOf() *redisrun.Stream {
	if b == nil {
		return nil
	}
	return b.Stream
}

// NewRun returns a *testkit.Run of env in mode (a testkit.Mode) with cfg (a testkit.Config);
// package testkit sets it.
var NewRun func(env *Env, mode, cfg any) any
