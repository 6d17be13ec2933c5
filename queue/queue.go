package queue

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// ErrClosed is returned by Enqueue once Close has begun.
var ErrClosed = errors.New("queue: closed")

// ErrGroupTooLarge is returned under PolicyBlock for a group of more records than the
// backend's capacity: it could never fit, so waiting for room would never end.
var ErrGroupTooLarge = core.ErrGroupTooLarge

// Queue is the in-memory queue.Interface: per-worker fifos bounded together, batched flushes, optional slot
// compaction. All methods are safe for concurrent use.
type Queue[K comparable, T any] struct {
	c     core.Counters // first: its padding keeps the hot line away from the fields below
	clock flushClock    // where the workers' time goes (FlushTimes)

	opts    Options[K, T]
	flusher Flusher[T]
	seed    maphash.Seed
	epoch   time.Time // enqueue times are monotonic nanoseconds since epoch
	workers []*worker[K, T]
	turn    atomic.Uint32 // Spread: the calls dealt so far
	wg      sync.WaitGroup

	gate gate
	acks chan struct{} // a worker's "parked" acknowledgement of Pause
	// held counts the records waiting for a worker (in its fifo): reserve bounds it by
	// Capacity for the queue as a whole, so memory is bounded by Capacity whatever the number
	// of workers, and the slots of a hot spot, which may all hash to one worker, can still use
	// the whole capacity. Enqueue calls waiting for room under PolicyBlock count themselves in
	// blocked and wait for a token in freed, which release drops when it makes room.
	held    atomic.Int64
	blocked atomic.Int64
	freed   chan struct{}

	life    *core.Lifecycle // Close's handshake; every Flush runs under life.Ctx()
	sealedC chan struct{}   // closed when Close has stopped intake and no Enqueue call is in flight
}

var _ Interface[int] = (*Queue[int, int])(nil)

// New validates o, starts the workers and returns a running queue. Close it to stop them.
func New[K comparable, T any](f Flusher[T], o Options[K, T]) (*Queue[K, T], error) {
	if f == nil {
		return nil, errors.New("queue: invalid options: Flusher is required")
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, staged := f.(StagedFlusher[T]); o.Pipeline && !staged {
		return nil, errors.New("queue: invalid options: Pipeline needs a StagedFlusher (TxFlusher is one)")
	}
	q := &Queue[K, T]{
		opts:    o,
		flusher: f,
		seed:    maphash.MakeSeed(),
		epoch:   time.Now(),
		gate:    newGate(),
		acks:    make(chan struct{}, o.Workers),
		freed:   make(chan struct{}, 1),
		life:    core.NewLifecycle(),
		sealedC: make(chan struct{}),
	}
	q.workers = make([]*worker[K, T], o.Workers)
	for i := range q.workers {
		q.workers[i] = newWorker(q, (o.Capacity+o.Workers-1)/o.Workers)
	}
	q.wg.Add(len(q.workers))
	for _, w := range q.workers {
		go w.run()
	}
	return q, nil
}

// now is the monotonic time in nanoseconds since the queue was created.
func (q *Queue[K, T]) now() int64 { return int64(time.Since(q.epoch)) }

// route picks the worker that owns rec's slot.
func (q *Queue[K, T]) route(rec T) *worker[K, T] {
	if len(q.workers) == 1 {
		return q.workers[0]
	}
	n := len(q.workers)
	if q.opts.Worker != nil {
		return q.workers[(q.opts.Worker(q.opts.Key(rec), n)%n+n)%n]
	}
	h := maphash.Comparable(q.seed, q.opts.Key(rec))
	return q.workers[(h>>32)*uint64(n)>>32]
}

// Enqueue offers rec to the queue. It returns Queued when the queue took it; when the
// queue is full the FullPolicy decides (Dropped, WrittenInline, or waiting). ctx only
// matters when Enqueue has to wait (PolicyBlock) or write inline (PolicySync). After Close has
// begun it returns ErrClosed. A non-nil error always comes with Rejected.
func (q *Queue[K, T]) Enqueue(ctx context.Context, rec T) (Outcome, error) {
	return q.EnqueueAll(ctx, []T{rec}) // the slice stays on the stack: nothing keeps it
}

// EnqueueAll offers recs as one unit (see Interface): room is reserved for all of them at
// once, so they are queued together (each to the worker of its slot) or, when the queue has
// no room for all, the FullPolicy applies to the group as a whole. The outcome and error are
// the group's, as Enqueue's are a record's.
func (q *Queue[K, T]) EnqueueAll(ctx context.Context, recs []T) (Outcome, error) {
	n := int64(len(recs))
	if n == 0 {
		return Queued, nil
	}
	c := &q.c
	c.Enqueued.Add(n)
	if !c.Enter(n) {
		return Rejected, ErrClosed
	}
	at := q.now()
	if q.reserve(n) {
		q.put(recs, at)
		c.Leave()
		return Queued, nil
	}
	out, err := q.enqueueFull(ctx, recs, at)
	c.Leave()
	return out, err
}

// put hands recs, for which room is reserved, to the workers of their slots (Spread: all
// to the next worker in turn).
func (q *Queue[K, T]) put(recs []T, at int64) {
	q.accepted(int64(len(recs)))
	if q.opts.Spread && len(q.workers) > 1 {
		w := q.workers[q.turn.Add(1)%uint32(len(q.workers))]
		for i := range recs {
			w.put(entry[T]{rec: recs[i], at: at})
		}
		return
	}
	for i := range recs {
		q.route(recs[i]).put(entry[T]{rec: recs[i], at: at})
	}
}

// accepted accounts for n records about to enter the workers' fifos: before, so that a
// worker cannot write one before it is counted.
func (q *Queue[K, T]) accepted(n int64) {
	if v := q.c.Pending.Add(n); v > q.c.MaxDepth.Load() {
		q.c.NoteDepth(v)
	}
}

// reserve takes room for n records unless the queue would then hold more than Capacity.
func (q *Queue[K, T]) reserve(n int64) bool {
	for {
		v := q.held.Load()
		if v+n > int64(q.opts.Capacity) {
			return false
		}
		if q.held.CompareAndSwap(v, v+n) {
			return true
		}
	}
}

// release returns the room of n records taken out of a worker's fifo, and wakes a caller
// waiting for room. A waiter counts itself blocked before it tries to reserve, so either its
// attempt sees this room or this call sees the waiter.
func (q *Queue[K, T]) release(n int64) {
	q.held.Add(-n)
	if q.blocked.Load() > 0 {
		q.signalFreed()
	}
}

func (q *Queue[K, T]) signalFreed() {
	select {
	case q.freed <- struct{}{}:
	default:
	}
}

// awaitRoom is PolicyBlock's wait: it reserves room for n records, waiting for release until
// ctx is done or Close's deadline expires. A waiter whose group does not fit yet waits for the
// next release: the queue held records when it tried, and the workers are taking them.
func (q *Queue[K, T]) awaitRoom(ctx context.Context, n int64) error {
	if err := core.GroupTooLarge(n, int64(q.opts.Capacity)); err != nil {
		return err
	}
	q.blocked.Add(1)
	defer q.blocked.Add(-1)
	for !q.reserve(n) {
		select {
		case <-q.freed:
		case <-ctx.Done():
			return fmt.Errorf("queue: waiting for room: %w", context.Cause(ctx))
		case <-q.life.AbortC():
			return ErrClosed
		}
	}
	// One token wakes one waiter: pass it on while others wait and room is left.
	if q.blocked.Load() > 1 && q.held.Load() < int64(q.opts.Capacity) {
		q.signalFreed()
	}
	return nil
}

// enqueueFull applies the FullPolicy to the group recs; the queue had no room for it a
// moment ago.
func (q *Queue[K, T]) enqueueFull(ctx context.Context, recs []T, at int64) (Outcome, error) {
	// A napping worker waits for a fuller batch; the queue cannot get fuller. (Spread: any
	// worker may hold the slots' records.)
	if q.opts.Spread {
		for _, w := range q.workers {
			w.nudge()
		}
	} else {
		for i := range recs {
			q.route(recs[i]).nudge()
		}
	}
	n := int64(len(recs))
	switch q.opts.FullPolicy {
	case PolicyDrop:
		q.c.Dropped.Add(n)
		return Dropped, nil
	case PolicyBlock:
		if err := q.awaitRoom(ctx, n); err != nil {
			q.c.Rejected.Add(n)
			return Rejected, err
		}
		q.put(recs, at)
		return Queued, nil
	default:
		return q.writeInline(ctx, recs, at)
	}
}

// writeInline is PolicySync: the caller writes the group itself, in one transaction.
func (q *Queue[K, T]) writeInline(ctx context.Context, recs []T, at int64) (Outcome, error) {
	inline := q.opts.Inline
	if inline == nil {
		inline = q.flusher
	}
	batch := q.opts.shared().InlineBatch(recs)
	write := func(ctx context.Context) error { _, err := inline.Flush(ctx, batch); return err }
	if err := core.WriteInline(ctx, q.life, &q.c, len(recs), write); err != nil {
		return Rejected, fmt.Errorf("queue: inline write of %d records (queue full): %w", len(recs), err)
	}
	lag := q.now() - at
	for i := range recs { // any worker's histogram will do (Spread too): the queue's merges them
		q.route(recs[i]).recordLag(lag)
	}
	return WrittenInline, nil
}

// Close stops intake (later Enqueue calls get ErrClosed), resumes paused workers, waits for
// Enqueue calls in progress, and drains every fifo and batch through the Flusher. When ctx
// expires first, in-flight flushes are cancelled, callers still waiting under PolicyBlock get
// ErrClosed, and every accepted record still unwritten is counted abandoned; Close then
// returns an error saying how many. Without a deadline Close waits as long as the drain takes,
// which is forever if the Flusher refuses a record forever. Close is idempotent: later calls
// wait for the first and return its result.
func (q *Queue[K, T]) Close(ctx context.Context) error {
	// Enqueue calls that passed the closed check finish quickly (a send, a drop) or wait for
	// room that the draining workers make, for their inline write, or for the abort.
	return q.life.Close(ctx, &q.c, q.gate.close, q.drain)
}

// drain runs once no Enqueue call is in flight: the workers write what the fifos and their
// batches hold.
func (q *Queue[K, T]) drain(ctx context.Context) error {
	close(q.sealedC) // nobody can push any more: the in-flight count is zero and the bit is set
	q.wg.Wait()
	if n := q.c.Abandoned.Load(); n > 0 {
		return fmt.Errorf("queue: close: %d accepted records abandoned unwritten: %w", n, context.Cause(ctx))
	}
	return nil
}

func (q *Queue[K, T]) aborted() bool { return q.life.Aborted() }

// Metrics returns the current counters; see the package doc for definitions.
func (q *Queue[K, T]) Metrics() Metrics {
	// max: a commit can beat the increment after a send.
	return Metrics(q.c.Metrics(int64(q.opts.Capacity), q.held.Load(), max(q.c.Pending.Load(), 0)))
}

// PersistLag returns a merged copy of the workers' persist-lag histograms: for every written
// record (batch or fallback), commit time minus the time Enqueue was called, in µs.
func (q *Queue[K, T]) PersistLag() *hist.Histogram {
	return q.merged(func(w *worker[K, T]) *hist.Histogram { return w.lag })
}

// merged merges one histogram of every worker's, each read under its lagMu.
func (q *Queue[K, T]) merged(of func(*worker[K, T]) *hist.Histogram) *hist.Histogram {
	out := hist.New()
	for _, w := range q.workers {
		w.lagMu.Lock()
		out.Merge(of(w))
		w.lagMu.Unlock()
	}
	return out
}

// FlushTimes says where the workers' time has gone so far; see FlushTimes.
func (q *Queue[K, T]) FlushTimes() FlushTimes { return q.clock.times() }

// FlushDurations returns a merged copy of the workers' histograms of committed batch flushes:
// one value per batch, BEGIN to the end of COMMIT, in µs.
func (q *Queue[K, T]) FlushDurations() *hist.Histogram {
	return q.merged(func(w *worker[K, T]) *hist.Histogram { return w.flushes })
}

// Pause stops the workers from receiving and flushing, so the queue fills and the full
// policy is exercised. It returns once every worker has parked; a worker in the middle of a
// Flush call parks when that call returns. Records a worker already holds stay pending.
// Pause after Close is a no-op.
func (q *Queue[K, T]) Pause() {
	if !q.gate.pause() {
		return
	}
	defer q.gate.serial.Unlock()
	for range q.workers {
		select {
		case <-q.acks:
		case <-q.life.ClosingC(): // Close resumed the workers; they will not park
			return
		}
	}
}

// Resume lets paused workers continue. Close resumes by itself.
func (q *Queue[K, T]) Resume() { q.gate.resume() }

// gate is the pause switch the workers consult between operations, with Pause serialised
// so that a Pause collects its own acknowledgements.
type gate struct {
	serial sync.Mutex
	sw     *core.Switch
}

func newGate() gate { return gate{sw: core.NewSwitch()} }

// pause switches to paused and, if it did, returns true with serial held.
func (g *gate) pause() bool {
	g.serial.Lock()
	if !g.sw.Pause() {
		g.serial.Unlock()
		return false
	}
	return true
}

func (g *gate) resume() {
	g.serial.Lock()
	defer g.serial.Unlock()
	g.sw.Resume()
}

// close resumes for good. It does not take serial, so a Pause waiting for acks cannot hold
// up Close.
func (g *gate) close() { g.sw.Close() }

func (g *gate) state() (paused bool, pauseC, resumeC <-chan struct{}) { return g.sw.State() }
