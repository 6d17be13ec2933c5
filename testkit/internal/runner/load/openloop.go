package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
)

// OpenLoop is what an open-loop run's schedule did. Every count is of measured arrivals (those
// intended at or after MeasureStart): each was sent (a completed or failed request), skipped or
// left unsent.
type OpenLoop struct {
	TargetRPS float64
	Arrivals  Arrivals
	// Service holds, per measured request that succeeded, the time from its actual start to
	// its end (what a closed loop calls latency); ScheduleLag, per measured request sent, how
	// far behind its intended start it started (the wait for a free worker, and the
	// scheduler's own lateness). Both in µs, as Result.Latency.
	Service, ScheduleLag *hist.Histogram
	// Late counts sent requests that started more than LateAfter after their intended start.
	Late int64
	// Skipped counts arrivals not sent because their turn came more than Config.MaxLag late.
	Skipped int64
	// Unsent counts arrivals intended before the end of the run whose turn came only after it
	// (no request starts after the deadline): the backlog of a run that could not keep up.
	Unsent int64
	// Window is the measured stretch of the schedule: from the end of the warm-up (and ramp)
	// to the deadline, or to the end of the last request in a run bounded by requests only.
	Window time.Duration
}

// Sent is the number of measured requests sent (completed or failed).
func (r *Result) Sent() int64 { return r.Completed + r.Failed }

// Scheduled is the number of measured arrivals: sent, skipped or unsent.
func (r *Result) Scheduled() int64 {
	if r.OpenLoop == nil {
		return 0
	}
	return r.Sent() + r.OpenLoop.Skipped + r.OpenLoop.Unsent
}

// AchievedRPS is the measured requests sent per second of the measured window: the rate the
// system absorbed, to hold against OpenLoop.TargetRPS. Poisson arrivals scatter it around the
// target by about 1/√(arrivals) even when every arrival was sent; Sent/Scheduled does not.
func (r *Result) AchievedRPS() float64 {
	if r.OpenLoop == nil || r.OpenLoop.Window <= 0 {
		return 0
	}
	return float64(r.Sent()) / r.OpenLoop.Window.Seconds()
}

// arrivalBuffer is how many due arrivals the dispatcher may hand out before a worker takes
// one: enough that a burst after a late wake-up costs no switch per arrival.
const arrivalBuffer = 256

// openLoop is a runner's open-loop state: one dispatcher goroutine walks the schedule, waits
// for each intended start and hands the offset to the workers through a buffered channel (no
// allocation per arrival); a worker claims the request index only when it sends, so skipped
// and unsent arrivals leave the indexes dense.
type openLoop struct {
	cfg         Config
	sched       *schedule
	measureFrom time.Duration
	service     *hist.Sharded
	lag         *hist.Sharded
	// halted is cancelled when the run halts (the first reason given is the run's end).
	halted context.Context
	haltFn context.CancelFunc
	// scheduleDone is set by the dispatcher when the schedule passed the deadline (read after
	// the dispatcher ended).
	scheduleDone bool
}

func (c *Config) validateOpenLoop() error {
	switch {
	case c.Rate < 0:
		return fmt.Errorf("load: rate must not be negative, got %g", c.Rate)
	case c.Rate == 0 && (c.Ramp != 0 || c.MaxLag != 0):
		return errors.New("load: ramp and max lag need a rate (they shape an open-loop run)")
	case c.Ramp < 0 || c.MaxLag < 0:
		return fmt.Errorf("load: ramp and max lag must not be negative, got %s and %s", c.Ramp, c.MaxLag)
	case c.Duration > 0 && max(c.Ramp, c.Warmup) >= c.Duration:
		return fmt.Errorf("load: ramp (%s) must be shorter than duration (%s), or nothing is measured", c.Ramp, c.Duration)
	}
	if c.Rate > 0 {
		if _, err := ParseArrivals(string(c.Arrivals)); err != nil {
			return fmt.Errorf("load: %w", err)
		}
	}
	return nil
}

func newOpenLoop(cfg Config, shards int) *openLoop {
	halted, haltFn := context.WithCancel(context.Background())
	return &openLoop{
		cfg:         cfg,
		sched:       newSchedule(cfg.Rate, cfg.Ramp, cfg.Arrivals, cfg.Seed),
		measureFrom: max(cfg.Warmup, cfg.Ramp),
		service:     hist.NewSharded(shards),
		lag:         hist.NewSharded(shards),
		halted:      halted,
		haltFn:      haltFn,
	}
}

// measureFrom is the offset from the start at which measured requests begin: the warm-up, and
// in an open loop the ramp.
func (r *runner) measureFrom() time.Duration {
	if r.open != nil {
		return r.open.measureFrom
	}
	return r.cfg.Warmup
}

// halt stops the dispatcher and the workers; the first reason given is the run's end.
func (r *runner) halt(reason int32) {
	r.ended.CompareAndSwap(endNone, reason)
	r.open.haltFn()
}

// runOpen runs the dispatcher and the workers until the schedule passes the deadline, the
// planned requests are handed out or ctx is cancelled, and waits for them.
func (r *runner) runOpen(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { r.halt(endCancelled) })
	arrivals := make(chan time.Duration, arrivalBuffer)
	var wg sync.WaitGroup
	wg.Go(func() { r.dispatch(arrivals) })
	for i := range r.workers {
		w := &r.workers[i]
		wg.Go(func() { r.serveArrivals(ctx.Done(), arrivals, w) })
	}
	wg.Wait()
	stop()
	r.open.haltFn()
}

// newTimer is the dispatcher's Timer: a var so that tests on a fake clock (testing/synctest)
// can have it wait on Go's timers (timing.NewCoarseTimer).
var newTimer = timing.NewTimer

// dispatch hands out the intended start of every arrival once it is due, until the schedule
// passes the deadline or the run halts. It waits on a timing.Timer (a kernel timer that
// ends a wait within a few µs of its deadline on an idle machine, where Go's timers round a
// sub-millisecond wait up to about a millisecond; gaps of a few tens of µs are yielded
// through), so it holds its schedule at 10/s as at 100k/s and costs no core between
// arrivals. When every worker is busy and the buffer full, the send waits; the arrivals
// behind it are late, and their lateness counts in their latency.
func (r *runner) dispatch(out chan<- time.Duration) {
	defer close(out)
	o := r.open
	timer := newTimer()
	defer timer.Close()
	for {
		intended := o.sched.next()
		if r.deadline > 0 && intended >= r.deadline {
			r.ended.CompareAndSwap(endNone, endPlanned)
			o.scheduleDone = true
			return
		}
		if timer.SleepUntil(o.halted, r.start.Add(intended)) != nil {
			return
		}
		select {
		case out <- intended:
		case <-o.halted.Done():
			return
		}
	}
}

// serveArrivals is one worker of an open loop: it sends each arrival it takes, unless the run
// is over by then (unsent) or the arrival is more than MaxLag late (skipped). It looks at done
// itself before each arrival, as the closed loop's workers do: the halt that a cancel causes
// runs in a goroutine of its own (context.AfterFunc), and on a loaded machine the workers went
// on sending 32 arrivals past a cancel before it ran.
func (r *runner) serveArrivals(done <-chan struct{}, in <-chan time.Duration, w *worker) {
	o := r.open
	for intended := range in {
		select {
		case <-done:
			r.halt(endCancelled)
			return
		default:
		}
		if o.halted.Err() != nil {
			return
		}
		measured := intended >= o.measureFrom
		began := time.Since(r.start)
		switch {
		case r.deadline > 0 && began >= r.deadline:
			if measured {
				w.unsent++
			}
			continue
		case o.cfg.MaxLag > 0 && began-intended > o.cfg.MaxLag:
			if measured {
				w.skipped++
			}
			continue
		}
		i, ok := r.claim()
		if !ok {
			r.halt(endPlanned)
			return
		}
		r.serve(w, i, began, intended, measured)
	}
}

// record adds a measured request's service time (when it succeeded) and schedule lag.
func (o *openLoop) record(w *worker, shard int, began, intended, ended time.Duration, ok bool) {
	lag := began - intended
	o.lag.Record(shard, lag)
	if lag > LateAfter {
		w.late++
	}
	if ok {
		o.service.Record(shard, ended-began)
	}
}

func (o *openLoop) result(workers []worker, lastEnd time.Duration) *OpenLoop {
	window := lastEnd - o.measureFrom
	if o.scheduleDone {
		window = o.cfg.Duration - o.measureFrom
	}
	out := &OpenLoop{TargetRPS: o.cfg.Rate, Arrivals: o.sched.arrivals(), Window: window,
		Service: o.service.Merged(), ScheduleLag: o.lag.Merged()}
	for i := range workers {
		out.Late += workers[i].late
		out.Skipped += workers[i].skipped
		out.Unsent += workers[i].unsent
	}
	return out
}
