// Package testkit is what a suite author writes against: the Suite interface and the
// capabilities a suite may add (Flagger, Validator, Reconciler, SummaryWriter, ConnectionUser,
// FigureReporter), the Info it declares (modes, queue backends, fault kinds, its tables), the
// modes (Mode: Sync, Async, AsyncCompact, and a suite's own FlushMode or OwnMode), the
// read-only Run a suite is handed, the checks
// it verifies with (Checks), and the write paths it plugs its SQL into: one transaction per
// request (Run.SyncTx) and the async queue (AsyncWorkload); and, for a suite that runs
// background work of its own beside the requests (a job queue's workers), a pool of its own
// (Run.NewPool) and the async queue that work enqueues into (OpenQueue). The SQL a suite sends
// goes through package sqldb's handles (Run.Admin, Run.Pool, the sqldb.Tx of a request's
// transaction or a queue's batch), written in the dialect Run.Dialect names.
//
// A suite (testkit/suites/..., or any package: examples/hotcounter) only describes its write
// path — how to seed, what one request writes in each mode, how to check the totals; the
// engine (testkit/internal/runner/engine, run by a binary's one-line main: cli.Main(suite), package
// testkit/cli) owns the lifecycle: flags, validation, the database, the load, the monitor, the
// drain, faults, the report and the summary. A suite does no timing and prints nothing.
package testkit

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Queue backends (--queue-backend) an async mode runs on: the queue in this process, or a
// Redis stream.
const (
	BackendMemory = "memory"
	BackendRedis  = "redis"
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
	// kind but the suites' own (FaultKillWorker), which a suite takes only by listing it.
	// Another kind is refused before anything starts.
	Faults []string
	// TotalSQL reads the total of one hot logical row (a sum over its slots); the monitor times
	// it while the load runs, so a report shows what slots cost a reader (optional).
	TotalSQL string
	// Slots says the suite's hot rows are package counters' and can be split into slots
	// (--slots, --slot-pick, --slots-levels); without it those flags are refused.
	Slots bool
	// HotSets says each request writes one of --hot-keys sets of hot rows, the one
	// Config.HotSet picks (--hot-key-dist): the report then records how the applied requests
	// spread over the sets (results.HotSets). Without it --hot-key-dist is refused.
	HotSets bool
	// SQL holds the suite's own tables: every *.sql file at its root, applied in name order
	// after the shared tables of package schema (typically the suite package's
	// //go:embed *.sql). Only the shared tables and these exist in the run's schema.
	SQL fs.FS
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
	Validate(c Config) error
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
	// FlushLoop is set when a background loop applies what the requests wrote (the outbox
	// mode of suites built on package counters: counters.OutboxWorkload).
	FlushLoop FlushLoop
	// PendingSQL counts writes not yet applied; the monitor samples it (optional).
	PendingSQL string
	// Faults are the --fault kinds this workload can inject itself (e.g. kill-consumer).
	Faults map[string]FaultHook
}

// FlushLoop is a workload's own flush loop (an outbox, or anything like one): a pause-flush
// fault pauses it, and its totals are the run's "flush" report. After the drain the engine
// stops it and closes its connection, so that its backend hands its statistics to the
// database before the run's cost is read.
type FlushLoop interface {
	Pause()
	Resume()
	Stats() results.Flush
	Stop()
	Close(ctx context.Context) error
}

// ConnectionUser is a suite that opens connections of its own in a run (Run.NewPool): the
// most it holds at once, once its flags are parsed. The temporary server's max_connections
// makes room for them beside the engine's own.
type ConnectionUser interface {
	Connections() int
}

// FigureReporter is a suite with figures of its own per run, beyond what the engine measures
// (a job queue's claim latency, time in queue, table growth): Figures is called once the run
// is verified, and its figures go into the run's report (results.Run.Figures) in the order
// given. A figure that cannot be measured is left out rather than reported as 0.
type FigureReporter interface {
	Figures(ctx context.Context, r *Run) ([]Figure, error)
}

// Preparer is a suite that needs the database before its first run: to create what its flags
// describe (a script suite's init file) and to check its flags against what is there (which of
// a script's statements the modes can take). Prepare runs once per invocation, after the
// database is open and before anything is measured; its error is bad input, reported in one
// line with exit 2, since nothing has run.
type Preparer interface {
	Prepare(ctx context.Context, p PrepareEnv) error
}

// PrepareEnv is what Prepare works with: the engine's own connection to the run's schema, the
// invocation's flags, and whether this process joins a run another process set up (a split
// run's consumer: the tables are there already).
type PrepareEnv struct {
	Admin   sqldb.Conn
	Schema  string
	Config  Config
	Joining bool
}

// Reconciler is a suite whose writes can be found per request in the database.
type Reconciler interface {
	// Persisted returns, for request indexes 0..n-1, how many times each request's write is
	// in the database (0: not there; 1: once; more: applied more than once).
	Persisted(ctx context.Context, r *Run, n int64) ([]int32, error)
}

// ErrNothingToReconcile is what Persisted returns for a run that keeps nothing per request to
// find its writes by: its requests write nothing (a suite's persistence level "none"), or
// write without a claim (a script's sync run as written). The run is then accounted like a
// suite without a Reconciler, instead of every request looking lost; its requests whose
// outcome was unknown stay unknown (Unresolved).
var ErrNothingToReconcile = errors.New("testkit: the run persists nothing per request")
