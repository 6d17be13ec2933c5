// Package testkit is the engine every hotspotkit binary runs. It owns the lifecycle of an
// invocation — flags, validation before any work, the temporary or given database, signals,
// one freshly reset run per mode (and repetition and ladder level), the monitor, the drain,
// verification, the JSON report, the NDJSON samples and the stderr summary — and the shared
// write strategies a suite plugs its SQL into (sync transactions, the async queue, and any
// flush loop a workload brings: package counters' outbox is one). What is not lifecycle has a
// package of its own, which the engine drives through small explicit calls: redisrun (the Redis
// a run uses and the producer/consumer protocol of a split run), hostenv (the machine a report
// was measured on), results/render (the summary table, the same as `baseline table`).
//
// A suite (testkit/suites/..., or any package: examples/hotcounter) only describes its write
// path — how to seed, what one request writes in each mode, how to check the totals — and
// declares in its Info what it supports (modes, queue backends, fault kinds) and its own
// tables (SQL); validation refuses anything else. It does no timing and prints nothing.
// A binary's main is one line: testkit.Main(suite).
package testkit

import (
	"context"
	"io"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
)

// Queue backends (--queue-backend) an async mode runs on: the queue in this process, or a
// Redis stream (package redisrun sets the Redis up).
const (
	BackendMemory = redisrun.BackendMemory
	BackendRedis  = redisrun.BackendRedis
)

// Info describes a suite to the engine and to --help.
type Info struct {
	// Name is the binary's name and the report's suite field.
	Name string
	// Summary is one line saying what the suite hammers.
	Summary string
	// Description is a paragraph for --help: what one request does in each mode.
	Description string
	// Example is a worked command line for --help.
	Example string
	// Modes the suite supports, in the order runs are reported, and the ones run when
	// --modes is not given.
	Modes, DefaultModes []Mode
	// HotTables are the tables whose lock waiters the report always lists.
	HotTables []string
	// Defaults override the engine's default for common flags, by flag name (e.g. a suite
	// that enqueues three records per request sizes --queue-capacity in requests).
	Defaults map[string]string
	// QueueBackends the suite's async modes run on (BackendMemory, BackendRedis); nil: memory
	// only. --queue-backend outside it is refused before anything starts.
	QueueBackends []string
	// Faults are the --fault kinds the suite can take (FaultTerminateBackends, ...); nil: every
	// kind. Another kind is refused before anything starts.
	Faults []string
	// TotalSQL reads the total of one hot logical row (a sum over its slots); the monitor times
	// it while the load runs, so a report shows what slots cost a reader (optional).
	TotalSQL string
	// Slots says the suite's hot rows are package counters' and can be split into slots
	// (--slots, --slot-pick, --slots-levels); without it those flags are refused.
	Slots bool
	// SQL holds the suite's own tables: every *.sql file at its root, applied in name order
	// after the shared tables of package schema (typically the suite package's
	// //go:embed *.sql). Only the shared tables and these exist in the run's schema.
	SQL fs.FS
}

// queueBackends is what Info.QueueBackends means when it is nil.
func (i Info) queueBackends() []string {
	if i.QueueBackends == nil {
		return []string{BackendMemory}
	}
	return i.QueueBackends
}

// Suite is one hot write path.
type Suite interface {
	Info() Info
	// Seed writes the rows a run starts from; the schema's tables are empty when it is called.
	Seed(ctx context.Context, r *Run) error
	// Workload returns what one request does in r.Mode.
	Workload(ctx context.Context, r *Run) (*Workload, error)
	// Verify checks the database after the run has drained, against the requests whose
	// writes must be there (res.Applied).
	Verify(ctx context.Context, r *Run, res Result) ([]results.Check, error)
}

// Flagger is a suite with flags of its own.
type Flagger interface {
	Flags(fs *pflag.FlagSet)
}

// Validator is a suite that checks its flags (and the common ones) before any work starts.
type Validator interface {
	Validate(c *Config) error
}

// SummaryWriter is a suite that adds lines of its own after the engine's summary table on
// stderr, from the finished report (e.g. counters under the names a reference's baseline
// tables use). It is the only place a suite prints.
type SummaryWriter interface {
	WriteSummary(w io.Writer, rep *results.Report)
}

// Workload is what the engine drives for one run.
type Workload struct {
	// Op is one request.
	Op Op
	// Drain returns once every write the requests had accepted is committed (nil: nothing is
	// pending when the last request returns).
	Drain func(ctx context.Context) error
	// Close releases what the workload holds (always called).
	Close func() error
	// Queue is set for async modes.
	Queue *QueueHandle
	// Flusher is set when a background loop applies what the requests wrote (the outbox mode
	// of suites built on package counters: counters.OutboxWorkload).
	Flusher Flusher
	// PendingSQL counts writes not yet applied; the monitor samples it (optional).
	PendingSQL string
	// Faults are the --fault kinds this workload can inject itself (e.g. kill-consumer).
	Faults map[string]FaultHook
}

// Flusher is a workload's own flush loop (an outbox, or anything like one): a pause-flush
// fault pauses it, and its totals are the run's "flush" report. After the drain the engine
// stops it and closes its connection, so that its backend hands its statistics to the
// database before the run's cost is read.
type Flusher interface {
	Pause()
	Resume()
	Stats() results.Flush
	Stop()
	Close(ctx context.Context) error
}

// QueueHandle is the non-generic view of an async backend the engine reports on.
type QueueHandle struct {
	Backend    string
	Compaction bool
	FullPolicy queue.FullPolicy
	Metrics    func() queue.Metrics
	PersistLag func() *hist.Histogram
	Pause      func()
	Resume     func()
	// Stream returns the Redis-streams backend's own counters (nil for other backends).
	Stream func() redisq.StreamMetrics
	// stream is set by the Redis backend: the run's role and run-wide counters (redisbackend.go).
	stream *redisrun.Stream
	// flushPool is the workers' own pool; its connections are closed after the drain so that
	// their backends report their statistics (dbcost.go).
	flushPool *pgxpool.Pool
}

// Run is the context of one run, handed to the suite.
type Run struct {
	// Index counts runs in the invocation from 0.
	Index      int
	Mode       Mode
	Repetition int
	Level      int
	// Rate is the run's offered rate in requests per second (--rate, or a --rates rung); 0 in
	// a closed loop.
	Rate float64
	// Slots is the number of physical rows per hot logical row (--slots, or this run's
	// --slots-levels count); 0 for a suite without slots.
	Slots int
	// Concurrency and Requests are this run's (a ladder level overrides --concurrency).
	Concurrency int
	Requests    int64
	Config      *Config
	Target      *database.Target
	// Pool is the load's pool (--max-connections); async backends flush through it too.
	Pool *pgxpool.Pool
	// Admin is the engine's own connection, for seeding and verification.
	Admin *pgx.Conn
	// OpContext is cancelled on a hard abort (second signal); background work should use it.
	OpContext context.Context
	// checkSkew deliberately breaks every expectation (hidden --debug-break-expectations).
	checkSkew int64
	// redis is the invocation's Redis when the Redis backend runs (redisbackend.go).
	redis *redisrun.Target
}

// FlushInterval is --flush-interval-ms: the longest a partial batch waits before its flush.
func (r *Run) FlushInterval() time.Duration { return r.flushInterval() }
