package testkit

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/keydist"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Run is one run of a suite — one mode, on freshly reset tables — as the engine hands it to
// the suite's Seed, Workload, Persisted and Verify. It is read-only.
type Run struct {
	env  *runenv.Env
	mode Mode
	cfg  Config
}

// Config is what a suite reads of the flags every suite shares (Run.Config, Validator): a
// copy, so changing it changes nothing.
type Config struct {
	// PoolerMode is the pool mode of the pooler every connection of the service goes through
	// (--pooler, --pooler-url): "transaction" or "session"; "" without a pooler. Under
	// "transaction" a client's session state does not last beyond its transaction (LISTEN,
	// session advisory locks, SET, statements it prepares by name): a suite that needs it
	// adapts (the job queue's river mode polls) or refuses the mode.
	PoolerMode string
	// Requests is --requests (0: runs are bound by --duration); Run.Requests is one run's.
	Requests int64
	Duration time.Duration
	// Concurrency is --concurrency (a --levels rung runs at its own).
	Concurrency int
	// HotKeys is --hot-keys: the number of hot rows per hot table.
	HotKeys int
	// HotKeyDist is --hot-key-dist: how a suite with hot sets (Info.HotSets) spreads its
	// requests over the HotKeys sets (HotSet). The zero value is uniform.
	HotKeyDist HotKeyDist
	// Seed is --seed, for anything the suite draws at random.
	Seed int64
	// FlushBatchSize and FlushInterval bound a flush loop's batch (--flush-batch-size) and the
	// longest a partial batch waits (--flush-interval-ms).
	FlushBatchSize int
	FlushInterval  time.Duration
	// RequestTimeout is --request-timeout: a flush loop bounds each of its flushes by it, as the
	// engine bounds each try of a request.
	RequestTimeout time.Duration
	// Slots is the most slots a run of the invocation splits a hot row into (--slots, or the
	// largest of --slots-levels); 1 without slots.
	Slots int
	// SlotPick is --slot-pick (SlotPickHash, ...) for a suite with slots (Info.Slots).
	SlotPick string
	// Modes are the modes the invocation runs (--modes), in order.
	Modes []Mode
	// SplitRun is set when this process is one part of a run split over several (--role
	// producer or consumer, on a Redis stream).
	SplitRun bool
	// Dialect is the SQL the run's database speaks, as the flags say before any server starts
	// (--database, --mysql-url): a suite's Validator refuses a mode the database cannot run
	// (River has no MySQL driver). Run.Dialect says the same once the database is open.
	Dialect sqldb.Dialect
}

// HotKeyDist is a distribution of requests over hot sets: uniform, zipf:θ or exponential:λ
// (--hot-key-dist, parsed by the engine). Pick(seed, i) is request i's set, rank 0 the hottest;
// HottestShare is the share of the requests that set takes in theory; String is the spec.
type HotKeyDist = keydist.HotKeyDist

// HotSet is the hot set request i writes, 0..HotKeys-1: drawn by HotKeyDist from Seed and i
// alone, so every process of a run picks the same set for a request; under uniform (and the
// zero HotKeyDist) i mod HotKeys.
func (c Config) HotSet(i int64) int {
	if c.HotKeyDist.Keys() == 0 {
		return int(i % int64(max(c.HotKeys, 1)))
	}
	return c.HotKeyDist.Pick(c.Seed, i)
}

// NewRun is how the engine hands a suite one run of its invocation: env in mode, under the
// common flags cfg. A suite never makes a Run (its environment is the engine's to set up).
func NewRun(env *runenv.Env, mode Mode, cfg Config) *Run {
	return &Run{env: env, mode: mode, cfg: cfg}
}

// Mode is the run's mode, one of the suite's Info.Modes.
func (r *Run) Mode() Mode { return r.mode }

// Config is the invocation's common flags.
func (r *Run) Config() Config { return r.cfg }

// Requests is the number of requests this run makes (0: bound by --duration, as a ladder rung
// or a run at a rate is).
func (r *Run) Requests() int64 { return r.env.Requests }

// Slots is the number of physical rows per hot logical row (--slots, or this run's
// --slots-levels count); 0 for a suite without slots.
func (r *Run) Slots() int { return r.env.Slots }

// Dialect is the SQL the run's database speaks: a suite picks its statements by it, once per
// run (package sqldb).
func (r *Run) Dialect() sqldb.Dialect { return r.env.Target.Dialect() }

// Admin is the engine's own connection to the run's schema, for seeding and verification. The
// engine owns it: a suite does not close it.
func (r *Run) Admin() sqldb.Conn { return r.env.Target.Admin() }

// Pool is the load's pool (--max-connections), which requests write through.
func (r *Run) Pool() sqldb.Pool { return r.env.Pool }

// Connect opens a connection of the caller's own to the run's schema (a flush loop's), named
// appName in pg_stat_activity (MySQL: its program_name connection attribute).
func (r *Run) Connect(ctx context.Context, appName string) (sqldb.Conn, error) {
	return r.env.Target.Connect(ctx, appName)
}

// PoolOptions shape a pool of the suite's own (Run.NewPool).
type PoolOptions struct {
	// MaxConns bounds the pool; count it in the suite's Connections (ConnectionUser).
	MaxConns int
	// Tracer, when set, traces every statement of the pool's connections on PostgreSQL (a
	// suite that times a client's statements it does not issue itself: River's).
	Tracer pgx.QueryTracer
}

// NewPool opens a pool of the suite's own to the run's schema, for background work the suite
// runs itself beside the requests (a job queue's workers, a third-party client's). Its
// sessions are named hotspotkit-workers in pg_stat_activity: routed like the load's (--db-rtt),
// with the session settings the *-timeout faults put on the load, and ended by
// terminate-backends with the load's. The suite closes it in its Workload's Drain, once its
// work is done: the run's database figures are read when its sessions have exited. A client
// that wants pgx's own pool (River's) takes it with sqldb.AsPgx.
func (r *Run) NewPool(ctx context.Context, o PoolOptions) (sqldb.Pool, error) {
	pool, err := r.env.Target.NewPool(ctx, database.PoolOptions{MaxConns: int32(o.MaxConns), AppName: faults.WorkersApp,
		Settings: r.env.SessionSettings, Tracer: o.Tracer})
	if err != nil {
		return nil, err
	}
	return pool.SQL(), nil
}

// Context ends when the invocation is aborted (a second signal): background work the workload
// starts runs under it.
func (r *Run) Context() context.Context { return r.env.Context }
