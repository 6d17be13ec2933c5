// Package timing owns the kit's precise waits: waiting until a moment that matters (an
// open-loop arrival's intended start, the release of bytes a delaying proxy holds) with
// sub-millisecond precision and without burning a core.
//
// Go's own timers wake an idle process on the network poller's millisecond clock, so a
// 100 µs time.Sleep takes about a millisecond. A Timer here instead arms a kernel timer
// (a timerfd, an hrtimer with no slack) and parks its goroutine on that descriptor in Go's
// network poller: the thread the poller sleeps in wakes when the kernel timer fires, a few
// tens of microseconds after it, and no thread is held or spun meanwhile. The Timer learns
// that wake-up latency and sets the kernel timer that much early, then yields the processor
// (runtime.Gosched) through the last few µs. Waits shorter than 30 µs, where a kernel round
// trip would cost more than it saves, are yielded through whole.
//
// How early is bounded by what the yielding costs: at most 50 µs, or 1% of a longer wait
// (up to 1 ms). Short waits (a busy open loop, a proxy's round trips) follow the median
// wake-up latency, a few tens of µs on a machine awake anyway. Long waits (an open loop at
// 10 or 100 a second) wake a machine whose processors went to sleep, which here takes
// 0.15–0.4 ms; they follow the latency's 98th percentile instead, so nearly every one of
// them wakes before its deadline and yields the rest, at under 1% of a core.
//
// Where Go looks at its poller bounds a kernel timer's precision: when every processor of the
// process is busy and its run queues never empty, Go polls only from its monitor thread
// (after up to 10 ms), and the kernel timer is noticed as late as a socket's reply would be.
// Go's own timers are checked at every scheduling instead, so a Timer whose kernel timer woke
// it late backs its next waits with one of Go's, set at the deadline (busyAbove says when and
// why not always), and a busy process's waits end within µs of it at the median, where the
// kernel timer alone leaves them milliseconds late (BenchmarkSleepUntilBusy; docs/overhead.md).
//
// It must not know what it is timing: a deadline is a time.Time, cancellation is a context.
package timing

import (
	"context"
	"runtime"
	"syscall"
	"time"
)

// spinBelow: a wait shorter than this is spent yielding (runtime.Gosched) rather than on a
// kernel timer. It is about a kernel timer's wake-up latency on an idle machine, so the
// yield is both more precise and no dearer than the round trip through the kernel. At
// rates where most gaps are shorter (tens of thousands of waits a second) the waiter is
// busy anyway.
const spinBelow = 30 * time.Microsecond

// maxEarly caps how long before a deadline a Timer has its kernel timer fire, to yield the
// rest: it learns its wake-up latency (about 20–60 µs on a machine awake anyway) and wakes
// that much early, so a wait ends within a few µs of its deadline, at a cost of a few µs of
// yielding per wait. A var so a benchmark can turn it off.
var maxEarly = 50 * time.Microsecond

// A wait longer than earlyShare × maxEarly may wake up to 1/earlyShare of itself early, up
// to maxEarlyLong: what yielding may cost it, 1% of its time.
const (
	earlyShare   = 100
	maxEarlyLong = time.Millisecond
)

// busyAbove: a kernel timer that wakes its Timer later than this says that the process is
// too busy for Go to look at its poller, and the Timer's next busyWaits waits are backed by
// a timer of Go's own, which Go checks on every scheduling (the timerfd's read deadline); a
// wait the backstop ends starts the count again. Not every wait: a backstop on every wait
// costs an idle process a few µs of CPU a wait (at 10k waits a second nearly twice the CPU;
// docs/overhead.md), most likely because each Go timer set wakes the poller's sleeping thread
// (the runtime's wakeNetPoller). busyAbove is above the wake-up latency of an idle machine's
// processors (0.15-0.4 ms when they sleep between waits, a few tens of µs otherwise) and
// below a busy process's (milliseconds); the count rides out the kernel timer's occasional
// timely wake-up in a busy process (its poller looked at by chance).
const (
	busyAbove = 500 * time.Microsecond
	busyWaits = 64
)

// earlyStep is the step of the learning of the early wake-up (see learn); a long wait's
// step up is longStepsUp of them.
const (
	earlyStep   = 2 * time.Microsecond
	longStepsUp = 49
)

// earlyCap is how early a wait of the given length may wake: maxEarly, or its share of a
// longer one.
func earlyCap(wait time.Duration) time.Duration {
	if maxEarly == 0 {
		return 0
	}
	return max(maxEarly, min(wait/earlyShare, maxEarlyLong))
}

// Timer is one goroutine's precise wait, reusable without allocation: the dispatcher of an
// open loop or one direction of a delaying proxy holds one for its life. One goroutine
// waits on a Timer at a time; Close it when done.
type Timer struct {
	k waiter
	// bound is the context whose cancellation currently wakes the timer, stop undoes that.
	// A Timer waited on under one context again and again registers with it once.
	bound context.Context
	stop  func() bool
	// early is how long before the deadline the kernel timer is set to fire (see learn);
	// primed: it has been set. A Timer starts as early as its first wait allows and learns
	// down from there: its first waits are on time, at the price of a few more µs yielded.
	early  time.Duration
	primed bool
	// coarse: a Timer on Go's timers alone (NewCoarseTimer), which never yields through a wait.
	coarse bool
	// busy counts down the waits that still have Go's own timer as a backstop (busyAbove).
	busy int
}

// NewTimer returns a Timer. Should the kernel refuse a timer (no descriptors left), it
// waits on Go's timers instead, at their millisecond precision: the measured lateness of
// whatever it times will show it.
func NewTimer() *Timer {
	return &Timer{k: newWaiter()}
}

// NewCoarseTimer returns a Timer that waits on Go's timers alone, at their millisecond
// precision, and never yields through the end of a wait: the Timer for a clock Go fakes
// (testing/synctest's bubbles), which only Go's timers follow. A kernel timer fires on the
// real clock, and yielding until a fake deadline would never end.
func NewCoarseTimer() *Timer {
	return &Timer{k: newGoTimer(), coarse: true}
}

// SleepUntil waits until deadline, or until ctx is done (then it returns ctx.Err()).
func (t *Timer) SleepUntil(ctx context.Context, deadline time.Time) error {
	// The cap of the early wake-up is the whole wait's: after an early wake-up the rest is
	// yielded, not slept again. A coarse Timer never yields, so it never wakes early.
	limit := earlyCap(time.Until(deadline))
	if t.coarse {
		limit = 0
	}
	if !t.primed {
		t.early, t.primed = limit, true
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := time.Until(deadline)
		early := min(t.early, limit)
		switch {
		case wait <= 0:
			return nil
		case !t.coarse && (wait < spinBelow || wait <= early):
			runtime.Gosched()
			continue
		}
		t.bind(ctx)
		sleep := wait - early
		var backstop time.Time
		if t.busy > 0 {
			backstop = deadline
		}
		t.k.arm(sleep, backstop)
		// A cancellation that came before arm re-armed the timer is seen here; one after it
		// fires the timer (see bind), so the wait cannot miss it.
		if err := ctx.Err(); err != nil {
			return err
		}
		fires := time.Now().Add(sleep)
		if !t.k.wait() {
			// The backstop ended the wait: the process is still busy. Its wake-up says nothing
			// of the kernel timer's latency.
			t.busy = busyWaits
			continue
		}
		latency := time.Since(fires)
		t.learn(latency, limit)
		switch {
		case latency > busyAbove:
			t.busy = busyWaits
		case t.busy > 0:
			t.busy--
		}
	}
}

// learn moves the timer's early wake-up towards a quantile of its wake-up latency (a
// stochastic quantile, deaf to the size of a busy machine's outliers), within limit, the
// cap of the wait that measured it. A short wait moves it a step either way, towards the
// median: half the wakes then come a few µs before the deadline and yield the rest, half a
// few µs after it. A long wait (a cap above maxEarly) steps up longStepsUp times as far as
// down, towards the 98th percentile: it can afford to yield, and on a sleeping machine the
// median wake-up alone would leave half the waits late by the latency's spread.
func (t *Timer) learn(latency, limit time.Duration) {
	up := earlyStep
	if limit > maxEarly {
		up *= longStepsUp
	}
	switch {
	case latency > t.early && t.early < limit:
		t.early = min(t.early+up, limit)
	case latency < t.early:
		t.early = max(t.early-earlyStep, 0)
	}
}

// bind makes ctx's cancellation fire the timer, once per context.
func (t *Timer) bind(ctx context.Context) {
	if ctx == t.bound || ctx.Done() == nil {
		return
	}
	t.unbind()
	t.bound = ctx
	t.stop = context.AfterFunc(ctx, t.k.fireNow)
}

func (t *Timer) unbind() {
	if t.stop != nil {
		t.stop()
	}
	t.bound, t.stop = nil, nil
}

// Close releases the kernel timer. The Timer must not be waited on after.
func (t *Timer) Close() error {
	t.unbind()
	return t.k.close()
}

// CPUTime is the CPU time (user and system) the process has used so far: what a benchmark
// divides by wall time to state a wait's cost in cores.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
