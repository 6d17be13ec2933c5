package load

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestScheduleIsReproducibleAndHoldsItsRate(t *testing.T) {
	const rate, n = 1000.0, 20000
	for _, arrivals := range []Arrivals{Poisson, Uniform} {
		t.Run(string(arrivals), func(t *testing.T) {
			a, b := newSchedule(rate, 0, arrivals, 7), newSchedule(rate, 0, arrivals, 7)
			other := newSchedule(rate, 0, arrivals, 8)
			var last time.Duration
			same := true
			for i := 0; i < n; i++ {
				x, y, z := a.next(), b.next(), other.next()
				if x != y {
					t.Fatalf("arrival %d: %v and %v from the same seed", i, x, y)
				}
				if x < last {
					t.Fatalf("arrival %d at %v before the previous one at %v", i, x, last)
				}
				same = same && x == z
				last = x
			}
			if arrivals == Poisson && same {
				t.Error("seeds 7 and 8 drew the same Poisson schedule")
			}
			if arrivals == Uniform && !same {
				t.Error("a uniform schedule depends on the seed")
			}
			got := float64(n) / last.Seconds()
			if math.Abs(got-rate)/rate > 0.03 {
				t.Errorf("%d arrivals over %v: %.0f/s, want %.0f/s within 3%%", n, last, got, rate)
			}
		})
	}
}

func TestScheduleRampClimbsLinearly(t *testing.T) {
	const rate = 1000.0
	ramp := 4 * time.Second
	s := newSchedule(rate, ramp, Uniform, 1)
	perSecond := make([]int, 6)
	for {
		at := s.next()
		if at >= 6*time.Second {
			break
		}
		perSecond[int(at/time.Second)]++
	}
	// Λ(t) = R t²/(2D) during the ramp: second k holds R(2k+1)/(2D) arrivals; then R per second.
	for k, got := range perSecond {
		want := rate
		if k < 4 {
			want = rate * float64(2*k+1) / (2 * ramp.Seconds())
		}
		if math.Abs(float64(got)-want) > 2 {
			t.Errorf("second %d: %d arrivals, want %.0f", k, got, want)
		}
	}
}

// TestOpenLoopShowsAStallTheClosedLoopHides is the coordinated-omission acceptance test: a
// stand-in request path where every request takes a shared lock briefly, and one request holds
// it for a second. Open-loop at 1000/s, the arrivals during the stall wait for it, and their
// latency from the intended start shows it while their service time does not; closed-loop,
// the workers stop sending during the stall, so only the few requests in flight see it.
func TestOpenLoopShowsAStallTheClosedLoopHides(t *testing.T) {
	inBubble(t, testOpenLoopShowsAStallTheClosedLoopHides)
}

func testOpenLoopShowsAStallTheClosedLoopHides(t *testing.T) {
	const workers = 16
	stalled := func() Op {
		lock := make(chan struct{}, 1) // a mutex, on which a bubble's clock can move
		var once sync.Once
		return func(ctx context.Context, r *Request) error {
			lock <- struct{}{}
			defer func() { <-lock }()
			if r.Index >= 1000 {
				once.Do(func() { time.Sleep(time.Second) })
			}
			return nil
		}
	}
	open := run(t, context.Background(), Config{Concurrency: workers, Duration: 5 * time.Second, Rate: 1000, Seed: 1}, stalled())
	closed := run(t, context.Background(), Config{Concurrency: workers, Requests: 5000}, stalled())
	assertTotals(t, open)
	assertTotals(t, closed)

	p99 := func(h interface{ ValueAtQuantile(float64) time.Duration }) time.Duration {
		return h.ValueAtQuantile(99)
	}
	intended, service, closedP99 := p99(open.Latency), p99(open.OpenLoop.Service), p99(closed.Latency)
	t.Logf("open loop at 1000/s: latency p99 %v (from the intended start), service p99 %v, lag p99 %v, late %d of %d; closed loop: p99 %v",
		intended, service, p99(open.OpenLoop.ScheduleLag), open.OpenLoop.Late, open.Completed, closedP99)
	if intended < 500*time.Millisecond {
		t.Errorf("intended-start p99 %v: the 1 s stall does not show (want ≥ 500ms)", intended)
	}
	if service >= 100*time.Millisecond {
		t.Errorf("service p99 %v: only the %d requests in flight during the stall should see it", service, workers)
	}
	if closedP99 >= intended/5 {
		t.Errorf("closed-loop p99 %v is not far below the open loop's %v: the closed loop should hide the stall", closedP99, intended)
	}
	if open.OpenLoop.Late < 500 {
		t.Errorf("%d late requests; the arrivals during the 1 s stall (about 1000) started late", open.OpenLoop.Late)
	}
	if got := open.AchievedRPS(); got < 900 {
		t.Errorf("achieved %.0f/s: the backlog should be served after the stall", got)
	}
}

// TestMaxLagSkipsWithoutTakingAnIndex: one worker, each request 20 ms, arrivals at 500/s, so
// nearly every arrival is more than 5 ms late; those are skipped and the requests sent keep
// dense indexes.
func TestMaxLagSkipsWithoutTakingAnIndex(t *testing.T) {
	inBubble(t, testMaxLagSkipsWithoutTakingAnIndex)
}

func testMaxLagSkipsWithoutTakingAnIndex(t *testing.T) {
	var sent atomic.Int64
	op := func(ctx context.Context, r *Request) error {
		sent.Add(1)
		time.Sleep(20 * time.Millisecond)
		return nil
	}
	res := run(t, context.Background(), Config{Concurrency: 1, Duration: time.Second, Rate: 500, Arrivals: Uniform, MaxLag: 5 * time.Millisecond}, op)
	assertTotals(t, res)
	ol := res.OpenLoop
	// On the bubble's clock: one 20 ms request at a time for 1 s sends exactly 50.
	if res.Completed != 50 || ol.Skipped < 400 {
		t.Errorf("sent %d and skipped %d of about 500 arrivals, want 50 sent and the rest mostly skipped", res.Completed, ol.Skipped)
	}
	if res.Completed != sent.Load() || res.Outcomes.Len() != sent.Load() {
		t.Errorf("%d completed, %d outcomes, %d sent: skipped arrivals must take no index", res.Completed, res.Outcomes.Len(), sent.Load())
	}
	if total := res.Completed + ol.Skipped + ol.Unsent; total < 480 || total > 520 {
		t.Errorf("sent %d + skipped %d + unsent %d = %d, want the ~500 arrivals of the schedule", res.Completed, ol.Skipped, ol.Unsent, total)
	}
	if max := ol.ScheduleLag.Max(); max > 5*time.Millisecond+LateAfter*10 {
		t.Errorf("a request was sent %v late, beyond --max-lag", max)
	}
}

// TestOpenLoopOverCapacityLeavesABacklogUnsent: 2 workers of 10 ms each serve 200/s at most;
// offered 400/s for a second, about half the arrivals are left unsent at the deadline, and the
// achieved rate is the capacity.
func TestOpenLoopOverCapacityLeavesABacklogUnsent(t *testing.T) {
	inBubble(t, testOpenLoopOverCapacityLeavesABacklogUnsent)
}

func testOpenLoopOverCapacityLeavesABacklogUnsent(t *testing.T) {
	op := func(ctx context.Context, r *Request) error { time.Sleep(10 * time.Millisecond); return nil }
	res := run(t, context.Background(), Config{Concurrency: 2, Duration: time.Second, Rate: 400, Arrivals: Uniform}, op)
	assertTotals(t, res)
	ol := res.OpenLoop
	// On the bubble's clock the capacity is exact: 200 sent, the other ~200 arrivals unsent.
	if res.Completed != 200 || ol.Unsent < 190 || ol.Unsent > 210 {
		t.Errorf("sent %d, unsent %d; want 200 and about 200", res.Completed, ol.Unsent)
	}
	if got := res.AchievedRPS(); got < 199 || got > 201 {
		t.Errorf("achieved %.0f/s, want the capacity (200/s)", got)
	}
	if ol.Late < res.Completed/2 {
		t.Errorf("late %d of %d: a run over capacity starts most requests late", ol.Late, res.Completed)
	}
	if res.Latency.ValueAtQuantile(99) < 300*time.Millisecond {
		t.Errorf("intended-start p99 %v, want it to grow with the backlog (~500ms)", res.Latency.ValueAtQuantile(99))
	}
}

func TestOpenLoopRampAndWarmupAreLeftOut(t *testing.T) {
	inBubble(t, testOpenLoopRampAndWarmupAreLeftOut)
}

func testOpenLoopRampAndWarmupAreLeftOut(t *testing.T) {
	res := run(t, context.Background(), Config{Concurrency: 4, Duration: 2 * time.Second, Rate: 400, Arrivals: Uniform,
		Ramp: time.Second, Warmup: 500 * time.Millisecond}, noop)
	assertTotals(t, res)
	if got := res.MeasureStart.Sub(res.Start); got != time.Second {
		t.Errorf("measurement starts %v in, want after the 1 s ramp", got)
	}
	// Ramp: R·D/2 = 200 arrivals (the one at 0 s opens the ramp at rate 0: 199 sent); then 400
	// measured, every one sent on time: on the bubble's clock the schedule alone decides.
	ol := res.OpenLoop
	if res.WarmupCompleted != 199 || res.Completed != 400 || ol.Skipped+ol.Unsent != 0 {
		t.Errorf("%d ramp requests and %d measured (%d skipped, %d unsent), want 199 and 400, all sent",
			res.WarmupCompleted, res.Completed, ol.Skipped, ol.Unsent)
	}
	if ol.Late != 0 || ol.ScheduleLag.Max() > time.Microsecond {
		t.Errorf("%d late, schedule lag max %v: a no-op at 400/s on 4 workers is never late", ol.Late, ol.ScheduleLag.Max())
	}
}

func TestOpenLoopStopsOnCancelAndAtTheRequestLimit(t *testing.T) {
	inBubble(t, testOpenLoopStopsOnCancelAndAtTheRequestLimit)
}

func testOpenLoopStopsOnCancelAndAtTheRequestLimit(t *testing.T) {
	res := run(t, context.Background(), Config{Concurrency: 8, Requests: 300, Rate: 10000}, noop)
	assertTotals(t, res)
	if res.Completed != 300 || res.Stopped {
		t.Errorf("completed %d (stopped %v), want all 300 planned", res.Completed, res.Stopped)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	op := func(context.Context, *Request) error {
		if n.Add(1) == 50 {
			cancel()
		}
		return nil
	}
	res = run(t, ctx, Config{Concurrency: 8, Duration: time.Minute, Rate: 1000}, op)
	assertTotals(t, res)
	if !res.Stopped || res.Attempted() > 50+8 {
		t.Errorf("stopped %v after %d requests, want stopped soon after the 50th", res.Stopped, res.Attempted())
	}
}

func TestOpenLoopConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Concurrency: 1, Duration: time.Second, Rate: -1},
		{Concurrency: 1, Duration: time.Second, Ramp: time.Second / 2},
		{Concurrency: 1, Duration: time.Second, MaxLag: time.Second},
		{Concurrency: 1, Duration: time.Second, Rate: 10, Ramp: time.Second},
		{Concurrency: 1, Duration: time.Second, Rate: 10, Arrivals: "bursty"},
	} {
		if _, err := Run(context.Background(), cfg, noop); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
