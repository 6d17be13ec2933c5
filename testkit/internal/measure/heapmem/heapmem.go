// Package heapmem owns this process's own heap as a run meets it: warming it before a run's
// measured window (Want, Warm), so that the window does not pay the process's first touches of
// its pages, and keeping the heap profile of its peak (ProfilePeak, --mem-profile). It knows
// nothing of runs, suites or databases; the engine calls it.
package heapmem

import (
	"os"
	"runtime"
	"runtime/metrics"

	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// Warm has the process hold, before the run's measured window, at least want bytes of
// heap memory it has already touched, and returns how many bytes it touched for that. A Go
// process takes its memory from the system a page at a time as its heap grows, and the first
// touch of each page is a page fault: on a virtual machine a dear one (11 µs a page), paid by
// the load's and the queue's goroutines inside the window, on processors the database needs
// too, and a process's first run persists markedly less than the next (docs/overhead.md has
// the figures). A service that has been running has its heap; the kit's figures should not
// carry its first-run cost. The memory touched is let go at once (a garbage collection before
// the window frees it) and the process keeps it: its peak resident memory rises by about what
// was touched, not by what the run would have faulted in itself (docs/overhead.md).
// The first run of a process gains the most; a later one finds most of it still held, unless
// the runtime returned it to the system meanwhile.
func Warm(want uint64) (done uint64) {
	have := touched()
	if have >= want {
		return 0
	}
	page := os.Getpagesize()
	chunks := make([][]byte, 0, (want-have)/chunk+1)
	for done < want-have {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		chunks = append(chunks, b)
		done += chunk
	}
	runtime.KeepAlive(chunks) // held until every chunk is touched, so that the heap grows by all of them
	runtime.GC()
	return done
}

// chunk is the size of Warm's allocations: large objects, each on pages of its own,
// which the heap hands to any allocation once they are freed.
const chunk = 1 << 20

// touched is how much of its heap the process holds with its pages touched: what the
// runtime counts as backed (backed), but no more than the process's resident anonymous
// memory (monitor.Resident). The runtime counts an object's pages as backed from its
// allocation, and a large object's fresh pages are not touched until written: a delaying
// proxy's histograms (testkit/servers/netdelay: 64 of them, 12 MB, mostly zeros), counted as
// touched, would have a run at --db-rtt 0 touch 12 MB less beforehand and pay for them in its
// window (docs/overhead.md).
func touched() uint64 {
	n := backed()
	if _, anon, ok := monitor.Resident(); ok && uint64(anon) < n {
		return uint64(anon)
	}
	return n
}

// backed is the heap memory the runtime counts as backed: its objects, the unused room in
// their spans, the goroutines' stacks, and the free pages not yet returned to the system.
func backed() uint64 {
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

// Want is the heap a run of the given shape is given touched before its window (Warm):
// a base for the engine's own state, plus room for what the requests leave in the heap while
// they are in flight or queued and for the workers' stacks, up to maxWant. Sized on the
// counter suite's async-compact, each run the first of its process (docs/overhead.md): at
// 20,000 requests × 1,000 workers 40 MB touched beforehand gains nothing and 80 MB the most.
// This asks for 79 MB at 20,000 × 1,000, maxWant above it, and 17 MB (nothing a process does
// not hold anyway) at 200 × 20. A run bounded by time counts its workers only.
func Want(concurrency int, requests int64) uint64 {
	want := 16<<20 + uint64(max(requests, 0))*3<<10 + uint64(max(concurrency, 0))<<12
	return min(want, maxWant)
}

// maxWant caps Want: what it touches the process holds (its peak resident memory rises by
// about that much; docs/overhead.md), and 80 MB is where the first run's gain at 20,000 ×
// 1,000 stops.
const maxWant = 80 << 20
