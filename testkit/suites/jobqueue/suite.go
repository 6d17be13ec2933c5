// Package jobqueue is the job-queue hot spot: a queue of jobs on a table, leased, on
// PostgreSQL or on MySQL 8 and MariaDB 10.6 or later (River's mode on PostgreSQL only).
// Every request inserts one job; --workers workers claim batches of them with FOR UPDATE SKIP
// LOCKED (by priority, then run time), hold a lease, run each job for its time, renew the
// lease of what outlives it, and complete it — kept, deleted or archived — while a reaper hands
// back the jobs of leases that ran out. It compares completing each job with its own UPDATE and
// commit (sync) with handing the completions to the async queue, written one statement per job
// (async) or merged into one array statement per batch (async-compact), and with River's own
// client doing the same work on the same server (river). It verifies that every job inserted
// was run to its end and completed exactly once, and counts the runs again of the jobs whose
// worker died (kill-worker).
//
// It owns the suite's SQL (jobs.sql and the lease path's statements, in each dialect), its workers and reaper,
// the river mode's client and migration, the per-job tally its verification reads, and its
// figures (claim latency, time in queue, the queue's tables before and after); the engine owns
// everything else.
package jobqueue

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river/rivermigrate"
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// sqlFiles are the suite's own tables (jobs.sql, and MySQL's in mysql/); package schema creates
// the shared ones.
//
//go:embed *.sql mysql/*.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "job_queue_hotspot_baseline"

var modes = []testkit.Mode{testkit.Sync, testkit.Async, testkit.AsyncCompact, River}

// options are the suite's flags.
type options struct {
	workers, claimBatch, leaseMs, jobMs, priorities, pollMs int
	spread                                                  float64
	renew                                                   bool
	onComplete                                              string
	lease, poll                                             time.Duration
}

// Suite implements testkit.Suite, Flagger, Validator, Preparer, Reconciler, ConnectionUser,
// FigureReporter and SummaryWriter.
type Suite struct {
	o options

	mu   sync.Mutex
	runs map[*testkit.Run]*run // the runs under way, until their workload is closed
}

// New returns the suite.
func New() *Suite { return &Suite{runs: map[*testkit.Run]*run{}} }

var (
	_ testkit.Preparer       = (*Suite)(nil)
	_ testkit.Flagger        = (*Suite)(nil)
	_ testkit.Validator      = (*Suite)(nil)
	_ testkit.Reconciler     = (*Suite)(nil)
	_ testkit.ConnectionUser = (*Suite)(nil)
	_ testkit.FigureReporter = (*Suite)(nil)
	_ testkit.SummaryWriter  = (*Suite)(nil)
)

// Info describes the suite.
func (*Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "a job queue on a table: jobs inserted, claimed with FOR UPDATE SKIP LOCKED under a lease, completed; River side by side",
		Description: `Each request inserts one job (priority 1..--priorities, a time of --job-ms ± --job-spread).
--workers workers claim up to --claim-batch available jobs at once (by priority, then run time,
FOR UPDATE SKIP LOCKED), which leases them for --lease-ms; a worker runs its jobs one after the
other, renews the lease of what it holds when less than half is left (--renew), and completes
each job: --on-complete keep (state completed), delete, or archive (moved to jobs_archive). A
reaper hands back the jobs whose lease ran out, and they are claimed and run again. Workers
that find nothing wait --poll-ms.
  sync           each job completed by its own UPDATE and commit
  async          completions queued; written one statement per job, a batch per transaction
  async-compact  completions merged per job and written in one array statement per batch
  river          River's client (github.com/riverqueue/river) doing the same work on the same
                 server: inserts through it, --workers of its workers, its batching completer;
                 its tables made by its own migrator; it keeps its rows whatever --on-complete
                 says, and its lease is RescueStuckJobsAfter (--lease-ms: it cannot renew)
Every job inserted must have run to its end and been completed exactly once; jobs run again
(a killed worker's, after its lease) are counted. --fault kill-worker@T stops a worker mid-job
without releasing what it holds. The summary adds jobs/s inserted, claimed and completed,
claim latency, time in queue, and the queue's dead tuples and growth per 10k jobs.`,
		Example: Name + " --requests 60000 --workers 64 --job-ms 5 --modes sync,async,async-compact,river" +
			" --output /tmp/jobqueue.json",
		Modes:         modes,
		DefaultModes:  modes,
		HotTables:     []string{"jobs"},
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		Faults: []string{testkit.FaultKillWorker, testkit.FaultTerminateBackends, testkit.FaultRestartPostgres,
			testkit.FaultCrashPostgres, testkit.FaultPauseFlush, testkit.FaultKillFlusher, testkit.FaultKillConsumer,
			testkit.FaultCrashRedis, testkit.FaultStatementTimeout, testkit.FaultLockTimeout, testkit.FaultConnStorm,
			testkit.FaultPoolerRestart, testkit.FaultPoolerPause},
		SQL: sqlFiles,
	}
}

// Flags registers the suite's flags.
func (s *Suite) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&s.o.workers, "workers", 64, "workers claiming and running jobs (river: its queue's MaxWorkers)")
	fs.IntVar(&s.o.claimBatch, "claim-batch", 10, "jobs a worker claims in one statement (river fetches for its free workers)")
	fs.IntVar(&s.o.leaseMs, "lease-ms", 30000, "how long a claim holds a job before the reaper hands it back, in ms (river: RescueStuckJobsAfter)")
	fs.IntVar(&s.o.jobMs, "job-ms", 0, "how long a job runs, in ms (on average)")
	fs.Float64Var(&s.o.spread, "job-spread", 0.5, "job times spread evenly over --job-ms × (1 ± this), 0..1")
	fs.BoolVar(&s.o.renew, "renew", true, "renew the lease of the jobs a worker holds when less than half of it is left (river cannot)")
	fs.StringVar(&s.o.onComplete, "on-complete", Keep, "what completing a job does: "+strings.Join(OnComplete, ", ")+" (river keeps its rows)")
	fs.IntVar(&s.o.priorities, "priorities", 4, "jobs spread over priorities 1..this (1..4, River's range)")
	fs.IntVar(&s.o.pollMs, "poll-ms", 20, "how long a worker that found no job waits before it looks again, in ms (river: FetchPollInterval)")
}

// Validate rejects flag values that make no sense, before any work starts.
func (s *Suite) Validate(c testkit.Config) error {
	o := &s.o
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	switch {
	case o.workers < 1:
		bad("--workers %d: want at least 1", o.workers)
	case o.claimBatch < 1:
		bad("--claim-batch %d: want at least 1 (jobs a claim takes)", o.claimBatch)
	case o.leaseMs < 1:
		bad("--lease-ms %d: want at least 1", o.leaseMs)
	case o.jobMs < 0:
		bad("--job-ms %d: want 0 or more", o.jobMs)
	case o.spread < 0 || o.spread > 1:
		bad("--job-spread %g: want 0..1", o.spread)
	case o.priorities < 1 || o.priorities > 4:
		bad("--priorities %d: want 1..4", o.priorities)
	case o.pollMs < 1:
		bad("--poll-ms %d: want at least 1", o.pollMs)
	case !slices.Contains(OnComplete, o.onComplete):
		bad("--on-complete %q: want %s", o.onComplete, strings.Join(OnComplete, ", "))
	case c.SplitRun:
		bad("--role: %s runs in one process (its workers and their completion queue are the run's own)", Name)
	case c.Dialect == sqldb.MySQL && slices.Contains(c.Modes, River):
		bad("--modes %s: River has no MySQL driver (its client runs on PostgreSQL only); on MySQL run --modes %s", River, strings.Join(ownModes(), ","))
	}
	if len(errs) == 0 {
		o.lease, o.poll = time.Duration(o.leaseMs)*time.Millisecond, time.Duration(o.pollMs)*time.Millisecond
		longest := s.jobs(c).longest()
		switch {
		case !o.renew && o.lease <= time.Duration(o.claimBatch)*longest:
			bad("--lease-ms %d with --renew=false: a worker runs its %d claimed jobs one after the other, up to %d ms (--claim-batch × the longest job, --job-ms × (1 + --job-spread)), and every job whose lease ran out first would run twice",
				o.leaseMs, o.claimBatch, (time.Duration(o.claimBatch) * longest).Milliseconds())
		case slices.Contains(c.Modes, River) && o.lease <= longest:
			bad("--lease-ms %d with --modes river: River cannot renew a lease, so RescueStuckJobsAfter (--lease-ms) must outlast the longest job (%d ms)",
				o.leaseMs, longest.Milliseconds())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Prepare refuses, before any run, a MySQL server without FOR UPDATE SKIP LOCKED (MariaDB
// before 10.6, MySQL before 8.0), naming its version. (The river mode on MySQL is refused
// earlier, by Validate: River has no MySQL driver.)
func (s *Suite) Prepare(ctx context.Context, p testkit.PrepareEnv) error {
	if p.Admin.Dialect() != sqldb.MySQL {
		return nil
	}
	var version string
	if err := p.Admin.QueryRow(ctx, `SELECT VERSION()`).Scan(&version); err != nil {
		return fmt.Errorf("reading the server's version: %w", err)
	}
	if !skipsLocked(version) {
		return fmt.Errorf("%s claims jobs with FOR UPDATE SKIP LOCKED, which MariaDB has from 10.6 and MySQL from 8.0; this server is %s", Name, version)
	}
	return nil
}

// ownModes are the modes of our own: every mode but River's.
func ownModes() []string {
	var out []string
	for _, m := range modes {
		if m != River {
			out = append(out, m.String())
		}
	}
	return out
}

// skipsLocked says whether a MySQL or MariaDB server of version (VERSION()'s text) has FOR
// UPDATE SKIP LOCKED.
func skipsLocked(version string) bool {
	ok, _ := sqldb.MySQLAtLeast(version, [3]int{8, 0, 0}, [3]int{10, 6, 0})
	return ok
}

// Connections is what a run's own pools hold at most: the workers' and the reaper's (River's
// pool is no larger).
func (s *Suite) Connections() int { return s.o.workers + 4 }

func (s *Suite) jobs(c testkit.Config) jobs {
	return jobs{seed: uint64(c.Seed), jobMs: s.o.jobMs, spread: s.o.spread, priorities: s.o.priorities}
}

// run is one run under way: its state, its statements and how to stop it.
type run struct {
	st     *runState
	sql    dialect
	schema string // River's (the river mode)
	river  *riverRun
	ws     *workers
}

func (s *Suite) runOf(r *testkit.Run) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[r]
}

// Seed writes nothing: the jobs table starts empty. The river mode's tables are made here, by
// River's migrator.
func (s *Suite) Seed(ctx context.Context, r *testkit.Run) error {
	if r.Mode() != River {
		return nil
	}
	schema, err := currentSchema(ctx, r)
	if err != nil {
		return err
	}
	var there bool
	if err := r.Admin().QueryRow(ctx, "SELECT to_regclass('river_job') IS NOT NULL").Scan(&there); err != nil {
		return err
	}
	if there {
		return fmt.Errorf("River's tables are in schema %s already (an earlier river run did not remove them)", schema)
	}
	return migrateRiver(ctx, r, schema, rivermigrate.DirectionUp)
}

func currentSchema(ctx context.Context, r *testkit.Run) (string, error) {
	var schema string
	err := r.Admin().QueryRow(ctx, "SELECT current_schema()").Scan(&schema)
	return schema, err
}

// Workload starts the run's workers (or River's client) and returns the op that inserts a job.
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	o := s.o
	st := newRunState(s.jobs(r.Config()), o.onComplete, o.lease)
	rn := &run{st: st, sql: dialectOf(r.Dialect(), o.onComplete)}
	var err error
	if st.before, err = rn.sql.readTables(ctx, r.Admin(), queueTables(r.Mode(), o.onComplete)); err != nil {
		return nil, err
	}
	var wl *testkit.Workload
	if r.Mode() == River {
		if rn.schema, err = currentSchema(ctx, r); err != nil {
			return nil, err
		}
		wl, err = s.riverWorkload(ctx, r, rn)
	} else {
		wl, err = s.workersWorkload(ctx, r, rn)
	}
	if err != nil {
		return nil, err
	}
	op := wl.Op
	wl.Op = func(ctx context.Context, req *testkit.Request) error {
		start := time.Now()
		err := op(ctx, req)
		if err == nil {
			st.insertedOne(start)
		}
		return err
	}
	s.mu.Lock()
	s.runs[r] = rn
	s.mu.Unlock()
	closeRun := wl.Close
	wl.Close = func() error {
		err := closeRun()
		s.mu.Lock()
		delete(s.runs, r)
		s.mu.Unlock()
		return err
	}
	return wl, nil
}

// pendingSQL counts the jobs not yet completed: the queue's depth over time in the samples.
const (
	pendingSQL      = `SELECT count(*) FROM jobs WHERE state IN ('available', 'running')`
	riverPendingSQL = `SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending')`
)

func (s *Suite) workersWorkload(ctx context.Context, r *testkit.Run, rn *run) (*testkit.Workload, error) {
	o, st := s.o, rn.st
	po := testkit.PoolOptions{MaxConns: o.workers + 2}
	if r.Dialect() == sqldb.MySQL {
		po.Settings = mysqlSession
	}
	pool, err := r.NewPool(ctx, po)
	if err != nil {
		return nil, err
	}
	ws := &workers{st: st, pool: pool, sql: rn.sql, n: o.workers, batch: o.claimBatch,
		lease: o.lease, poll: o.poll, renew: o.renew, ctx: r.Context()}
	faults := map[string]testkit.FaultHook{testkit.FaultKillWorker: ws.kill}
	if r.Mode().Async() {
		ws.queue, err = testkit.OpenQueue(ctx, r, testkit.AsyncSpec[int64, completion]{
			Key:     completionKey,
			Merge:   mergeCompletions,
			Compare: compareIDs,
			Writer: func(compact bool) testkit.TxWriter[completion] {
				return completionWriter{sql: rn.sql, compact: compact,
					done: func(n int) { st.completed.Add(int64(n)) }}
			},
		})
		if err != nil {
			pool.Close()
			return nil, err
		}
		for kind, hook := range ws.queue.Faults() {
			faults[kind] = hook
		}
	}
	ws.start()
	rn.ws = ws
	return &testkit.Workload{
		Op:         insertOp(r, st.g, rn.sql),
		Drain:      ws.drain,
		PendingSQL: pendingSQL,
		Faults:     faults,
		Close: func() error {
			ws.halt()
			if ws.queue != nil {
				_ = ws.queue.Close()
			}
			pool.Close()
			return nil
		},
	}, nil
}

func (s *Suite) riverWorkload(ctx context.Context, r *testkit.Run, rn *run) (*testkit.Workload, error) {
	rr, err := startRiver(ctx, r, rn.st, rn.schema, s.o)
	if err != nil {
		return nil, err
	}
	rn.river = rr
	return &testkit.Workload{
		Op:         rr.insertOp(r, rn.st.g),
		Drain:      rr.drain,
		PendingSQL: riverPendingSQL,
		Faults:     map[string]testkit.FaultHook{testkit.FaultKillWorker: rr.kill},
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			err := rr.stop(ctx)
			// The engine empties the schema's tables before each run, River's migration
			// records with them: River's tables go with their run.
			return errors.Join(err, migrateRiver(ctx, r, rn.schema, rivermigrate.DirectionDown))
		},
	}, nil
}
