package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// The river mode: River's own client (github.com/riverqueue/river) does the same work as our
// workers on the same server — the requests insert through it (InsertTx, in the request's
// transaction), --workers of its workers run the jobs, its batching completer completes them —
// with River's tables, created by River's own migrator in the run's schema. Nothing of River's
// path is ours but the job's work (a sleep) and the counting around it.

// River is the river mode.
var River = testkit.OwnMode("river")

// riverFetchCooldown is River's FetchCooldown in the river mode: River's own benchmark's (its
// default, 100 ms, caps a client at MaxWorkers jobs per 100 ms).
const riverFetchCooldown = 2 * time.Millisecond

// riverArgs is a job's args in River (river_job.args): the jobs' args column holds the same.
type riverArgs struct {
	I  int64 `json:"i"`
	Ms int32 `json:"ms"`
}

func (riverArgs) Kind() string { return "hotspotkit_job" }

// riverTables are River's tables, whose growth the river mode's figures read.
var riverTables = []string{"river_job"}

// migrateRiver creates River's tables in the run's schema with River's own migrator (up), or
// removes them (down): the engine empties every table of the schema before a run, River's
// migration records included, so each river run creates them afresh and removes them after.
func migrateRiver(ctx context.Context, r *testkit.Run, schema string, direction rivermigrate.Direction) error {
	pool, err := r.NewPool(ctx, testkit.PoolOptions{MaxConns: 1})
	if err != nil {
		return err
	}
	defer pool.Close()
	raw, err := riverPool(pool)
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(riverpgxv5.New(raw), &rivermigrate.Config{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	var opts *rivermigrate.MigrateOpts
	if direction == rivermigrate.DirectionDown {
		opts = &rivermigrate.MigrateOpts{TargetVersion: -1}
	}
	if _, err := m.Migrate(ctx, direction, opts); err != nil {
		return fmt.Errorf("River's migration %s: %w", direction, err)
	}
	return nil
}

// riverPool is the pgx pool under pool: River's driver is pgx's (River has no MySQL driver).
func riverPool(pool sqldb.Pool) (*pgxpool.Pool, error) {
	p, err := sqldb.RequirePgx(pool)
	if err != nil {
		return nil, fmt.Errorf("River: %w", err)
	}
	return p.(*pgxpool.Pool), nil
}

// riverRun is one river run.
type riverRun struct {
	st     *runState
	client *river.Client[pgx.Tx]
	pool   sqldb.Pool
	doom   atomic.Pointer[chan string]
	lease  time.Duration
	events sync.WaitGroup
	cancel func() // the subscription's
	// dead is closed when the client stops: the work of a killed worker returns then.
	dead     chan struct{}
	deadOnce sync.Once
}

// startRiver opens River's pool and client, starts it and counts its completions.
func startRiver(ctx context.Context, r *testkit.Run, st *runState, schema string, o options) (*riverRun, error) {
	rr := &riverRun{st: st, lease: o.lease, dead: make(chan struct{})}
	pool, err := r.NewPool(ctx, testkit.PoolOptions{MaxConns: o.workers + 4, Tracer: claimTimer{st}})
	if err != nil {
		return nil, err
	}
	rr.pool = pool
	raw, err := riverPool(pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &riverWorker{rr: rr})
	rr.client, err = river.NewClient(riverpgxv5.New(raw), &river.Config{
		Schema:            schema,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.workers}},
		Workers:           workers,
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: o.poll,
		// Through a transaction-mode pooler a LISTEN lasts one transaction: River then polls
		// (every FetchPollInterval), as its docs advise for PgBouncer, and the run's figures
		// say so (FigRiverPollOnly).
		PollOnly: pollOnly(r),
		// A job's lease: River's rescuer hands back a job that has been running for
		// RescueStuckJobsAfter, and only once its timeout has passed (a job without one is
		// never rescued), then it runs again at once. Validate keeps the lease above the
		// longest job, so no job of a live worker reaches its timeout.
		JobTimeout:           o.lease,
		RescueStuckJobsAfter: o.lease,
		RetryPolicy:          retryAtOnce{},
		Logger:               slog.New(errorCounter{&st.errors}),
	})
	if err != nil {
		pool.Close()
		return nil, err
	}
	size := 100_000
	if n := r.Requests(); n > 0 {
		size = int(n) + 1000
	}
	events, cancel := rr.client.SubscribeConfig(&river.SubscribeConfig{ChanSize: size, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	rr.cancel = cancel
	rr.events.Go(func() {
		for range events {
			st.completed.Add(1)
		}
	})
	if err := rr.client.Start(r.Context()); err != nil {
		cancel()
		pool.Close()
		return nil, err
	}
	return rr, nil
}

// insertOp inserts request i's job through River's client, in the request's transaction. A
// retry (the first try's COMMIT outcome was lost) looks for the job first, by River's index on
// args, so that it is not inserted twice; a first try does not.
func (rr *riverRun) insertOp(r *testkit.Run, g jobs) testkit.Op {
	return r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		ptx, err := sqldb.RequirePgx(tx) // River inserts in a pgx transaction
		if err != nil {
			return err
		}
		if rr.st.tally.at(i).tries.Add(1) > 1 {
			var there bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE args @> jsonb_build_object('i', $1::int8))`, i).Scan(&there); err != nil || there {
				return err
			}
		}
		_, err = rr.client.InsertTx(ctx, ptx.(pgx.Tx), riverArgs{I: i, Ms: g.ms(i)}, &river.InsertOpts{Priority: int(g.priority(i))})
		return err
	})
}

// riverUnfinishedSQL says whether a River job is still to be completed (or a dead worker's to be
// rescued).
const riverUnfinishedSQL = `SELECT EXISTS (SELECT 1 FROM river_job WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending'))`

// drain waits until River has completed every job, stops the client (the work of a killed
// worker, which never returned, returns an error then: River finds its job completed by the
// re-run and leaves it) and closes its pool.
func (rr *riverRun) drain(ctx context.Context) error {
	err := waitDone(ctx, rr.st, rr.pool, riverUnfinishedSQL)
	return errors.Join(err, rr.stop(ctx))
}

func (rr *riverRun) stop(ctx context.Context) error {
	if rr.pool == nil {
		return nil
	}
	rr.deadOnce.Do(func() { close(rr.dead) })
	err := rr.client.StopAndCancel(ctx)
	rr.cancel()
	rr.events.Wait()
	rr.st.done.CompareAndSwap(0, time.Now().UnixNano())
	rr.pool.Close()
	rr.pool = nil
	return err
}

// kill arms kill-worker: the next job River starts never returns, as if its worker had died;
// River's rescuer hands it back once it has been running for --lease-ms (RescueStuckJobsAfter),
// on its next round (River runs it every 30 s), and it runs again.
func (rr *riverRun) kill(ctx context.Context) (string, error) {
	return armDoom(ctx, &rr.doom)
}

// riverWorker runs a job in River: counted as claimed when River hands it over, then its time.
type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	rr *riverRun
}

func (w *riverWorker) Work(ctx context.Context, j *river.Job[riverArgs]) error {
	st := w.rr.st
	st.claimedOne(j.Args.I, int32(j.Attempt))
	st.startedOne(int(j.ID%shards), time.Since(j.CreatedAt)) // the server's insert time, the same host's clock
	if w.rr.doom.Load() != nil {
		if done := w.rr.doom.Swap(nil); done != nil {
			st.killed.Add(1)
			st.held.Add(1)
			*done <- fmt.Sprintf("one of River's workers stopped mid-job (job %d) and never returned: River's rescuer hands it back once it has been running for RescueStuckJobsAfter (--lease-ms, %d ms), on its next round (every 30 s), and it runs again",
				j.Args.I, w.rr.lease.Milliseconds())
			<-w.rr.dead // a dead worker returns nothing, whatever River cancels; until the client stops
			return errors.New("killed mid-job (kill-worker)")
		}
	}
	select {
	case <-time.After(time.Duration(j.Args.Ms) * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	st.finishedOne(j.Args.I)
	return nil
}

// retryAtOnce makes a rescued job available again at once, as our reaper does.
type retryAtOnce struct{}

func (retryAtOnce) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// claimTimer times River's claims (its fetch statement) on its pool, as our workers time
// theirs: from sending the statement to reading its last row, for those that took jobs.
type claimTimer struct{ st *runState }

type claimStarted struct{}

func (c claimTimer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "name: JobGetAvailable") {
		return context.WithValue(ctx, claimStarted{}, time.Now())
	}
	return ctx
}

func (c claimTimer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	start, ok := ctx.Value(claimStarted{}).(time.Time)
	if !ok || data.Err != nil || data.CommandTag.RowsAffected() == 0 {
		return
	}
	c.st.claimLatency.Record(int(start.UnixNano()%shards), time.Since(start))
	c.st.claims.Add(1)
}

// errorCounter is River's logger: it prints nothing (a suite prints nothing) and counts what
// River logs as errors (a fault striking its connections), as our workers count theirs.
type errorCounter struct{ n *atomic.Int64 }

func (h errorCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h errorCounter) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h errorCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h errorCounter) WithGroup(string) slog.Handler      { return h }

// pollOnly says River runs without LISTEN/NOTIFY: its connections go through a pooler in
// transaction mode.
func pollOnly(r *testkit.Run) bool { return r.Config().PoolerMode == "transaction" }
