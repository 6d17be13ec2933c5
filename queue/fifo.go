package queue

import (
	"sync"
	"unsafe"
)

// A fifo chunk holds about chunkBytes of entries (between minChunk and maxChunk of them, and
// no more than the worker's share of the capacity): small enough that the producer which
// allocates one, under the worker's lock, holds the lock only briefly (a large allocation
// zeroes its memory and may assist the GC, while thousands of producers wait), large enough that
// the worker takes its records a run at a time.
const (
	chunkBytes = 16 << 10
	minChunk   = 16
	maxChunk   = 1024
)

// fifo is one worker's records in arrival order: a list of fixed-size chunks, allocated as
// records arrive and given up once read, so that its memory follows the records it holds
// (bounded by the queue's capacity, Queue.reserve), not the capacity itself. Producers append
// under mu; the worker, its only reader, copies out without mu the entries it saw written
// under mu: producers only ever write past them.
type fifo[T any] struct {
	mu         sync.Mutex
	head, tail *chunk[T] // nil when empty; only the tail is ever partly written
	spare      *chunk[T] // one chunk read to the end, kept for the next
	size       int       // entries per chunk
	n          int       // entries pushed and not yet taken
	// wakeAt is how many entries the fifo must hold before a push wakes the worker (1 while
	// it is idle, the rest of a batch while it naps); 0 while it does not wait.
	wakeAt int

	read int // owned by the worker: entries of head already copied out
}

type chunk[T any] struct {
	e       []entry[T]
	written int // guarded by fifo.mu
	next    *chunk[T]
}

// newFifo returns an empty fifo for a worker whose share of the capacity is share records.
func newFifo[T any](share int) *fifo[T] {
	size := max(minChunk, chunkBytes/int(unsafe.Sizeof(entry[T]{})))
	return &fifo[T]{size: max(1, min(size, maxChunk, share))}
}

// push appends e and reports whether the worker waits for what the fifo holds now.
func (f *fifo[T]) push(e entry[T]) (wake bool) {
	f.mu.Lock()
	t := f.tail
	if t == nil || t.written == len(t.e) {
		t = f.newChunk()
		if f.tail == nil {
			f.head = t
		} else {
			f.tail.next = t
		}
		f.tail = t
	}
	t.e[t.written] = e
	t.written++
	f.n++
	wake = f.wakeAt > 0 && f.n >= f.wakeAt
	f.mu.Unlock()
	return wake
}

// wait sets what the worker waits for (0: nothing) and reports whether the fifo already
// holds it. Under mu, a push and a wait cannot miss each other.
func (f *fifo[T]) wait(need int) (ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakeAt = need
	return f.n >= need
}

// holds returns the number of entries not yet taken.
func (f *fifo[T]) holds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *fifo[T]) newChunk() *chunk[T] {
	if c := f.spare; c != nil {
		f.spare = nil
		return c
	}
	return &chunk[T]{e: make([]entry[T], f.size)}
}

// take appends up to limit entries to dst, oldest first, and returns it. Called by the worker
// only.
func (f *fifo[T]) take(dst []entry[T], limit int) []entry[T] {
	for limit > 0 {
		f.mu.Lock()
		h := f.head
		if h == nil {
			f.mu.Unlock()
			return dst
		}
		written := h.written
		if f.read == written {
			if written < len(h.e) { // the tail, read up to where producers are: start it over
				h.written, f.read = 0, 0
				f.mu.Unlock()
				return dst
			}
			f.head, h.next, h.written, f.read = h.next, nil, 0, 0
			if f.head == nil {
				f.tail = nil
			}
			f.spare = h
			f.mu.Unlock()
			continue
		}
		got := h.e[f.read:min(written, f.read+limit)]
		f.n -= len(got)
		f.mu.Unlock()
		dst = append(dst, got...)
		clear(got) // drop references, so written records can be collected
		f.read += len(got)
		limit -= len(got)
	}
	return dst
}

// drop empties the fifo and gives its chunks up; it returns how many entries it held. Called
// by the worker once no producer can push any more.
func (f *fifo[T]) drop() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.n
	f.head, f.tail, f.spare, f.read, f.n = nil, nil, nil, 0, 0
	return int64(n)
}
