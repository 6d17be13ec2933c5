package engine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/testkit/internal/monitor"
)

// warmPools opens, before the run's measured window and its database figures begin, the
// connections the run will use: the load's pool up to the connections its workers can hold at
// once (none in a consumer process, which runs no load), and the queue workers' pool whole. A
// service's pools are warm; a connection's set-up (a server process forked, authenticated, its
// catalogs read) is not the write path's cost, and pgbench leaves it out of its rate too
// ("without initial connection time"). Opened inside the window, it would weigh on the first
// requests and on a short run's rate, by more on a busier machine.
func (e *engine) warmPools(ctx context.Context, r *run) error {
	if sr := r.Backend.StreamOf(); sr == nil || sr.Role != redisq.RoleConsumer {
		if err := warm(ctx, r.Pool, min(int(r.Pool.Config().MaxConns), r.concurrency)); err != nil {
			return fmt.Errorf("opening the load's connections: %w", err)
		}
	}
	if q := r.Backend; q != nil && q.FlushPool != nil {
		if err := warm(ctx, q.FlushPool, int(q.FlushPool.Config().MaxConns)); err != nil {
			return fmt.Errorf("opening the queue workers' connections: %w", err)
		}
	}
	return nil
}

// warm has pool hold n connections at once (opened side by side), then gives them back idle.
func warm(ctx context.Context, pool *pgxpool.Pool, n int) error {
	conns := make([]*pgxpool.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { conns[i], errs[i] = pool.Acquire(ctx) })
	}
	wg.Wait()
	var first error
	for i, c := range conns {
		if c != nil {
			c.Release()
		} else if first == nil {
			first = errs[i]
		}
	}
	return first
}

// warmHeap has the process hold, before the run's measured window, at least want bytes of
// heap memory it has already touched, and returns how many bytes it touched for that. A Go
// process takes its memory from the system a page at a time as its heap grows, and the first
// touch of each page is a page fault: on a virtual machine a dear one (11 µs a page measured
// here), paid by the load's and the queue's goroutines inside the window, on processors the
// database needs too. A process's first run of async-compact at 20,000 × 1,000 persisted
// 70.5k records/s at the median without this and 95.3k with it (eight runs each,
// docs/overhead.md). A service that has been running has its heap; the kit's figures should
// not carry its first-run cost. The memory touched is let go at once (a garbage collection
// before the window frees it) and the process keeps it: its peak resident memory rises by
// about what was touched, not by what the run would have faulted in itself (docs/overhead.md).
// The first run of a process gains the most; a later one finds most of it still held, unless
// the runtime returned it to the system meanwhile.
func warmHeap(want uint64) (touched uint64) {
	have := heapTouched()
	if have >= want {
		return 0
	}
	page := os.Getpagesize()
	chunks := make([][]byte, 0, (want-have)/heapChunk+1)
	for touched < want-have {
		b := make([]byte, heapChunk)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		chunks = append(chunks, b)
		touched += heapChunk
	}
	runtime.KeepAlive(chunks) // held until every chunk is touched, so that the heap grows by all of them
	runtime.GC()
	return touched
}

// heapChunk is the size of warmHeap's allocations: large objects, each on pages of its own,
// which the heap hands to any allocation once they are freed.
const heapChunk = 1 << 20

// heapTouched is how much of its heap the process holds with its pages touched: what the
// runtime counts as backed (heapBacked), but no more than the process's resident anonymous
// memory (monitor.Resident). The runtime counts an object's pages as backed from its
// allocation, and a large object's fresh pages are not touched until written: a delaying
// proxy's histograms (testkit/internal/netdelay: 64 of them, 12 MB, mostly zeros) made a run
// at --db-rtt 0 touch 12 MB less beforehand, and pay for them in its window
// (docs/overhead.md).
func heapTouched() uint64 {
	backed := heapBacked()
	if _, anon, ok := monitor.Resident(); ok && uint64(anon) < backed {
		return uint64(anon)
	}
	return backed
}

// heapBacked is the heap memory the runtime counts as backed: its objects, the unused room in
// their spans, the goroutines' stacks, and the free pages not yet returned to the system.
func heapBacked() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}

// heapWant is the heap a run of the given shape is given touched before its window (warmHeap):
// a base for the engine's own state, plus room for what the requests leave in the heap while
// they are in flight or queued and for the workers' stacks, up to maxHeapWant. Measured on the
// counter suite's async-compact, each run the first of its process, six to eight runs a side
// (docs/overhead.md): at 20,000 requests × 1,000 workers 40 MB touched beforehand changed
// nothing, 80 MB raised the persisted rate's median from 62–68k to 95k records/s; at 60,000 ×
// 6,000, 80 MB raised it from 91k to 105k (100–200 MB no further). This asks for 79 MB at
// 20,000 × 1,000, maxHeapWant above it, and 17 MB (nothing a process does not hold anyway) at
// 200 × 20. A run bounded by time counts its workers only.
func heapWant(concurrency int, requests int64) uint64 {
	want := 16<<20 + uint64(max(requests, 0))*3<<10 + uint64(max(concurrency, 0))<<12
	return min(want, maxHeapWant)
}

// maxHeapWant caps heapWant: what it touches the process holds (its peak resident memory at
// 60,000 × 6,000 rose from 78–87 MB to 106–112 MB; a cap of 48 MB held as much), and beyond it
// a run gained no more.
const maxHeapWant = 80 << 20
