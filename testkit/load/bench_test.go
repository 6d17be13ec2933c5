package load

import (
	"context"
	"fmt"
	"runtime"
	"testing"
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
