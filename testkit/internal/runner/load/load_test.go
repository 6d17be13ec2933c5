package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
)

func noop(context.Context, *Request) error { return nil }

// inBubble runs f in a testing/synctest bubble: its clock moves only when every goroutine of
// the run waits, so a timing test sees exactly what the schedule and the ops' sleeps fix, on a
// loaded machine as on an idle one, in no time. The open loop's dispatcher waits on Go's
// timers there, which follow that clock (a kernel timer follows the real one). The ops of a
// run in a bubble must wait (sleep, a channel) rather than spin or hold a mutex, or the clock
// never moves.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		newTimer = timing.NewCoarseTimer
		defer func() { newTimer = timing.NewTimer }()
		f(t)
	})
}

// run calls Run and fails the test on a configuration error.
func run(t *testing.T, ctx context.Context, cfg Config, op Op) *Result {
	t.Helper()
	res, err := Run(ctx, cfg, op)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// assertTotals checks that every started request is accounted for exactly once.
func assertTotals(t *testing.T, res *Result) {
	t.Helper()
	o := res.Outcomes
	finished := o.Count(Succeeded) + o.Count(Failed) + o.Count(UnknownOutcome)
	if finished != res.Attempted() {
		t.Errorf("outcomes hold %d finished requests, counters %d", finished, res.Attempted())
	}
	if got := o.Count(Succeeded); got != res.Completed+res.WarmupCompleted {
		t.Errorf("outcomes: %d succeeded, counters: %d completed + %d in warm-up", got, res.Completed, res.WarmupCompleted)
	}
	if got := res.Latency.Count(); got != res.Completed {
		t.Errorf("latency histogram holds %d values, %d measured requests completed", got, res.Completed)
	}
	var classified int64
	for _, n := range res.ErrorCounts {
		classified += n
	}
	if failed := res.Failed + res.WarmupFailed; classified != failed {
		t.Errorf("error counts sum to %d, %d requests failed", classified, failed)
	}
	if res.End.Before(res.Start) {
		t.Errorf("End %v before Start %v", res.End, res.Start)
	}
}

func TestRunsExactlyRequestsWithDenseIndexesAt6000Workers(t *testing.T) {
	const (
		workers  = 6000
		requests = 30000
	)
	seen := make([]atomic.Int32, requests)
	var (
		inFlight  atomic.Int64
		allIn     = make(chan struct{})
		allInOnce sync.Once
		badWorker atomic.Int64
	)
	guard, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	op := func(ctx context.Context, r *Request) error {
		seen[r.Index].Add(1)
		if r.Worker < 0 || r.Worker >= workers {
			badWorker.Add(1)
		}
		// The first request of every worker waits until all 6000 are in flight at once, which
		// proves the engine really runs that many concurrently.
		if r.Index < workers {
			if inFlight.Add(1) == workers {
				allInOnce.Do(func() { close(allIn) })
			}
			select {
			case <-allIn:
			case <-guard.Done():
				return errors.New("never had 6000 requests in flight")
			}
		}
		return nil
	}
	res := run(t, context.Background(), Config{Concurrency: workers, Requests: requests}, op)

	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
	if badWorker.Load() != 0 {
		t.Errorf("%d requests had a worker id outside [0, %d)", badWorker.Load(), workers)
	}
	if res.Completed != requests || res.Failed != 0 {
		t.Errorf("completed %d failed %d (errors %v), want %d and 0", res.Completed, res.Failed, res.ErrorSamples, requests)
	}
	if res.Outcomes.Len() != requests || res.Outcomes.Count(Succeeded) != requests {
		t.Errorf("outcomes: len %d, %d succeeded; want %d", res.Outcomes.Len(), res.Outcomes.Count(Succeeded), requests)
	}
	if res.Stopped {
		t.Error("Stopped set on a run that finished its requests")
	}
	assertTotals(t, res)
}

func TestConcurrencyAboveRequestsIsCapped(t *testing.T) {
	var maxWorker atomic.Int64
	res := run(t, context.Background(), Config{Concurrency: 100, Requests: 3}, func(_ context.Context, r *Request) error {
		for {
			cur := maxWorker.Load()
			if int64(r.Worker) <= cur || maxWorker.CompareAndSwap(cur, int64(r.Worker)) {
				return nil
			}
		}
	})
	if res.Completed != 3 || maxWorker.Load() > 2 {
		t.Errorf("completed %d, highest worker %d; want 3 and at most 2", res.Completed, maxWorker.Load())
	}
}

func TestDurationBoundRunStops(t *testing.T) { inBubble(t, testDurationBoundRunStops) }

// 8 workers of 100 µs requests for 50 ms: exactly 4,000 requests on the bubble's clock.
func testDurationBoundRunStops(t *testing.T) {
	var calls atomic.Int64
	res := run(t, context.Background(), Config{Concurrency: 8, Duration: 50 * time.Millisecond}, func(context.Context, *Request) error {
		calls.Add(1)
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	if res.Completed != 8*500 || res.Completed != calls.Load() {
		t.Errorf("completed %d, op ran %d times; want 4000", res.Completed, calls.Load())
	}
	if res.Outcomes.Len() != calls.Load() || res.Outcomes.Count(NotAttempted) != 0 {
		t.Errorf("outcomes len %d with %d not attempted, op ran %d times", res.Outcomes.Len(), res.Outcomes.Count(NotAttempted), calls.Load())
	}
	if res.Stopped {
		t.Error("a run that reached its duration is not Stopped")
	}
	assertTotals(t, res)
}

func TestDurationEndsARunBeforeItsRequests(t *testing.T) {
	const planned = int64(1) << 34 // far more than 30ms allows; outcomes must not allocate them all
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: planned, Duration: 30 * time.Millisecond}, noop)
	if res.Completed == 0 || res.Completed >= planned {
		t.Fatalf("completed %d of %d", res.Completed, planned)
	}
	// The run stopped short of its plan: its indexes are those it started (what is checked
	// and accounted for after it does not walk the 2^34 it never reached).
	if res.Outcomes.Len() != res.Completed || res.Outcomes.Count(NotAttempted) != 0 {
		t.Errorf("outcomes len %d with %d not attempted, want the %d started", res.Outcomes.Len(), res.Outcomes.Count(NotAttempted), res.Completed)
	}
	if res.Stopped {
		t.Error("a run that reached its duration is not Stopped")
	}
}

func TestWarmupLongerThanTheRunMeasuresNothing(t *testing.T) {
	const requests = 200
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: requests, Warmup: time.Hour}, func(_ context.Context, r *Request) error {
		r.RecordAcquireWait(time.Millisecond)
		if r.Index%4 == 0 {
			return errors.New("boom")
		}
		return nil
	})
	if res.Completed != 0 || res.Failed != 0 || res.Latency.Count() != 0 || res.AcquireWait.Count() != 0 {
		t.Errorf("measured: completed %d failed %d latency %d acquire %d; want all 0",
			res.Completed, res.Failed, res.Latency.Count(), res.AcquireWait.Count())
	}
	if res.WarmupCompleted != 150 || res.WarmupFailed != 50 {
		t.Errorf("warm-up completed %d failed %d, want 150 and 50", res.WarmupCompleted, res.WarmupFailed)
	}
	if res.Outcomes.Count(Succeeded) != 150 || res.Outcomes.Count(Failed) != 50 {
		t.Errorf("outcomes: %d succeeded %d failed, want 150 and 50", res.Outcomes.Count(Succeeded), res.Outcomes.Count(Failed))
	}
	if res.ErrorCounts[ClassOther] != 50 {
		t.Errorf("error counts %v: warm-up failures must be counted", res.ErrorCounts)
	}
	assertTotals(t, res)
}

func TestWarmupExcludesEarlyRequestsFromStats(t *testing.T) {
	inBubble(t, testWarmupExcludesEarlyRequestsFromStats)
}

func testWarmupExcludesEarlyRequestsFromStats(t *testing.T) {
	const (
		warmup   = 300 * time.Millisecond
		requests = 50
	)
	// One worker: request 0 starts right away and outlasts the warm-up, so every later request
	// starts after it. Request 0 fails, to show warm-up failures keep their outcome and class.
	var firstStart time.Time
	res := run(t, context.Background(), Config{Concurrency: 1, Requests: requests, Warmup: warmup}, func(_ context.Context, r *Request) error {
		r.RecordAcquireWait(2 * time.Millisecond)
		if r.Index == 0 {
			firstStart = time.Now()
			time.Sleep(warmup)
			return errors.New("early failure")
		}
		return nil
	})
	if !firstStart.Before(res.MeasureStart) {
		t.Fatalf("request 0 started %v after the warm-up ended", firstStart.Sub(res.MeasureStart))
	}
	if res.WarmupFailed != 1 || res.WarmupCompleted != 0 {
		t.Errorf("warm-up completed %d failed %d, want 0 and 1", res.WarmupCompleted, res.WarmupFailed)
	}
	if res.Completed != requests-1 || res.Failed != 0 {
		t.Errorf("measured completed %d failed %d, want %d and 0", res.Completed, res.Failed, requests-1)
	}
	if res.AcquireWait.Count() != requests-1 {
		t.Errorf("acquire waits %d, want %d (warm-up excluded)", res.AcquireWait.Count(), requests-1)
	}
	if res.Outcomes.Get(0) != Failed || res.Outcomes.Count(Succeeded) != requests-1 {
		t.Errorf("outcome of request 0 %v, %d succeeded", res.Outcomes.Get(0), res.Outcomes.Count(Succeeded))
	}
	if res.ErrorCounts[ClassOther] != 1 || !strings.Contains(res.ErrorSamples[ClassOther], "early failure") {
		t.Errorf("errors %v %v: the warm-up failure must be counted and sampled", res.ErrorCounts, res.ErrorSamples)
	}
	if !res.MeasureStart.Equal(res.Start.Add(warmup)) {
		t.Errorf("MeasureStart %v, want Start+%v", res.MeasureStart, warmup)
	}
	assertTotals(t, res)
}

func TestOutcomesAndErrorCounts(t *testing.T) {
	const requests = 3000
	res := run(t, context.Background(), Config{Concurrency: 64, Requests: requests}, func(_ context.Context, r *Request) error {
		switch r.Index % 3 {
		case 1:
			return fmt.Errorf("transfer %d: %w", r.Index, deadlock)
		case 2:
			return Unknown(fmt.Errorf("commit: %w", errConnClosedForTest))
		}
		return nil
	})
	if res.Completed != requests/3 || res.Failed != 2*requests/3 {
		t.Errorf("completed %d failed %d, want %d and %d", res.Completed, res.Failed, requests/3, 2*requests/3)
	}
	want := map[string]int64{"40P01": requests / 3, ClassUnknownOutcome: requests / 3}
	if fmt.Sprint(res.ErrorCounts) != fmt.Sprint(want) {
		t.Errorf("error counts %v, want %v", res.ErrorCounts, want)
	}
	if !strings.Contains(res.ErrorSamples["40P01"], "deadlock detected") {
		t.Errorf("sample for 40P01 is %q", res.ErrorSamples["40P01"])
	}
	wantOutcome := []Outcome{Succeeded, Failed, UnknownOutcome}
	res.Outcomes.Each(func(i int64, got Outcome) {
		if got != wantOutcome[i%3] {
			t.Fatalf("outcome of %d is %v, want %v", i, got, wantOutcome[i%3])
		}
	})
	for _, o := range wantOutcome {
		if got := res.Outcomes.Count(o); got != requests/3 {
			t.Errorf("%d requests %v, want %d", got, o, requests/3)
		}
	}
	assertTotals(t, res)
}

func TestPanicIsRecoveredAndCounted(t *testing.T) {
	const requests = 100
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: requests}, func(_ context.Context, r *Request) error {
		if r.Index%10 == 0 {
			panic(fmt.Sprintf("boom at %d", r.Index))
		}
		return nil
	})
	if res.Completed != 90 || res.Failed != 10 || res.ErrorCounts[ClassPanic] != 10 {
		t.Errorf("completed %d failed %d errors %v; want 90, 10, panic:10", res.Completed, res.Failed, res.ErrorCounts)
	}
	if s := res.ErrorSamples[ClassPanic]; !strings.Contains(s, "boom at") || !strings.Contains(s, "load_test.go") {
		t.Errorf("panic sample should hold the value and the stack, got %q", s)
	}
	if res.Outcomes.Count(Failed) != 10 {
		t.Errorf("%d failed outcomes, want 10", res.Outcomes.Count(Failed))
	}
	assertTotals(t, res)
}

func TestRecordAcquireWaitIsSeparateFromLatency(t *testing.T) {
	const requests = 400
	res := run(t, context.Background(), Config{Concurrency: 8, Requests: requests}, func(_ context.Context, r *Request) error {
		switch r.Index % 4 {
		case 0: // no connection needed: nothing recorded
		case 1:
			r.RecordAcquireWait(5 * time.Millisecond)
		case 2: // two acquires in one request add up
			r.RecordAcquireWait(2 * time.Millisecond)
			r.RecordAcquireWait(3 * time.Millisecond)
		case 3: // waits of failed requests count too
			r.RecordAcquireWait(5 * time.Millisecond)
			return errors.New("failed after acquiring")
		}
		return nil
	})
	if got := res.AcquireWait.Count(); got != 3*requests/4 {
		t.Errorf("acquire waits recorded %d, want %d", got, 3*requests/4)
	}
	if lo, hi := res.AcquireWait.ValueAtQuantile(0), res.AcquireWait.Max(); lo != 5*time.Millisecond || hi < 5*time.Millisecond || hi > 5005*time.Microsecond {
		t.Errorf("acquire waits span %v..%v, want 5ms each", lo, hi)
	}
	if res.Latency.Count() != 3*requests/4 {
		t.Errorf("latency values %d, want %d (the succeeded ones)", res.Latency.Count(), 3*requests/4)
	}
	assertTotals(t, res)
}

func TestCancelStopsNewRequestsButNotInFlightOnes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ranAfterCancel atomic.Int64
	var inFlightCtxErr atomic.Value
	res := run(t, ctx, Config{Concurrency: 8, Requests: 1 << 30}, func(opCtx context.Context, r *Request) error {
		switch {
		case r.Index == 0:
			// In flight when the run is cancelled: it outlives the cancel with its own context.
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond)
			inFlightCtxErr.Store(fmt.Sprint(opCtx.Err()))
		case r.Index == 100:
			cancel()
		case ctx.Err() != nil:
			ranAfterCancel.Add(1)
		}
		return nil
	})
	if !res.Stopped {
		t.Error("Stopped is false after a cancel")
	}
	if got := inFlightCtxErr.Load(); got != "<nil>" {
		t.Errorf("the in-flight op saw its context end: %v", got)
	}
	if res.Outcomes.Get(0) != Succeeded {
		t.Errorf("the in-flight request was not waited for: outcome %v", res.Outcomes.Get(0))
	}
	// Each of the 8 workers may have taken one index while the cancel was landing.
	if n := ranAfterCancel.Load(); n > 8 {
		t.Errorf("%d requests started after the cancel", n)
	}
	attempted := res.Attempted()
	if attempted < 101 || res.Outcomes.Count(NotAttempted) != res.Outcomes.Len()-attempted {
		t.Errorf("attempted %d, not attempted %d of %d", attempted, res.Outcomes.Count(NotAttempted), res.Outcomes.Len())
	}
	for i := range attempted {
		if res.Outcomes.Get(i) == NotAttempted {
			t.Fatalf("index %d below %d attempted was never run: indexes must be dense", i, attempted)
		}
	}
	assertTotals(t, res)
}

func TestCancelOfADurationRunIsStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := run(t, ctx, Config{Concurrency: 4, Duration: time.Hour}, func(_ context.Context, r *Request) error {
		if r.Index == 1000 {
			cancel()
		}
		return nil
	})
	if !res.Stopped || res.Attempted() < 1001 || res.Outcomes.Len() != res.Attempted() {
		t.Errorf("stopped %v attempted %d outcomes %d", res.Stopped, res.Attempted(), res.Outcomes.Len())
	}
}

func TestCancelAfterTheLastRequestStartedIsNotStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const requests = 500
	res := run(t, ctx, Config{Concurrency: 4, Requests: requests}, func(_ context.Context, r *Request) error {
		if r.Index == requests-1 {
			cancel()
		}
		return nil
	})
	if res.Stopped || res.Completed != requests {
		t.Errorf("stopped %v completed %d; a cancel after the last request was handed out cuts nothing short", res.Stopped, res.Completed)
	}
}

func TestAlreadyCancelledContextRunsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := run(t, ctx, Config{Concurrency: 16, Requests: 100}, func(context.Context, *Request) error {
		t.Error("op ran under a cancelled context")
		return nil
	})
	if !res.Stopped || res.Attempted() != 0 || res.Outcomes.Len() != 0 || !res.End.Equal(res.Start) {
		t.Errorf("stopped %v attempted %d outcomes %d end-start %v", res.Stopped, res.Attempted(), res.Outcomes.Len(), res.End.Sub(res.Start))
	}
}

func TestOpContextIsPassedToOps(t *testing.T) {
	type key struct{}
	opCtx := context.WithValue(context.Background(), key{}, "mine")
	var wrong atomic.Int64
	run(t, context.Background(), Config{Concurrency: 2, Requests: 10, OpContext: opCtx}, func(ctx context.Context, _ *Request) error {
		if ctx.Value(key{}) != "mine" {
			wrong.Add(1)
		}
		return nil
	})
	if wrong.Load() != 0 {
		t.Errorf("%d ops did not get OpContext", wrong.Load())
	}
}

func TestLiveCounters(t *testing.T) {
	live := new(Live)
	live.completed.Store(99) // left over from an earlier run: Run resets it
	var sawStarted, sawDone atomic.Int64
	release := make(chan struct{})
	const requests = 1000
	res := run(t, context.Background(), Config{Concurrency: 2, Requests: requests, Live: live}, func(_ context.Context, r *Request) error {
		switch r.Index {
		case 500:
			// Done first: whatever finished by then had started, and this one had not finished.
			sawDone.Store(live.Completed() + live.Failed())
			sawStarted.Store(live.Started())
		case 0:
			<-release
		case 1:
			defer close(release)
		}
		if r.Index%2 == 1 {
			return errors.New("odd")
		}
		return nil
	})
	if s := sawStarted.Load(); s < 501 {
		t.Errorf("Live.Started read %d during request 500", s)
	}
	// Requests 0 and 1 ran before it; the others may have overtaken it (a worker can be
	// descheduled between taking index 500 and running it), but none that had not started.
	if d, s := sawDone.Load(), sawStarted.Load(); d < 1 || d >= s {
		t.Errorf("Live finished read %d during request 500, started %d", d, s)
	}
	if live.Started() != requests || live.Completed() != res.Completed || live.Failed() != res.Failed || live.InFlight() != 0 {
		t.Errorf("after the run: started %d completed %d failed %d in flight %d; result %d/%d",
			live.Started(), live.Completed(), live.Failed(), live.InFlight(), res.Completed, res.Failed)
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no workers", Config{Requests: 1}},
		{"negative requests", Config{Concurrency: 1, Requests: -1}},
		{"unbounded", Config{Concurrency: 1}},
		{"negative duration", Config{Concurrency: 1, Duration: -time.Second}},
		{"negative warm-up", Config{Concurrency: 1, Requests: 1, Warmup: -time.Second}},
		{"warm-up covers the duration", Config{Concurrency: 1, Duration: time.Second, Warmup: time.Second}},
		{"negative shards", Config{Concurrency: 1, Requests: 1, Shards: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tc.cfg, noop); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := Run(context.Background(), Config{Concurrency: 1, Requests: 1}, nil); err == nil {
		t.Error("nil op accepted")
	}
}

// TestMeasuringOpensTheWindow: Config.Measuring is called once, as the measured window opens:
// before the first request without a warm-up, at MeasureStart with one (an open loop's too),
// and not at all when the run ends before its window opens; it has returned when Run has.
func TestMeasuringOpensTheWindow(t *testing.T) { inBubble(t, testMeasuringOpensTheWindow) }

func testMeasuringOpensTheWindow(t *testing.T) {
	const warmup = 300 * time.Millisecond
	for _, c := range []struct {
		name  string
		cfg   Config
		calls int
	}{
		{"no warm-up", Config{Concurrency: 2, Requests: 20}, 1},
		{"warm-up", Config{Concurrency: 2, Duration: time.Second, Warmup: warmup}, 1},
		{"open loop", Config{Concurrency: 2, Duration: time.Second, Warmup: warmup, Rate: 100, Seed: 1}, 1},
		{"ended within its warm-up", Config{Concurrency: 2, Requests: 20, Warmup: time.Hour}, 0},
	} {
		var calls, before atomic.Int64
		var at time.Time
		started := make(chan struct{}, 1)
		c.cfg.Measuring = func() {
			calls.Add(1)
			at = time.Now()
			before.Store(int64(len(started)))
		}
		res := run(t, context.Background(), c.cfg, func(context.Context, *Request) error {
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(10 * time.Millisecond)
			return nil
		})
		if int(calls.Load()) != c.calls {
			t.Errorf("%s: Measuring called %d times, want %d", c.name, calls.Load(), c.calls)
			continue
		}
		switch {
		case c.calls == 0:
		case !at.Equal(res.MeasureStart):
			t.Errorf("%s: Measuring at %v, the window opened at %v", c.name, at.Sub(res.Start), res.MeasureStart.Sub(res.Start))
		case c.cfg.Warmup == 0 && before.Load() != 0:
			t.Errorf("%s: Measuring came after the first request", c.name)
		}
	}
}
