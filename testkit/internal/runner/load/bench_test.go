package load

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
)

// BenchmarkRunNoop measures the engine's own cost per request (ns/op is per request): index
// hand-out, two clock reads, the latency shard, the outcome byte and the live counters, with
// the run's fixed cost (histogram shards, goroutines) spread over b.N requests.
func BenchmarkRunNoop(b *testing.B) {
	for _, workers := range []int{1, 6000} {
		b.Run(fmt.Sprintf("concurrency=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			res, err := Run(context.Background(), Config{Concurrency: workers, Requests: int64(b.N)}, noop)
			if err != nil {
				b.Fatal(err)
			}
			if res.Completed != int64(b.N) {
				b.Fatalf("completed %d of %d", res.Completed, b.N)
			}
		})
	}
}

// BenchmarkRunYield is BenchmarkRunNoop with an op that yields its goroutine, as an op waiting
// on the network does, so that all the workers take turns: it adds the Go scheduler's cost
// of switching among 6000 goroutines, which any real op pays too.
func BenchmarkRunYield(b *testing.B) {
	yield := func(context.Context, *Request) error { runtime.Gosched(); return nil }
	for _, workers := range []int{1, 6000} {
		b.Run(fmt.Sprintf("concurrency=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			res, err := Run(context.Background(), Config{Concurrency: workers, Requests: int64(b.N)}, yield)
			if err != nil {
				b.Fatal(err)
			}
			if res.Completed != int64(b.N) {
				b.Fatalf("completed %d of %d", res.Completed, b.N)
			}
		})
	}
}

// BenchmarkScheduleCost measures the open loop's own cost per scheduled request (ns/op and
// allocs/op are per request): a schedule far faster than the workers can serve, so the
// dispatcher never waits and every arrival goes through the channel to a no-op request.
func BenchmarkScheduleCost(b *testing.B) {
	for _, arrivals := range []Arrivals{Poisson, Uniform} {
		b.Run(string(arrivals), func(b *testing.B) {
			b.ReportAllocs()
			res, err := Run(context.Background(), Config{Concurrency: 64, Requests: int64(b.N), Rate: 1e9, Arrivals: arrivals}, noop)
			if err != nil {
				b.Fatal(err)
			}
			if res.Completed != int64(b.N) {
				b.Fatalf("completed %d of %d", res.Completed, b.N)
			}
		})
	}
}

// BenchmarkScheduleOffer100k offers 100,000 no-op requests per second for a second per
// iteration, through 64 workers, and reports what fraction started more than LateAfter behind
// their intended start (late_%), the schedule lag's p50 and p99, the rate achieved and the
// process's CPU per wall second in the middle of the run (cpu_%core, 100 = one core; the
// no-op workers and the runtime included, so an upper bound on the dispatcher's): the
// scheduler must hold the rate on its own. ns/op is the wall time of one run; read the
// custom metrics.
func BenchmarkScheduleOffer100k(b *testing.B) { benchmarkOffer(b, 100_000, time.Second) }

// BenchmarkScheduleOffer10k is BenchmarkScheduleOffer100k at 10,000/s.
func BenchmarkScheduleOffer10k(b *testing.B) { benchmarkOffer(b, 10_000, time.Second) }

// BenchmarkScheduleOffer1k is BenchmarkScheduleOffer100k at 1,000/s, where the dispatcher
// sleeps between most arrivals.
func BenchmarkScheduleOffer1k(b *testing.B) { benchmarkOffer(b, 1_000, time.Second) }

// BenchmarkScheduleOffer10 is BenchmarkScheduleOffer100k at 10/s, ten seconds a run (100
// arrivals): give it -benchtime 3x or more for a p99 worth reading.
func BenchmarkScheduleOffer10(b *testing.B) { benchmarkOffer(b, 10, 10*time.Second) }

func benchmarkOffer(b *testing.B, rate float64, run time.Duration) {
	var late, sent, skipped, unsent int64
	var achieved float64
	var cpu, wall time.Duration
	lag := hist.New()
	for b.Loop() {
		steady := make(chan [2]time.Duration, 1)
		go func() { steady <- steadyCPU(run) }()
		res, err := Run(context.Background(), Config{Concurrency: 64, Duration: run, Rate: rate}, noop)
		if err != nil {
			b.Fatal(err)
		}
		s := <-steady
		cpu, wall = cpu+s[0], wall+s[1]
		late += res.OpenLoop.Late
		sent += res.Completed + res.Failed
		skipped += res.OpenLoop.Skipped
		unsent += res.OpenLoop.Unsent
		achieved += res.AchievedRPS()
		lag.Merge(res.OpenLoop.ScheduleLag)
	}
	b.ReportMetric(float64(lag.ValueAtQuantile(50).Microseconds()), "lag_p50_µs")
	b.ReportMetric(float64(lag.ValueAtQuantile(99).Microseconds()), "lag_p99_µs")
	b.ReportMetric(100*float64(late)/float64(max(sent, 1)), "late_%")
	b.ReportMetric(100*float64(unsent+skipped)/float64(max(sent+unsent+skipped, 1)), "unsent_%")
	b.ReportMetric(achieved/float64(b.N), "achieved_rps")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu_%core")
}

// steadyCPU is the process's CPU time and the wall time over the middle of a run of the
// given length (from a fifth to four fifths in): the schedule's own cost, without the run's
// set-up and the merging of its histograms at the end.
func steadyCPU(run time.Duration) [2]time.Duration {
	time.Sleep(run / 5)
	cpu0, wall0 := timing.CPUTime(), time.Now()
	time.Sleep(run * 3 / 5)
	return [2]time.Duration{timing.CPUTime() - cpu0, time.Since(wall0)}
}
