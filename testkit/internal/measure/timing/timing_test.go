package timing

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleepUntilNeverReturnsEarly(t *testing.T) {
	tm := NewTimer()
	defer tm.Close()
	// busy: the waits have Go's timer as their backstop, as in a busy process (busyAbove).
	for _, busy := range []int{0, 1 << 30} {
		for _, wait := range []time.Duration{-time.Second, 0, time.Microsecond, 20 * time.Microsecond, 200 * time.Microsecond, 2 * time.Millisecond, 20 * time.Millisecond} {
			tm.busy = busy
			deadline := time.Now().Add(wait)
			if err := tm.SleepUntil(context.Background(), deadline); err != nil {
				t.Fatalf("wait %s: %v", wait, err)
			}
			if now := time.Now(); now.Before(deadline) {
				t.Errorf("wait %s (busy %d) returned %s before its deadline", wait, busy, deadline.Sub(now))
			}
		}
	}
}

func TestCancelEndsAWait(t *testing.T) {
	for _, name := range []string{"kernel", "go"} {
		t.Run(name, func(t *testing.T) {
			tm := &Timer{k: newWaiter()}
			if name == "go" {
				tm.k = newGoTimer()
			}
			defer tm.Close()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() { done <- tm.SleepUntil(ctx, time.Now().Add(time.Hour)) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled wait returned %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("cancelling the context did not end the wait")
			}
			// The cancellation fired the timer; a wait under another context must not see
			// that stale expiry as its own deadline.
			deadline := time.Now().Add(5 * time.Millisecond)
			if err := tm.SleepUntil(context.Background(), deadline); err != nil {
				t.Fatal(err)
			}
			if time.Now().Before(deadline) {
				t.Error("a wait after a cancelled one returned before its deadline")
			}
		})
	}
}

// TestShortWaitsNeverHang runs thousands of waits just above spinBelow, where the kernel timer
// can fire before the waiter parks: a wake-up lost in that window would hang the wait.
func TestShortWaitsNeverHang(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tm := NewTimer()
		defer tm.Close()
		for i := range 5000 {
			_ = tm.SleepUntil(context.Background(), time.Now().Add(spinBelow+time.Duration(i%50)*time.Microsecond))
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("5000 short waits did not end in 2 minutes: a wake-up was lost")
	}
}

func TestCancelledContextReturnsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tm := NewTimer()
	defer tm.Close()
	if err := tm.SleepUntil(ctx, time.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := tm.SleepUntil(ctx, time.Now().Add(-time.Second)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a past deadline under a cancelled context: got %v, want context.Canceled", err)
	}
}

func TestManyWaitersAtOnce(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	early := make(chan time.Duration, 200)
	for i := range 200 {
		wg.Go(func() {
			tm := NewTimer()
			defer tm.Close()
			deadline := time.Now().Add(time.Duration(i%20) * 100 * time.Microsecond)
			if err := tm.SleepUntil(ctx, deadline); err != nil {
				t.Error(err)
			}
			if d := time.Until(deadline); d > 0 {
				early <- d
			}
		})
	}
	wg.Wait()
	close(early)
	for d := range early {
		t.Errorf("a wait returned %s early", d)
	}
	cancel()
	waitGoroutines(t, before)
}

func TestCloseWhileCancelling(t *testing.T) {
	for range 100 {
		tm := NewTimer()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = tm.SleepUntil(ctx, time.Now().Add(time.Hour))
		}()
		cancel()
		<-done
		if err := tm.Close(); err != nil {
			t.Fatal(err)
		}
		tm.k.fireNow() // a late cancellation after Close must not touch the released descriptor
	}
}

func TestAWaitAllocatesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := NewTimer()
	defer tm.Close()
	_ = tm.SleepUntil(ctx, time.Now().Add(time.Millisecond)) // binds ctx once
	if n := testing.AllocsPerRun(200, func() {
		_ = tm.SleepUntil(ctx, time.Now().Add(100*time.Microsecond))
	}); n != 0 {
		t.Errorf("a wait on a kept Timer allocates %.1f times", n)
	}
}

// waitGoroutines fails the test when the goroutine count does not come back to before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines left over (had %d)", runtime.NumGoroutine()-before, before)
}

// TestCoarseTimerFollowsAFakeClock: in a testing/synctest bubble a coarse Timer ends each wait
// exactly at its deadline on the bubble's clock, the µs-short ones included (a Timer that
// yielded through them would never see the clock move), and a cancel still ends a wait.
func TestCoarseTimerFollowsAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewCoarseTimer()
		defer tm.Close()
		for _, wait := range []time.Duration{time.Microsecond, 20 * time.Microsecond, 200 * time.Microsecond, time.Hour} {
			deadline := time.Now().Add(wait)
			if err := tm.SleepUntil(context.Background(), deadline); err != nil {
				t.Fatalf("wait %s: %v", wait, err)
			}
			if now := time.Now(); !now.Equal(deadline) {
				t.Errorf("wait %s ended %v off its deadline", wait, now.Sub(deadline))
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Minute, cancel)
		start := time.Now()
		if err := tm.SleepUntil(ctx, start.Add(time.Hour)); !errors.Is(err, context.Canceled) || time.Since(start) != time.Minute {
			t.Errorf("cancelled after a minute: %v after %v", err, time.Since(start))
		}
	})
}

// TestEarlyWakeUpLearnsItsQuantile feeds a Timer's learning wake-up latencies spread evenly
// over 0–400 µs: a short wait's early wake-up settles near their median (capped at
// maxEarly), a long wait's near their 98th percentile (392 µs, give or take its step up of
// 98 µs; within its cap, 1% of the wait); a Timer that learned on long waits then follows
// short ones down to their median.
func TestEarlyWakeUpLearnsItsQuantile(t *testing.T) {
	latencies := func(i int) time.Duration { return time.Duration(i*7919%401) * time.Microsecond }
	for _, c := range []struct {
		name     string
		wait     time.Duration
		min, max time.Duration
	}{
		{"short wait", time.Millisecond, maxEarly, maxEarly},
		{"long wait", 100 * time.Millisecond, 300 * time.Microsecond, 500 * time.Microsecond},
		{"long wait, capped", 20 * time.Millisecond, 200 * time.Microsecond, 200 * time.Microsecond},
	} {
		var tm Timer
		limit := earlyCap(c.wait)
		for i := range 5000 {
			tm.learn(latencies(i), limit)
		}
		if tm.early < c.min || tm.early > c.max {
			t.Errorf("%s: learned %s early, want %s–%s", c.name, tm.early, c.min, c.max)
		}
	}
	var tm Timer
	for i := range 5000 {
		tm.learn(latencies(i), earlyCap(100*time.Millisecond))
	}
	for i := range 1000 {
		tm.learn(latencies(i)/10, earlyCap(time.Millisecond))
	}
	if tm.early > 30*time.Microsecond {
		t.Errorf("short waits after long ones: learned %s early, want their median (about 20 µs)", tm.early)
	}
}
