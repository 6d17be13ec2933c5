package queue

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
)

// entry is a source record with the time Enqueue was called (queue.now).
type entry[T any] struct {
	rec T
	at  int64
}

// worker owns one channel and flushes the slots routed to it, one batch at a time. The
// channel holds the worker's share of the capacity; records past it wait in the spill (see
// put), so one worker can still hold the whole capacity while memory stays bounded by it.
type worker[K comparable, T any] struct {
	q    *Queue[K, T]
	ch   chan entry[T]
	wake chan struct{} // capacity 1: "your channel holds a batch's worth, is full, or spilled"
	// spilled is true while spill holds records; then every producer appends to the spill,
	// so that no record overtakes one enqueued before it. Read by every Enqueue.
	spilled atomic.Bool
	_       [64]byte
	// wakeAt is how many records the channel must hold before producers nudge the napping
	// worker; 0 while it is not napping. Written by the worker, read by every Enqueue.
	wakeAt atomic.Int64
	_      [64]byte

	lagMu sync.Mutex
	lag   *hist.Histogram // µs from Enqueue to commit, per written source record

	spillMu sync.Mutex
	spill   [][]entry[T] // records past the channel's share, in arrival order, in chunks

	// Owned by the worker goroutine.
	chanFirst int          // records to receive from the channel before the backlog
	backlog   [][]entry[T] // a spill taken over by the worker; backlog[0] from head on
	head      int
	chunk     int        // entries per spill chunk
	batch     []entry[T] // source records in hand, in arrival order
	recs      []T        // what is handed to the Flusher
	one       []T        // a single record being written individually
	compactor *compactor[K, T]
	timer     *time.Timer
}

func newWorker[K comparable, T any](q *Queue[K, T], share int) *worker[K, T] {
	o := &q.opts
	w := &worker[K, T]{
		q:     q,
		ch:    make(chan entry[T], share),
		wake:  make(chan struct{}, 1),
		lag:   hist.New(),
		batch: make([]entry[T], 0, min(o.BatchSize, 4096)),
		one:   make([]T, 1),
		chunk: min(share, spillChunk),
		timer: time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	if o.Compaction {
		w.compactor = newCompactor(o.Key, o.Merge, o.Compare)
	}
	return w
}

// put hands e to the worker without blocking; the caller has reserved room for it
// (Queue.reserve). Past the channel's share, or while earlier records wait in the spill, e is
// appended to the spill. The lock is taken only then: when one worker holds more than its
// share of the queue.
func (w *worker[K, T]) put(e entry[T]) {
	if !w.spilled.Load() {
		select {
		case w.ch <- e:
			return
		default:
		}
	}
	w.spillMu.Lock()
	if n := len(w.spill); n == 0 || len(w.spill[n-1]) == w.chunk {
		w.spill = append(w.spill, make([]entry[T], 0, w.chunk))
	}
	last := &w.spill[len(w.spill)-1]
	*last = append(*last, e)
	w.spilled.Store(true)
	w.spillMu.Unlock()
	w.nudge()
}

// spillChunk bounds a spill chunk, so a spill grows without copying what it holds.
const spillChunk = 1024

// unspill takes the spill over as the backlog, to be read after the records the channel holds
// now: a record sent to the channel before a spilled record was appended is among them, so
// arrival order holds. Called with the backlog empty and chanFirst 0.
func (w *worker[K, T]) unspill() {
	w.spillMu.Lock()
	defer w.spillMu.Unlock()
	w.chanFirst = len(w.ch)
	w.backlog, w.head = w.spill, 0
	w.spill = nil
	w.spilled.Store(false)
}

// fromBacklog moves the next backlog record into the batch.
func (w *worker[K, T]) fromBacklog() {
	c := w.backlog[0]
	w.batch = append(w.batch, c[w.head])
	c[w.head] = entry[T]{}
	if w.head++; w.head == len(c) {
		w.backlog, w.head = w.backlog[1:], 0
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
		case !open: // Close closed the channel after the last sender left
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

// fill moves records from the channel into the batch without blocking. It reports false when
// the channel is closed and empty.
func (w *worker[K, T]) fill() bool {
	n := len(w.batch)
	defer func() { w.q.release(int64(len(w.batch) - n)) }()
	for len(w.batch) < w.q.opts.BatchSize {
		if w.chanFirst == 0 {
			if len(w.backlog) > 0 {
				w.fromBacklog()
				continue
			}
			if w.spilled.Load() {
				w.unspill()
				continue
			}
		}
		select {
		case e, ok := <-w.ch:
			if !ok {
				return false
			}
			w.chanFirst = max(w.chanFirst-1, 0)
			w.batch = append(w.batch, e)
		default:
			return true
		}
	}
	return true
}

// idle waits for the first record of a batch.
func (w *worker[K, T]) idle(pauseC <-chan struct{}) {
	select {
	case e, ok := <-w.ch:
		if ok {
			w.q.release(1)
			w.batch = append(w.batch, e)
		}
	case <-w.wake: // a spill
	case <-pauseC:
	case <-w.q.life.AbortC():
	}
}

// nap holds a partial batch until it is due (FlushInterval after its oldest record was
// enqueued) or until producers report that the channel holds the rest of a batch. Napping
// instead of receiving record by record spares producers a goroutine wake-up per send. A nudge
// lost to a race costs at most the rest of FlushInterval.
func (w *worker[K, T]) nap(pauseC <-chan struct{}) {
	q := w.q
	due := time.Duration(w.batch[0].at + int64(q.opts.FlushInterval) - q.now())
	if due <= 0 || q.life.Closing() {
		w.flush()
		return
	}
	need := min(q.opts.BatchSize-len(w.batch), cap(w.ch))
	w.wakeAt.Store(int64(need))
	defer w.wakeAt.Store(0)
	if len(w.ch) >= need || w.spilled.Load() {
		return
	}
	w.timer.Reset(due)
	defer w.timer.Stop()
	select {
	case <-w.timer.C:
	case <-w.wake:
	case <-pauseC:
	case <-q.life.ClosingC():
	case <-q.life.AbortC():
	}
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
	switch RetryBatch(&q.c, len(w.batch), q.opts.MaxRetries, write, w.backoff) {
	case BatchWritten:
		w.committed(res, len(recs))
	case BatchGivenUp:
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
		w.recs = w.compactor.compact(w.recs)
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
	c.pending.Add(-n)
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
					q.c.pending.Add(-1)
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
	w.timer.Reset(q.opts.backoff(attempt))
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
	w.q.c.pending.Add(-n)
}

// abandonAll abandons the batch and the channel contents. It waits until Close has closed the
// channel (once no Enqueue call is in flight) without receiving, so callers still waiting under
// PolicyBlock leave with ErrClosed instead of slipping records into a queue that gives up.
func (w *worker[K, T]) abandonAll() {
	w.abandonFrom(0)
	<-w.q.sealedC
	n := -int64(w.head)
	for _, c := range w.backlog {
		n += int64(len(c))
	}
	w.backlog, w.head, w.chanFirst = nil, 0, 0
	for range w.ch {
		n++
	}
	w.spillMu.Lock()
	for _, c := range w.spill {
		n += int64(len(c))
	}
	w.spill = nil
	w.spilled.Store(false)
	w.spillMu.Unlock()
	w.q.release(n)
	w.q.c.Abandoned.Add(n)
	w.q.c.pending.Add(-n)
}

// reset empties the batch, dropping references so flushed records can be collected.
func (w *worker[K, T]) reset() {
	clear(w.batch)
	w.batch = w.batch[:0]
	clear(w.recs)
	w.recs = w.recs[:0]
	clear(w.one)
}
