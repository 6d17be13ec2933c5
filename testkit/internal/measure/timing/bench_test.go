package timing

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// benchRates are the wait rates the benchmarks run at: an open loop's ordinary rates and
// the 100k/s where gaps are ten microseconds.
var benchRates = []int{10, 1_000, 10_000, 100_000}

// BenchmarkSleepUntil waits on one Timer on a metronome of the given rate (deadline i is the
// start plus i periods, so a late wake-up shortens the next wait, as in a schedule) and
// reports how late each wait returned (p50, p99, max) and the process's CPU per wall second
// (cpu_%core: 100 is one core busy). "timer-noearly" is a Timer that does not wake early
// (maxEarly 0), "go" the same metronome on time.Sleep, for the comparison. An iteration is
// one wait: run 10/s with -benchtime 10s or more.
func BenchmarkSleepUntil(b *testing.B) {
	for _, rate := range benchRates {
		b.Run(fmt.Sprintf("timer/rate=%d", rate), func(b *testing.B) {
			metronome(b, rate, 1, nil)
		})
		b.Run(fmt.Sprintf("timer-noearly/rate=%d", rate), func(b *testing.B) {
			defer func(m time.Duration) { maxEarly = m }(maxEarly)
			maxEarly = 0
			metronome(b, rate, 1, nil)
		})
		b.Run(fmt.Sprintf("go/rate=%d", rate), func(b *testing.B) {
			metronome(b, rate, 1, goSleep)
		})
	}
}

func goSleep(_ context.Context, d time.Time) { time.Sleep(time.Until(d)) }

// BenchmarkSleepUntilWaiters is BenchmarkSleepUntil with the rate shared by 100 goroutines,
// each on its own Timer (a proxy with many connections).
func BenchmarkSleepUntilWaiters(b *testing.B) {
	for _, rate := range benchRates[1:] {
		b.Run(fmt.Sprintf("waiters=100/rate=%d", rate), func(b *testing.B) {
			metronome(b, rate, 100, nil)
		})
	}
}

// metronome runs b.N waits spread over waiters goroutines at rate waits a second in all,
// each through wait (nil: its own Timer), and reports lateness and CPU.
func metronome(b *testing.B, rate, waiters int, wait func(context.Context, time.Time)) {
	period := time.Second * time.Duration(waiters) / time.Duration(rate)
	ctx := context.Background()
	late := make([][]time.Duration, waiters)
	b.ResetTimer()
	cpu0, wall0 := CPUTime(), time.Now()
	var wg sync.WaitGroup
	for w := range waiters {
		n := b.N / waiters
		if w < b.N%waiters {
			n++
		}
		wg.Go(func() {
			sleep := wait
			if sleep == nil {
				tm := NewTimer()
				defer tm.Close()
				sleep = func(ctx context.Context, d time.Time) { _ = tm.SleepUntil(ctx, d) }
			}
			start := wall0.Add(period * time.Duration(w) / time.Duration(waiters))
			mine := make([]time.Duration, 0, n)
			for i := range n {
				deadline := start.Add(period * time.Duration(i+1))
				sleep(ctx, deadline)
				mine = append(mine, time.Since(deadline))
			}
			late[w] = mine
		})
	}
	wg.Wait()
	wall, cpu := time.Since(wall0), CPUTime()-cpu0
	b.StopTimer()
	all := slices.Concat(late...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e3 }
	var over int
	for _, l := range all {
		if l > time.Millisecond {
			over++
		}
	}
	b.ReportMetric(q(0.5), "late_p50_µs")
	b.ReportMetric(q(0.99), "late_p99_µs")
	b.ReportMetric(q(1), "late_max_µs")
	b.ReportMetric(100*float64(over)/float64(len(all)), "over1ms_%")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu_%core")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSleepUntilBusy is BenchmarkSleepUntil at 1,000/s while GOMAXPROCS goroutines
// keep every processor busy (each yields in a loop, so the run queues are never empty): the
// case where Go looks at its network poller, and so at a Timer's kernel timer, only from
// sysmon, while its own timers are checked on every scheduling.
func BenchmarkSleepUntilBusy(b *testing.B) {
	for _, kind := range []string{"timer", "go"} {
		b.Run(kind, func(b *testing.B) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
							runtime.Gosched()
						}
					}
				})
			}
			defer func() { close(stop); wg.Wait() }()
			var wait func(context.Context, time.Time)
			if kind == "go" {
				wait = goSleep
			}
			metronome(b, 1000, 1, wait)
		})
	}
}
