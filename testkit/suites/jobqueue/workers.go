package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// workers are the lease path of the modes of our own: --workers goroutines that claim, run,
// renew and complete jobs on a pool of their own, and the reaper that hands back the jobs of
// leases that ran out. A job is completed by its worker's own statement (sync) or handed to
// the run's completion queue (async, async-compact), whose writer completes it.
//
// Idle workers do not all poll: one holds the poll token and claims every --poll-ms; the others
// wait. A claim that finds jobs hands the token on (another idle worker polls), and a claim
// that filled its batch (there may be more) wakes an idle worker to claim at once; its own
// worker claims again as soon as it has run the batch when that took --poll-ms or longer (jobs
// will have come meanwhile), and goes idle otherwise. So a backlog is claimed by every worker
// in full batches, a trickle by few claims of many jobs, and an empty queue costs one claim per
// --poll-ms, not one per worker.
type workers struct {
	st      *runState
	pool    sqldb.Pool
	queue   *testkit.Queue[completion] // nil in sync
	sql     dialect
	n       int
	batch   int
	lease   time.Duration
	poll    time.Duration
	renew   bool
	ctx     context.Context // the run's: ends on a hard abort
	stop    chan struct{}   // closed once every job is done
	token   chan struct{}   // the poll token, when no worker holds it
	more    chan struct{}   // a full batch was claimed: an idle worker claims at once
	wg      sync.WaitGroup
	doom    atomic.Pointer[chan string] // kill-worker, armed
	stopped sync.Once
}

// start starts the workers and the reaper.
func (ws *workers) start() {
	ws.stop, ws.token, ws.more = make(chan struct{}), make(chan struct{}, 1), make(chan struct{}, 1)
	ws.token <- struct{}{}
	for id := range ws.n {
		ws.wg.Go(func() { ws.work(id) })
	}
	ws.wg.Go(ws.reap)
}

// work is one worker: when idle, poll (holding the token) or wait; claim a batch, run each job
// in turn (renewing the lease of what it holds when the lease would run out), complete it.
func (ws *workers) work(id int) {
	polling, claimNow := false, false
	for {
		if !claimNow && !ws.idle(&polling) {
			return
		}
		held, until, err := ws.claim(id)
		if err != nil {
			ws.st.failed(err)
		}
		full := len(held) == ws.batch
		if full {
			select { // there may be more: an idle worker claims too
			case ws.more <- struct{}{}:
			default:
			}
		}
		if claimNow = false; len(held) == 0 {
			continue
		}
		if polling { // another idle worker polls while this one works
			polling = false
			ws.token <- struct{}{}
		}
		busy := time.Now()
		lost := map[int64]bool{}
		for k, j := range held {
			if lost[j.ID] {
				continue // its lease ran out while it waited in the batch: another worker has it
			}
			if ws.dies(id, held[k:], lost) {
				return // mid-job, holding the rest: nothing is released
			}
			ws.st.startedOne(id, j.Waited+time.Since(j.claimed))
			var ok bool
			if until, ok = ws.run(j, held[k:], lost, until); !ok {
				return
			}
			ws.st.finishedOne(j.ID)
			if !ws.complete(j) {
				return
			}
		}
		claimNow = full && time.Since(busy) >= ws.poll
	}
}

// idle waits for the next claim: --poll-ms when the worker holds the poll token, else until it
// takes the token (then --poll-ms) or a full batch wakes it. False once the workers stop.
func (ws *workers) idle(polling *bool) bool {
	if !*polling {
		select {
		case <-ws.token:
			*polling = true
		case <-ws.more:
			return true
		case <-ws.stop:
			return false
		case <-ws.ctx.Done():
			return false
		}
	}
	return ws.sleep(ws.poll)
}

// claim takes up to --claim-batch jobs; the lease runs from before the statement was sent. A
// job's Waited is its time since its insert when the claim returned it (the server's clock).
func (ws *workers) claim(id int) ([]job, time.Time, error) {
	start := time.Now()
	held, err := ws.sql.claim(ws.ctx, ws.pool, ws.batch, ws.lease)
	if err != nil {
		// The claim may have committed: its jobs are then held by no one until their lease
		// runs out, and run again after it (a re-run the verification counts).
		return nil, time.Time{}, err
	}
	if len(held) > 0 {
		now := time.Now()
		ws.st.claimLatency.Record(id, now.Sub(start))
		ws.st.claims.Add(1)
		for k, j := range held {
			ws.st.claimedOne(j.ID, j.Attempt)
			held[k].claimed = start
		}
	}
	return held, start.Add(ws.lease), nil
}

// run runs job j (the first of rest, what the worker still holds) for its time; with --renew it
// first renews the lease of everything held whenever less than half of it is left. It returns
// the lease's end, and false on a hard abort.
func (ws *workers) run(j job, rest []job, lost map[int64]bool, until time.Time) (time.Time, bool) {
	end := time.Now().Add(time.Duration(j.Ms) * time.Millisecond)
	for {
		if ws.renew && time.Until(until) < ws.lease/2 {
			until = ws.renewHeld(rest, lost, until)
		}
		wait := time.Until(end)
		if wait <= 0 {
			return until, true
		}
		if ws.renew {
			wait = min(wait, max(time.Until(until)-ws.lease/2, time.Millisecond))
		}
		select {
		case <-time.After(wait):
		case <-ws.ctx.Done():
			return until, false
		}
	}
}

// renewHeld extends the lease of the jobs held; those whose lease was lost already (another
// worker claimed them) are marked lost. On an error the old lease stands.
func (ws *workers) renewHeld(rest []job, lost map[int64]bool, until time.Time) time.Time {
	var held []completion
	for _, j := range rest {
		if !lost[j.ID] {
			held = append(held, completion{j.ID, j.Attempt})
		}
	}
	start := time.Now()
	kept, err := ws.sql.renew(ws.ctx, ws.pool, held, ws.lease)
	if err != nil {
		ws.st.failed(err)
		return until
	}
	ws.st.renewals.Add(1)
	for _, c := range held {
		if !kept[c.ID] {
			lost[c.ID] = true
		}
	}
	return start.Add(ws.lease)
}

// complete completes job j: sync, with its own statement and commit, tried again until it
// commits (a completion whose outcome was lost finds the job completed and completes nothing);
// queued, handed to the completion queue. It returns false on a hard abort.
func (ws *workers) complete(j job) bool {
	for {
		var err error
		if ws.queue == nil {
			var n int64
			if n, err = ws.completeOne(j); err == nil {
				if n == 1 {
					ws.st.completed.Add(1)
				} else {
					ws.st.fenced.Add(1)
				}
				return true
			}
		} else if err = ws.queue.Enqueue(ws.ctx, completion{j.ID, j.Attempt}); err == nil || errors.Is(err, testkit.ErrQueueDropped) {
			return true // a dropped completion leaves the job to run again once its lease is over
		}
		ws.st.failed(err)
		if !ws.sleepOrAbort(ws.poll) {
			return false
		}
	}
}

func (ws *workers) completeOne(j job) (int64, error) {
	return ws.sql.completeOne(ws.ctx, ws.pool, completion{j.ID, j.Attempt})
}

// dies is kill-worker: when armed, the worker about to run the first of rest stops here, mid-job,
// holding rest (minus what it lost), and says so.
func (ws *workers) dies(id int, rest []job, lost map[int64]bool) bool {
	if ws.doom.Load() == nil {
		return false
	}
	done := ws.doom.Swap(nil)
	if done == nil {
		return false
	}
	held := int64(0)
	for _, j := range rest {
		if !lost[j.ID] {
			held++
		}
	}
	ws.st.killed.Add(1)
	ws.st.held.Add(held)
	*done <- fmt.Sprintf("worker %d stopped mid-job holding %d claimed jobs (job %d running): they are claimed and run again once their lease (%d ms) has run out",
		id, held, rest[0].ID, ws.lease.Milliseconds())
	return true
}

// kill arms kill-worker and waits until a worker has died.
func (ws *workers) kill(ctx context.Context) (string, error) {
	return armDoom(ctx, &ws.doom)
}

// armDoom arms doom and waits until the work it strikes takes it.
func armDoom(ctx context.Context, doom *atomic.Pointer[chan string]) (string, error) {
	done := make(chan string, 1)
	doom.Store(&done)
	select {
	case detail := <-done:
		return detail, nil
	case <-ctx.Done():
		if doom.CompareAndSwap(&done, nil) {
			return "", errors.New("not injected: no job started before the run was over")
		}
		return <-done, nil
	}
}

// reap hands back the jobs whose lease ran out, every quarter lease (10 ms to 1 s).
func (ws *workers) reap() {
	every := min(max(ws.lease/4, 10*time.Millisecond), time.Second)
	for ws.sleep(every) {
		n, err := ws.pool.Exec(ws.ctx, ws.sql.reapSQL())
		if err != nil {
			ws.st.failed(err)
			continue
		}
		ws.st.reaped.Add(n)
	}
}

// sleep waits d; false once the workers are stopped or the run aborted.
func (ws *workers) sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ws.stop:
	case <-ws.ctx.Done():
	}
	return false
}

// sleepOrAbort waits d; false on a hard abort only (a completion is not given up on a stop).
func (ws *workers) sleepOrAbort(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ws.ctx.Done():
		return false
	}
}

// drain waits until every job is done (waitDone), stops the workers and the reaper, writes what
// the completion queue holds, and closes the pool: the run's figures are read once its
// sessions have exited.
func (ws *workers) drain(ctx context.Context) error {
	err := waitDone(ctx, ws.st, ws.pool, unfinishedSQL)
	ws.halt()
	if ws.queue != nil {
		err = errors.Join(err, ws.queue.Drain(ctx))
	}
	ws.st.done.CompareAndSwap(0, time.Now().UnixNano())
	ws.pool.Close()
	return err
}

// halt stops the workers and the reaper and waits for them.
func (ws *workers) halt() {
	ws.stopped.Do(func() { close(ws.stop) })
	ws.wg.Wait()
}

// unfinishedSQL says whether a job is still to be completed.
const unfinishedSQL = `SELECT EXISTS (SELECT 1 FROM jobs WHERE state IN ('available', 'running'))`

// waitDone returns once the database holds no unfinished job (unfinished: a query saying
// whether one is left). It asks when the completions counted reach the inserts acknowledged,
// and at least every second (an insert or a completion whose outcome was lost is counted
// wrong), so that a run without faults asks about once.
func waitDone(ctx context.Context, st *runState, pool sqldb.Querier, unfinished string) error {
	var asked time.Time
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if st.completed.Load() >= st.inserted.Load() || time.Since(asked) > time.Second {
			asked = time.Now()
			var left bool
			if err := pool.QueryRow(ctx, unfinished).Scan(&left); err == nil && !left {
				st.done.Store(time.Now().UnixNano())
				st.errorsAtDone.Store(st.errors.Load())
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if last := st.lastError.Load(); last != nil {
				return fmt.Errorf("jobs still unfinished (%d statements of the workers failed, the last: %s): %w", st.errors.Load(), *last, ctx.Err())
			}
			return fmt.Errorf("jobs still unfinished: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
