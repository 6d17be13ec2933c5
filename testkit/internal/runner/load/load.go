// Package load owns the load engine: it drives N workers over one operation, closed-loop (each
// worker starts its next request when its last one ends) or open-loop (requests arrive on a
// seeded schedule at a target rate, the workers being the cap on requests in flight, and
// latency counted from each request's intended start), hands out dense request indexes, times every request into sharded µs histograms (the whole
// operation and, separately, the wait for a pool connection), separates warm-up from measured
// requests, classifies errors, tries a request's units again by error class (Request.Try, the
// Retry policy), records each request's outcome, and shows a progress line.
//
// It must not know about SQL, schemas or suites: an operation is an opaque function, and what
// a request means is the caller's business. It prints nothing except the progress line, and
// only when asked to and the writer is a terminal. Reports are built by the caller from Result.
package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
)

// DefaultShards is the number of histogram shards when Config.Shards is 0.
const DefaultShards = 64

// Config describes one run. The zero value is not valid: set Concurrency and at least one of
// Requests and Duration.
type Config struct {
	// Concurrency is the number of workers (goroutines), each running one request at a time.
	// It is capped at Requests when Requests is set.
	Concurrency int
	// Requests is the total number of requests, warm-up included; 0 means unbounded, and then
	// Duration must be set.
	Requests int64
	// Duration stops the hand-out of new requests this long after Start (warm-up included).
	// 0 runs until Requests are done. When both are set, whichever comes first ends the run.
	Duration time.Duration
	// Warmup: requests started before Start+Warmup run normally and keep their outcomes, but
	// are left out of the histograms and of Completed/Failed (see WarmupCompleted).
	Warmup time.Duration
	// Measuring, when set, is called once as the measured window opens (at MeasureStart: at
	// Start, before the first request, without a warm-up; else from a timer of its own), so
	// that the caller can read what it measures over the same window. It is not called when
	// the run ends before its window opens, and has returned when Run returns.
	Measuring func()
	// Shards is the number of histogram shards (default DefaultShards, capped at the number of
	// workers); worker w records into shard w % Shards.
	Shards int
	// Progress, when non-nil and a terminal, receives a progress line refreshed about four
	// times a second; when not a terminal, a line of its own every ProgressInterval (none when
	// 0). Each ends with the run's final line.
	Progress         io.Writer
	ProgressLabel    string
	ProgressInterval time.Duration
	// OpContext is the context given to every operation (default context.Background()).
	// Cancelling the context given to Run only stops new requests; in-flight operations keep
	// OpContext, which the caller cancels for a hard abort.
	OpContext context.Context
	// Live, when set, is reset at the start of the run and updated as requests start and end,
	// so that a monitor can read it while the run is going.
	Live *Live
	// Retry is the policy of Request.Try (nil: every unit is tried once).
	Retry *Retry
	// RequestTimeout bounds each try of a request (each Request.Try call's unit, or the whole
	// operation when it does not call Try): its context is cancelled once the try has run this
	// long, and its failure is of class request_timeout, an unknown outcome. 0: no bound.
	RequestTimeout time.Duration

	// Rate > 0 makes the run open-loop (openloop.go): requests arrive at Rate per second on
	// a schedule of Arrivals drawn from Seed, Concurrency workers serve them, and a request's
	// latency runs from its intended start. 0 is the closed loop.
	Rate     float64
	Arrivals Arrivals
	Seed     int64
	// Ramp climbs the rate linearly from 0 to Rate over its length; arrivals intended before
	// max(Warmup, Ramp) are left out of the statistics. Open loop only.
	Ramp time.Duration
	// MaxLag: a request whose turn comes more than MaxLag after its intended start is not
	// sent but counted skipped (pgbench's --latency-limit skipping). 0: never. Open loop only.
	MaxLag time.Duration
}

func (c *Config) validate() error {
	switch {
	case c.Concurrency < 1:
		return fmt.Errorf("load: concurrency must be at least 1, got %d", c.Concurrency)
	case c.Requests < 0:
		return fmt.Errorf("load: requests must not be negative, got %d", c.Requests)
	case c.Duration < 0:
		return fmt.Errorf("load: duration must not be negative, got %s", c.Duration)
	case c.Requests == 0 && c.Duration == 0:
		return errors.New("load: set requests, duration or both (an unbounded run would never end)")
	case c.Warmup < 0:
		return fmt.Errorf("load: warm-up must not be negative, got %s", c.Warmup)
	case c.Duration > 0 && c.Warmup >= c.Duration:
		return fmt.Errorf("load: warm-up (%s) must be shorter than duration (%s), or nothing is measured", c.Warmup, c.Duration)
	case c.RequestTimeout < 0:
		return fmt.Errorf("load: request timeout must not be negative, got %s", c.RequestTimeout)
	case c.Shards < 0:
		return fmt.Errorf("load: shards must not be negative, got %d", c.Shards)
	case c.Retry != nil && (c.Retry.MaxTries < 0 || c.Retry.Backoff < 0 || c.Retry.BackoffCap < 0):
		return fmt.Errorf("load: retry tries and backoffs must not be negative, got %+v", *c.Retry)
	}
	return c.validateOpenLoop()
}

// Op is one request. It must not keep r after it returns: the engine reuses it per worker.
// Return Unknown(err) when the outcome of a write cannot be known (e.g. the connection died
// during COMMIT).
type Op func(ctx context.Context, r *Request) error

// Result is what a run measured.
type Result struct {
	// Start is when the workers were started, MeasureStart is Start+Warmup, and End is when
	// the last request returned (Start if none ran).
	Start, MeasureStart, End time.Time
	// Completed and Failed count measured (post-warm-up) requests; a failed request is not a
	// completed one. Unknown outcomes are failures.
	Completed, Failed             int64
	WarmupCompleted, WarmupFailed int64
	// ErrorCounts counts failures by Classify class, measured and warm-up requests together.
	ErrorCounts map[string]int64
	// ErrorSamples holds the text of one error per class, so a report can name the failure.
	ErrorSamples map[string]string
	// Latency holds the whole-operation time of the measured requests that succeeded, in µs.
	Latency *hist.Histogram
	// AcquireWait holds, per measured request that acquired a connection (succeeded or
	// not), the total time it spent waiting for one.
	AcquireWait *hist.Histogram
	// ColdSessions counts the measured requests that ran a statement on a session's first use
	// (NoteColdSession), succeeded or not; ColdLatency holds the latency of those that
	// succeeded, as Latency does of all.
	ColdSessions int64
	ColdLatency  *hist.Histogram
	// Outcomes holds the outcome of every request index.
	Outcomes *Outcomes
	// Longest is the longest any request took, failed or not, warm-up included: how long
	// the worst one hung (a fault's report).
	Longest time.Duration
	// Stopped is true when the context given to Run was cancelled before the planned end,
	// so fewer requests were started than planned.
	Stopped bool
	// Retries is what Request.Try did, warm-up included.
	Retries Retries
	// OpenLoop is what the schedule did; nil in a closed-loop run. Latency then runs from each
	// request's intended start.
	OpenLoop *OpenLoop
}

// Attempted is the number of requests that were started (and, once Run returned, finished).
func (r *Result) Attempted() int64 {
	return r.Completed + r.Failed + r.WarmupCompleted + r.WarmupFailed
}

// Run drives cfg.Concurrency workers over op until the requests are done, the duration is
// over or ctx is cancelled, then waits for the requests in flight and returns what was
// measured. The error is only for an invalid cfg; operation errors are counted in the Result.
func Run(ctx context.Context, cfg Config, op Op) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if op == nil {
		return nil, errors.New("load: nil operation")
	}
	return newRunner(cfg, op).run(ctx), nil
}

// What ended the hand-out of requests; the first worker to see an end records it.
const (
	endNone int32 = iota
	endPlanned
	endCancelled
)

type runner struct {
	cfg      Config
	op       Op
	opCtx    context.Context
	limit    int64 // 0 = unbounded
	live     *Live
	latency  *hist.Sharded
	acquire  *hist.Sharded
	cold     *hist.Sharded // the latency of requests on a cold session (NoteColdSession)
	outcomes *Outcomes
	workers  []worker

	// Workers read the clock as offsets from start (time.Since reads only the monotonic
	// clock, half the cost of time.Now), so the warm-up end and deadline are offsets too.
	start, measureStart time.Time
	deadline            time.Duration // 0 when the run has no duration
	ended               atomic.Int32

	open *openLoop // nil in a closed-loop run
}

func newRunner(cfg Config, op Op) *runner {
	workers := cfg.Concurrency
	if cfg.Requests > 0 && int64(workers) > cfg.Requests {
		workers = int(cfg.Requests)
	}
	shards := cfg.Shards
	if shards == 0 {
		shards = DefaultShards
	}
	shards = min(shards, workers)
	r := &runner{
		cfg:      cfg,
		op:       op,
		opCtx:    cfg.OpContext,
		limit:    cfg.Requests,
		live:     cfg.Live,
		latency:  hist.NewSharded(shards),
		acquire:  hist.NewSharded(shards),
		cold:     hist.NewSharded(shards),
		outcomes: newOutcomes(cfg.Requests),
		workers:  make([]worker, workers),
	}
	if r.opCtx == nil {
		r.opCtx = context.Background()
	}
	if r.live == nil {
		r.live = new(Live)
	}
	if cfg.Rate > 0 {
		r.open = newOpenLoop(cfg, shards)
	}
	r.live.reset(cfg.Requests, r.latency, r.acquire)
	for i := range r.workers {
		w := &r.workers[i]
		w.req = Request{Worker: i, shard: i % shards, retry: cfg.Retry, stats: &w.retries, timeout: cfg.RequestTimeout}
		w.req.opCtx = context.WithValue(r.opCtx, coldKey{}, &w.req.cold) // the worker's requests' mark
	}
	return r
}

func (r *runner) run(ctx context.Context) *Result {
	r.start = time.Now()
	r.measureStart = r.start.Add(r.measureFrom())
	r.deadline = r.cfg.Duration
	for i := range r.workers {
		r.workers[i].req.start = r.start
	}
	if r.cfg.RequestTimeout > 0 {
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() { r.watchdog(r.cfg.RequestTimeout, stop); close(watched) }()
		defer func() {
			close(stop)
			<-watched
			for i := range r.workers {
				r.workers[i].req.attempt.release()
			}
		}()
	}
	defer r.openWindow()()
	prog := startProgress(r)
	done := ctx.Done()
	if r.open != nil {
		r.runOpen(ctx)
	} else {
		var wg sync.WaitGroup
		for i := range r.workers {
			w := &r.workers[i]
			wg.Go(func() { r.work(done, w) })
		}
		wg.Wait()
	}
	prog.finish()
	return r.result()
}

// openWindow calls Config.Measuring as the measured window opens: now, or from a timer. The
// returned stop, called as the run ends, cancels a timer that has not fired and waits for one
// that has.
func (r *runner) openWindow() (stop func()) {
	measuring := r.cfg.Measuring
	if measuring == nil {
		return func() {}
	}
	from := r.measureStart.Sub(r.start)
	if from <= 0 {
		measuring()
		return func() {}
	}
	called := make(chan struct{})
	t := time.AfterFunc(from, func() { measuring(); close(called) })
	return func() {
		if !t.Stop() {
			<-called
		}
	}
}

// worker is one goroutine's request and tallies; merged into the Result at the end, so the
// hot path touches no shared counter beyond the index, the live counters and one shard.
type worker struct {
	req                       Request
	completed, failed         int64
	warmCompleted, warmFailed int64
	cold                      int64         // measured requests on a cold session
	lastEnd                   time.Duration // since start
	longest                   time.Duration // the longest request, failed or not
	errorCounts               map[string]int64
	errorSamples              map[string]string
	retries                   retryStats
	late, skipped, unsent     int64    // open loop only, measured arrivals
	_                         [64]byte // neighbouring workers run on other cores
}

// work runs requests until the run ends. The end is checked before each index is taken, by
// the clock and by a non-blocking look at done (a cancel closes it synchronously), so no
// request starts after the deadline, and at most one per worker once ctx is cancelled.
func (r *runner) work(done <-chan struct{}, w *worker) {
	for {
		began := time.Since(r.start)
		if r.deadline > 0 && began >= r.deadline {
			r.ended.CompareAndSwap(endNone, endPlanned)
			return
		}
		select {
		case <-done:
			r.ended.CompareAndSwap(endNone, endCancelled)
			return
		default:
		}
		i, ok := r.claim()
		if !ok {
			return
		}
		r.serve(w, i, began, began, began >= r.cfg.Warmup)
	}
}

// claim takes the next request index; false when the planned requests are all handed out.
func (r *runner) claim() (int64, bool) {
	i := r.live.next.Add(1) - 1
	if r.limit > 0 && i >= r.limit {
		r.ended.CompareAndSwap(endNone, endPlanned)
		return 0, false
	}
	return i, true
}

// serve runs request i, which began at began and was intended to begin at intended (the same
// in a closed loop), and records its outcome; measured says whether it counts in the
// statistics. Latency runs from the intended start.
func (r *runner) serve(w *worker, i int64, began, intended time.Duration, measured bool) {
	req := &w.req
	req.Index = i
	req.acquireWait, req.acquired = 0, false
	req.retries, req.unknown, req.outOfTries = 0, false, false
	req.cold.Store(false)

	err := req.endTry(call(req.beginTry(req.opCtx), r.op, req))
	ended := time.Since(r.start)
	w.lastEnd = ended
	w.longest = max(w.longest, ended-intended)
	w.retries.finish(req, err)

	if err == nil {
		r.outcomes.store(i, Succeeded)
		r.live.completed.Add(1)
		if measured {
			w.completed++
			r.latency.Record(req.shard, ended-intended)
		} else {
			w.warmCompleted++
		}
	} else {
		outcome := Failed
		if IsUnknown(err) || req.unknown { // an earlier try may have committed
			outcome = UnknownOutcome
		}
		r.outcomes.store(i, outcome)
		r.live.failed.Add(1)
		if measured {
			w.failed++
		} else {
			w.warmFailed++
		}
		r.live.countFailure(w.countError(err))
	}
	if measured && req.acquired {
		r.acquire.Record(req.shard, req.acquireWait)
	}
	if measured && req.cold.Load() {
		w.cold++
		if err == nil {
			r.cold.Record(req.shard, ended-intended)
		}
	}
	if measured && r.open != nil {
		r.open.record(w, req.shard, began, intended, ended, err == nil)
	}
}

// call runs op, turning a panic into an error so that one bad request cannot end the run.
func call(ctx context.Context, op Op, req *Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return op(ctx, req)
}

// maxSampleLen bounds an error sample (a panic's includes its stack).
const maxSampleLen = 4096

// countError counts err under its class in the worker's tallies and returns the class.
func (w *worker) countError(err error) string {
	class := Classify(err)
	if w.errorCounts == nil {
		w.errorCounts = make(map[string]int64)
		w.errorSamples = make(map[string]string)
	}
	w.errorCounts[class]++
	if _, ok := w.errorSamples[class]; !ok {
		msg := err.Error()
		if len(msg) > maxSampleLen {
			msg = msg[:maxSampleLen] + "…"
		}
		w.errorSamples[class] = msg
	}
	return class
}

func (r *runner) result() *Result {
	started := r.live.Started()
	res := &Result{
		Start:        r.start,
		MeasureStart: r.measureStart,
		ErrorCounts:  make(map[string]int64),
		ErrorSamples: make(map[string]string),
		Latency:      r.latency.Merged(),
		AcquireWait:  r.acquire.Merged(),
		ColdLatency:  r.cold.Merged(),
		Outcomes:     r.outcomes,
		// A cancel that came after every planned request was handed out cut nothing short.
		Stopped: r.ended.Load() == endCancelled && (r.limit == 0 || started < r.limit),
		Retries: Retries{Tries: map[int]int64{}, ByClass: map[string]int64{}, OutOfTries: map[string]int64{}},
	}
	var lastEnd time.Duration
	for i := range r.workers {
		w := &r.workers[i]
		res.Completed += w.completed
		res.Failed += w.failed
		res.WarmupCompleted += w.warmCompleted
		res.WarmupFailed += w.warmFailed
		res.ColdSessions += w.cold
		lastEnd = max(lastEnd, w.lastEnd)
		res.Longest = max(res.Longest, w.longest)
		res.Retries.add(&w.retries)
		for class, n := range w.errorCounts {
			res.ErrorCounts[class] += n
		}
		for class, msg := range w.errorSamples {
			if _, ok := res.ErrorSamples[class]; !ok {
				res.ErrorSamples[class] = msg
			}
		}
	}
	res.End = r.start.Add(lastEnd)
	if r.open != nil {
		res.OpenLoop = r.open.result(r.workers, lastEnd)
	}
	if r.limit == 0 || started < r.limit {
		// A duration-bound run's indexes are those it started; so are a request-bound run's
		// when it stopped early (an interrupt, its --duration): what comes after is checked
		// and accounted for as far as it went, not over every request it had planned (for an
		// interrupted --requests 100000000 that would be a minute and 400 MB).
		r.outcomes.setLen(started)
	}
	return res
}
