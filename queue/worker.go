package queue

import (
	"context"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// entry is a source record with the time Enqueue was called (queue.now).
type entry[T any] struct {
	rec T
	at  int64
}

// worker owns one fifo and flushes the slots routed to it, one batch at a time. The fifo
// grows and shrinks with the records the worker holds; one worker may hold the whole capacity
// (a hot spot whose slots all route to it) while memory stays bounded by it.
type worker[K comparable, T any] struct {
	q    *Queue[K, T]
	in   *fifo[T]
	wake chan struct{} // capacity 1: "your fifo holds what you wait for"

	lagMu   sync.Mutex
	lag     *hist.Histogram // µs from Enqueue to commit, per written source record
	flushes *hist.Histogram // µs from BEGIN to the end of COMMIT, per committed batch

	// With Options.Pipeline: the Flusher's Stage, and the batch committing while the worker
	// writes the next (nil when none is).
	stager StagedFlusher[T]
	prev   *inflight[T]

	// Owned by the worker goroutine.
	batch     []entry[T] // source records in hand, in arrival order
	spare     []entry[T] // the batch buffer a committed pipelined batch gave back
	recs      []T        // what is handed to the Flusher
	one       []T        // a single record being written individually
	compactor *core.Compactor[K, T]
	timer     *time.Timer
}

func newWorker[K comparable, T any](q *Queue[K, T], share int) *worker[K, T] {
	o := &q.opts
	w := &worker[K, T]{
		q:       q,
		in:      newFifo[T](share),
		wake:    make(chan struct{}, 1),
		lag:     hist.New(),
		flushes: hist.New(),
		batch:   make([]entry[T], 0, min(o.BatchSize, 4096)),
		one:     make([]T, 1),
		timer:   time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	if o.Pipeline {
		w.stager = q.flusher.(StagedFlusher[T]) // New checked
	}
	if o.Compaction {
		w.compactor = core.NewCompactor(o.Key, o.Merge, o.Compare)
	}
	return w
}

// put hands e to the worker without blocking; the caller has reserved room for it
// (Queue.reserve).
func (w *worker[K, T]) put(e entry[T]) {
	if w.in.push(e) {
		w.nudge()
	}
}

// await waits, unless the fifo already holds need records, until producers report that it
// does, for the timer when armed, or for stop, a pause, Close's end of intake or its deadline.
func (w *worker[K, T]) await(need int, timer <-chan time.Time, pauseC <-chan struct{}, stop <-chan struct{}) {
	if w.in.wait(need) {
		w.in.wait(0)
		return
	}
	defer w.in.wait(0)
	select {
	case <-w.wake:
	case <-timer:
	case <-pauseC:
	case <-stop:
	case <-w.q.life.AbortC():
	}
}

// nudge wakes the worker if it is napping on a partial batch.
func (w *worker[K, T]) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker[K, T]) run() {
	defer w.q.wg.Done()
	defer w.retire()
	q := w.q
	for {
		if q.aborted() {
			w.settle()
			w.abandonAll()
			return
		}
		paused, pauseC, _ := q.gate.state()
		if paused {
			w.settle()
			w.park()
			continue
		}
		open := w.fill()
		switch {
		case !open: // Close sealed the queue and the fifo is empty
			w.flush()
			w.settle()
			w.abandonAll() // no-op unless the flush was aborted
			return
		case len(w.batch) >= q.opts.BatchSize:
			w.flush()
		case len(w.batch) == 0:
			w.settle()
			w.idle(pauseC)
		default:
			w.settle()
			w.nap(pauseC)
		}
	}
}

// fill moves records from the fifo into the batch without blocking. It reports false once
// Close has sealed the queue and the fifo is empty: no record can come any more.
func (w *worker[K, T]) fill() bool {
	sealed := core.IsClosed(w.q.sealedC) // first: once sealed, no push can follow
	n := len(w.batch)
	w.batch = w.in.take(w.batch, w.q.opts.BatchSize-n)
	w.q.release(int64(len(w.batch) - n))
	return !sealed || w.in.holds() > 0
}

// idle waits for the first record of a batch.
func (w *worker[K, T]) idle(pauseC <-chan struct{}) {
	defer since(&w.q.clock.idle, time.Now())
	w.await(1, nil, pauseC, w.q.sealedC)
}

// nap holds a partial batch until it is due (FlushInterval after its oldest record was
// enqueued) or until producers report that the fifo holds the rest of a batch. Napping
// instead of taking record by record spares producers a goroutine wake-up per record.
func (w *worker[K, T]) nap(pauseC <-chan struct{}) {
	q := w.q
	due := time.Duration(w.batch[0].at + int64(q.opts.FlushInterval) - q.now())
	if due <= 0 || q.life.Closing() {
		w.flush()
		return
	}
	w.timer.Reset(due)
	defer w.timer.Stop()
	// The rest of the batch, but never more than the fifo can hold: records in the batch no
	// longer count against Capacity, so with Capacity < BatchSize a batch can outgrow it, and
	// a need of 0 would make await return at once and the worker spin until the batch is due.
	need := min(q.opts.BatchSize-len(w.batch), q.opts.Capacity)
	defer since(&q.clock.wait, time.Now())
	w.await(need, w.timer.C, pauseC, q.life.ClosingC())
}

// park blocks while the queue is paused, after telling Pause that this worker stopped.
func (w *worker[K, T]) park() {
	paused, _, resumeC := w.q.gate.state()
	if !paused {
		return
	}
	select {
	case w.q.acks <- struct{}{}:
	default: // cannot happen: one ack per worker per pause, and acks holds one per worker
	}
	<-resumeC
}

// flush writes the batch in hand and returns with the batch empty. Without Options.Pipeline it
// writes it (write) before it returns. With it, the batch is staged (written, not committed)
// while the previous batch commits; once that one has committed, this one's COMMIT goes out on
// its own goroutine and the worker is free to build the next. A batch commits only after its
// predecessor has: when the predecessor failed, the staged batch is rolled back, and both are
// written again in order (write), so per-slot order holds across a failure.
func (w *worker[K, T]) flush() {
	if len(w.batch) == 0 {
		return
	}
	q := w.q
	if w.stager == nil {
		w.batch = w.write(w.batch, nil)
		return
	}
	began := time.Now()
	recs := w.records(w.batch)
	staging := since(&q.clock.build, began)
	// The staging's context lasts until the batch commits: a transaction of database/sql
	// (MySQL's) is rolled back when the context it began with ends, where pgx's uses it for
	// BEGIN alone.
	sctx, cancel := q.opts.shared().FlushContext(q.life.Ctx())
	st, err := w.stager.Stage(sctx, recs)
	staged := time.Since(staging)
	failed, prevErr := w.awaitPrev()
	if err != nil || failed != nil {
		if err == nil {
			st.Rollback(q.life.Ctx())
		}
		cancel()
		if err != nil {
			q.clock.retry.Add(int64(staged))
		}
		if failed != nil {
			w.spare = w.write(failed.batch, prevErr)
		}
		w.batch = w.write(w.batch, err) // err: the staging was its first attempt
		return
	}
	p := &inflight[T]{batch: w.batch, sqlRecords: len(recs), staged: st, stageTime: staged, endStage: cancel, done: make(chan error, 1)}
	w.prev = p
	w.batch, w.spare = w.spare[:0], nil
	clear(w.recs)
	w.recs = w.recs[:0]
	go w.commit(p)
}

// inflight is a staged batch whose COMMIT is on its way.
type inflight[T any] struct {
	batch      []entry[T]
	sqlRecords int
	staged     Staged
	stageTime  time.Duration
	endStage   context.CancelFunc // ends the staging's context, once the batch is committed or not
	done       chan error         // the COMMIT's error; nil once the batch is committed and counted
}

// commit commits p and counts it when it committed.
func (w *worker[K, T]) commit(p *inflight[T]) {
	t := time.Now()
	ctx, cancel := w.q.opts.shared().FlushContext(w.q.life.Ctx())
	res, err := p.staged.Commit(ctx)
	cancel()
	p.endStage()
	if err == nil {
		w.committed(p.batch, res, len(p.batch), p.sqlRecords, p.stageTime+time.Since(t))
	}
	p.done <- err
}

// awaitPrev waits for the COMMIT of the batch in flight, if any, and returns it with its error
// when it failed; a committed one gives its buffer back.
func (w *worker[K, T]) awaitPrev() (*inflight[T], error) {
	p := w.prev
	if p == nil {
		return nil, nil
	}
	t := time.Now()
	err := <-p.done
	since(&w.q.clock.pipelineWait, t)
	w.prev = nil
	if err != nil {
		return p, err
	}
	clear(p.batch)
	w.spare = p.batch[:0]
	return nil, nil
}

// settle waits for the batch in flight and writes it again when its COMMIT failed, so that the
// worker holds nothing uncommitted when it waits, parks or stops.
func (w *worker[K, T]) settle() {
	if failed, err := w.awaitPrev(); failed != nil {
		w.spare = w.write(failed.batch, err)
	}
}

// write writes batch: one transaction, retried MaxRetries times with backoff, then record by
// record (fallback). firstErr, when not nil, is the error of a first attempt already made
// (a staged batch that failed). It returns batch emptied, for reuse.
func (w *worker[K, T]) write(batch []entry[T], firstErr error) []entry[T] {
	q := w.q
	began := time.Now()
	recs := w.records(batch)
	began = since(&q.clock.build, began)
	var res FlushResult
	var last time.Duration // the last attempt's
	write := func() (err error) {
		if firstErr != nil {
			err, firstErr = firstErr, nil
			return err
		}
		t := time.Now()
		ctx, cancel := q.opts.shared().FlushContext(q.life.Ctx())
		res, err = q.flusher.Flush(ctx, recs)
		cancel()
		last = time.Since(t)
		return err
	}
	outcome := core.RetryBatch(&q.c, len(batch), q.opts.MaxRetries, write, w.backoff)
	switch outcome {
	case core.BatchWritten:
		w.committed(batch, res, len(batch), len(recs), last)
	case core.BatchGivenUp:
		w.abandon(int64(len(batch)))
	default:
		w.fallback(batch)
	}
	spent := time.Since(began)
	if outcome == core.BatchWritten {
		spent -= last
	}
	q.clock.retry.Add(int64(spent))
	return w.reset(batch)
}

// records builds what the Flusher receives from batch: compacted and sorted, or as is.
func (w *worker[K, T]) records(batch []entry[T]) []T {
	w.recs = w.recs[:0]
	for i := range batch {
		w.recs = append(w.recs, batch[i].rec)
	}
	if w.compactor != nil {
		w.recs = w.compactor.Compact(w.recs)
	}
	return w.recs
}

// committed accounts for a successful batch flush of the n source records of batch, which
// reached the Flusher as sqlRecords records and took call (BEGIN to the end of COMMIT). It is
// called by the worker or, for a pipelined batch, by the goroutine that committed it.
func (w *worker[K, T]) committed(batch []entry[T], res FlushResult, n, sqlRecords int, call time.Duration) {
	if res.Phases.total() == 0 { // the Flusher does not say: the whole call counts as statements
		res.Phases.Statements = call
	}
	now := w.q.now()
	w.lagMu.Lock()
	for i := range batch {
		w.lag.RecordMicros((now - batch[i].at) / 1e3)
	}
	w.flushes.RecordMicros(res.Phases.total().Microseconds())
	w.lagMu.Unlock()
	w.q.clock.committed(res.Phases)
	c := &w.q.c
	c.Flushed.Add(int64(n))
	c.Batches.Add(1)
	c.SQLOps.Add(int64(res.SQLOps))
	c.SQLRecords.Add(int64(sqlRecords))
	c.Compacted.Add(int64(n - sqlRecords))
	c.Pending.Add(-int64(n))
}

// fallback writes the batch's source records one by one, in arrival order. A record that
// fails holds back only the later records of its own slot (per-slot order); the records left
// are retried, in order, after a backoff, until all are written or Close's deadline abandons
// them. So one record the Flusher refuses does not keep the other slots from being written.
func (w *worker[K, T]) fallback(batch []entry[T]) {
	q := w.q
	left := make([]int, len(batch)) // indexes into batch not yet written, in order
	for i := range left {
		left[i] = i
	}
	tried := make([]bool, len(batch))
	held := make(map[K]bool)
	for attempt := 1; ; attempt++ {
		clear(held)
		rest := left[:0]
		for _, i := range left {
			k := q.opts.Key(batch[i].rec)
			if !held[k] {
				if tried[i] {
					q.c.Retries.Add(1)
				}
				tried[i] = true
				w.one[0] = batch[i].rec
				ctx, cancel := q.opts.shared().FlushContext(q.life.Ctx())
				_, err := q.flusher.Flush(ctx, w.one)
				cancel()
				if err == nil {
					q.c.SyncFallback.Add(1)
					q.c.Pending.Add(-1)
					w.recordLag(q.now() - batch[i].at)
					continue
				}
				held[k] = true
			}
			rest = append(rest, i)
		}
		left = rest
		if len(left) == 0 {
			break
		}
		if !w.backoff(attempt) {
			w.abandon(int64(len(left)))
			break
		}
	}
}

// backoff waits before retry number attempt. A pause parks the worker and ends the wait (it
// retries on resume). It reports false when Close's deadline has expired.
func (w *worker[K, T]) backoff(attempt int) bool {
	q := w.q
	if q.aborted() {
		return false
	}
	_, pauseC, _ := q.gate.state()
	w.timer.Reset(q.opts.shared().RetryWait(attempt))
	defer w.timer.Stop()
	select {
	case <-w.timer.C:
	case <-pauseC:
		w.park()
	case <-q.life.AbortC():
	}
	return !q.aborted()
}

func (w *worker[K, T]) recordLag(nanos int64) {
	w.lagMu.Lock()
	w.lag.RecordMicros(nanos / 1e3)
	w.lagMu.Unlock()
}

// abandon counts n accepted records as abandoned.
func (w *worker[K, T]) abandon(n int64) {
	w.q.c.Abandoned.Add(n)
	w.q.c.Pending.Add(-n)
}

// abandonAll abandons the batch and the fifo's contents. It waits until Close has sealed the
// queue (once no Enqueue call is in flight) without taking records, so callers still waiting
// under PolicyBlock leave with ErrClosed instead of slipping records into a queue that gives up.
func (w *worker[K, T]) abandonAll() {
	w.abandon(int64(len(w.batch)))
	w.batch = w.reset(w.batch)
	<-w.q.sealedC
	n := w.in.drop()
	w.q.release(n)
	w.abandon(n)
}

// retire gives up what the worker allocated once it is done, so that a queue kept for its
// metrics after Close holds no records' memory.
func (w *worker[K, T]) retire() {
	w.in.drop()
	w.batch, w.spare, w.recs, w.one, w.compactor = nil, nil, nil, nil, nil
}

// reset empties batch, dropping references so flushed records can be collected, and returns
// it for reuse.
func (w *worker[K, T]) reset(batch []entry[T]) []entry[T] {
	clear(batch)
	clear(w.recs)
	w.recs = w.recs[:0]
	clear(w.one)
	return batch[:0]
}
