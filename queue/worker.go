package queue

import (
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue/internal/backend"
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

	lagMu sync.Mutex
	lag   *hist.Histogram // µs from Enqueue to commit, per written source record

	// Owned by the worker goroutine.
	batch     []entry[T] // source records in hand, in arrival order
	recs      []T        // what is handed to the Flusher
	one       []T        // a single record being written individually
	compactor *backend.Compactor[K, T]
	timer     *time.Timer
}

func newWorker[K comparable, T any](q *Queue[K, T], share int) *worker[K, T] {
	o := &q.opts
	w := &worker[K, T]{
		q:     q,
		in:    newFifo[T](share),
		wake:  make(chan struct{}, 1),
		lag:   hist.New(),
		batch: make([]entry[T], 0, min(o.BatchSize, 4096)),
		one:   make([]T, 1),
		timer: time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	if o.Compaction {
		w.compactor = backend.NewCompactor(o.Key, o.Merge, o.Compare)
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
			w.abandonAll()
			return
		}
		paused, pauseC, _ := q.gate.state()
		if paused {
			w.park()
			continue
		}
		open := w.fill()
		switch {
		case !open: // Close sealed the queue and the fifo is empty
			w.flush()
			w.abandonAll() // no-op unless the flush was aborted
			return
		case len(w.batch) >= q.opts.BatchSize:
			w.flush()
		case len(w.batch) == 0:
			w.idle(pauseC)
		default:
			w.nap(pauseC)
		}
	}
}

// fill moves records from the fifo into the batch without blocking. It reports false once
// Close has sealed the queue and the fifo is empty: no record can come any more.
func (w *worker[K, T]) fill() bool {
	sealed := backend.IsClosed(w.q.sealedC) // first: once sealed, no push can follow
	n := len(w.batch)
	w.batch = w.in.take(w.batch, w.q.opts.BatchSize-n)
	w.q.release(int64(len(w.batch) - n))
	return !sealed || w.in.holds() > 0
}

// idle waits for the first record of a batch.
func (w *worker[K, T]) idle(pauseC <-chan struct{}) { w.await(1, nil, pauseC, w.q.sealedC) }

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

// flush writes the batch in hand: one transaction, retried MaxRetries times with backoff,
// then record by record (fallback). It returns with the batch empty.
func (w *worker[K, T]) flush() {
	if len(w.batch) == 0 {
		return
	}
	q := w.q
	recs := w.records()
	var res FlushResult
	write := func() (err error) {
		res, err = q.flusher.Flush(q.life.Ctx(), recs)
		return err
	}
	switch backend.RetryBatch(&q.c, len(w.batch), q.opts.MaxRetries, write, w.backoff) {
	case backend.BatchWritten:
		w.committed(res, len(recs))
	case backend.BatchGivenUp:
		w.abandonFrom(0)
	default:
		w.fallback()
	}
}

// records builds what the Flusher receives from the batch: compacted and sorted, or as is.
func (w *worker[K, T]) records() []T {
	w.recs = w.recs[:0]
	for i := range w.batch {
		w.recs = append(w.recs, w.batch[i].rec)
	}
	if w.compactor != nil {
		w.recs = w.compactor.Compact(w.recs)
	}
	return w.recs
}

// committed accounts for a successful batch flush.
func (w *worker[K, T]) committed(res FlushResult, sqlRecords int) {
	n := int64(len(w.batch))
	now := w.q.now()
	w.lagMu.Lock()
	for i := range w.batch {
		w.lag.RecordMicros((now - w.batch[i].at) / 1e3)
	}
	w.lagMu.Unlock()
	c := &w.q.c
	c.Flushed.Add(n)
	c.Batches.Add(1)
	c.SQLOps.Add(int64(res.SQLOps))
	c.SQLRecords.Add(int64(sqlRecords))
	c.Compacted.Add(n - int64(sqlRecords))
	c.Pending.Add(-n)
	w.reset()
}

// fallback writes the batch's source records one by one, in arrival order. A record that
// fails holds back only the later records of its own slot (per-slot order); the records left
// are retried, in order, after a backoff, until all are written or Close's deadline abandons
// them. So one record the Flusher refuses does not keep the other slots from being written.
func (w *worker[K, T]) fallback() {
	q := w.q
	left := make([]int, len(w.batch)) // indexes into w.batch not yet written, in order
	for i := range left {
		left[i] = i
	}
	tried := make([]bool, len(w.batch))
	held := make(map[K]bool)
	for attempt := 1; ; attempt++ {
		clear(held)
		rest := left[:0]
		for _, i := range left {
			k := q.opts.Key(w.batch[i].rec)
			if !held[k] {
				if tried[i] {
					q.c.Retries.Add(1)
				}
				tried[i] = true
				w.one[0] = w.batch[i].rec
				if _, err := q.flusher.Flush(q.life.Ctx(), w.one); err == nil {
					q.c.SyncFallback.Add(1)
					q.c.Pending.Add(-1)
					w.recordLag(q.now() - w.batch[i].at)
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
	w.reset()
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

// abandonFrom counts batch[i:] as abandoned and empties the batch.
func (w *worker[K, T]) abandonFrom(i int) {
	w.abandon(int64(len(w.batch) - i))
	w.reset()
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
	w.abandonFrom(0)
	<-w.q.sealedC
	n := w.in.drop()
	w.q.release(n)
	w.abandon(n)
}

// retire gives up what the worker allocated once it is done, so that a queue kept for its
// metrics after Close holds no records' memory.
func (w *worker[K, T]) retire() {
	w.in.drop()
	w.batch, w.recs, w.one, w.compactor = nil, nil, nil, nil
}

// reset empties the batch, dropping references so flushed records can be collected.
func (w *worker[K, T]) reset() {
	clear(w.batch)
	w.batch = w.batch[:0]
	clear(w.recs)
	w.recs = w.recs[:0]
	clear(w.one)
}
