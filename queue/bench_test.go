package queue

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/hotspotkit/hotspotkit/queue/internal/core"
	"time"
)

// benchRec is a typical hot-row delta: a slot and two counters.
type benchRec struct {
	Slot  int64
	Count int64
	Sum   int64
}

func benchKey(r benchRec) int64 { return r.Slot }

func benchMerge(p *benchRec, n benchRec) {
	p.Count += n.Count
	p.Sum += n.Sum
}

// discard commits instantly, so the benchmarks measure the queue, not a database.
var discard = FlusherFunc[benchRec](func(_ context.Context, recs []benchRec) (FlushResult, error) {
	return FlushResult{SQLOps: 1}, nil
})

func newBenchQueue(b *testing.B, compaction bool) *Queue[int64, benchRec] {
	b.Helper()
	q, err := New(discard, Options[int64, benchRec]{
		Key: benchKey, Merge: benchMerge, Compare: cmp.Compare[int64], Compaction: compaction,
		// Block, so a producer that outruns the workers waits instead of writing inline: the
		// steady state measured is the queue's, not the fallback's.
		FullPolicy: PolicyBlock,
	})
	if err != nil {
		b.Fatal(err)
	}
	return q
}

func closeBench(b *testing.B, q *Queue[int64, benchRec]) {
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		b.Fatal(err)
	}
	m := q.Metrics()
	if m.EnqueuedTotal != m.Accounted() {
		b.Fatalf("invariant broken: %+v", m)
	}
	if m.EnqueuedTotal > 0 {
		b.ReportMetric(float64(m.FlushSQLRecordsTotal)/float64(m.EnqueuedTotal), "sqlrecs/op")
	}
}

// BenchmarkEnqueue: one producer, 1024 hot slots, default options, instant flusher. Its
// first sub-benchmark is the floor the queue is measured against in the same run: a bare send
// of the same record on a buffered channel of the default capacity, drained by one consumer.
func BenchmarkEnqueue(b *testing.B) {
	b.Run("floor=channel-send", func(b *testing.B) {
		ch := make(chan benchRec, DefaultCapacity)
		done := make(chan int64)
		go func() {
			var n int64
			for r := range ch {
				n += r.Count
			}
			done <- n
		}()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			ch <- benchRec{Slot: int64(i & 1023), Count: 1, Sum: 3}
		}
		close(ch)
		if n := <-done; n != int64(b.N) {
			b.Fatalf("consumer received %d of %d", n, b.N)
		}
	})
	for _, compaction := range []bool{false, true} {
		b.Run(fmt.Sprintf("compaction=%v", compaction), func(b *testing.B) {
			q := newBenchQueue(b, compaction)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := q.Enqueue(ctx, benchRec{Slot: int64(i & 1023), Count: 1, Sum: 3}); err != nil {
					b.Fatal(err)
				}
			}
			closeBench(b, q)
		})
	}
}

// BenchmarkEnqueueParallel: GOMAXPROCS producers on the same 1024 hot slots.
func BenchmarkEnqueueParallel(b *testing.B) {
	for _, compaction := range []bool{false, true} {
		b.Run(fmt.Sprintf("compaction=%v", compaction), func(b *testing.B) {
			q := newBenchQueue(b, compaction)
			ctx := context.Background()
			var producer atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := producer.Add(1) * 7919
				for pb.Next() {
					i++
					if _, err := q.Enqueue(ctx, benchRec{Slot: i & 1023, Count: 1, Sum: 3}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			closeBench(b, q)
		})
	}
}

// BenchmarkCompact folds 1000 records into a few slots, as a worker does with a hot batch.
func BenchmarkCompact(b *testing.B) {
	for _, slots := range []int64{4, 64} {
		for _, sorted := range []bool{false, true} {
			b.Run(fmt.Sprintf("slots=%d/sorted=%v", slots, sorted), func(b *testing.B) {
				recs := make([]benchRec, 1000)
				for i := range recs {
					recs[i] = benchRec{Slot: (int64(i) * 7) % slots, Count: 1, Sum: int64(i)}
				}
				var compare func(a, b int64) int
				if sorted {
					compare = cmp.Compare[int64]
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if out := Compact(recs, benchKey, benchMerge, compare); int64(len(out)) != slots {
						b.Fatalf("got %d records, want %d", len(out), slots)
					}
				}
			})
		}
	}
}

// BenchmarkWorkerCompact is the worker's reusing path: no allocations once warm.
func BenchmarkWorkerCompact(b *testing.B) {
	src := make([]benchRec, 1000)
	for i := range src {
		src[i] = benchRec{Slot: int64(i*7) % 64, Count: 1, Sum: int64(i)}
	}
	c := core.NewCompactor(benchKey, benchMerge, cmp.Compare[int64])
	buf := make([]benchRec, 0, len(src))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		buf = c.Compact(append(buf[:0], src...))
	}
}
