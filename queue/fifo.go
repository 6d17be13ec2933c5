package queue

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A fifo chunk holds about chunkBytes of entries (between minChunk and maxChunk of them, and
// no more than the worker's share of the capacity): large enough that the worker takes its
// records a run at a time, small enough that memory follows the records held.
const (
	chunkBytes = 16 << 10
	minChunk   = 16
	maxChunk   = 1024
)

// fifo is one worker's records in arrival order: a list of fixed-size chunks, allocated as
// records arrive and given up once read, so that its memory follows the records it holds
// (bounded by the queue's capacity, Queue.reserve), not the capacity itself.
//
// Producers take no lock: a push claims the next slot of the tail chunk with an atomic add,
// writes its entry and marks the slot ready; the producer that claims the middle slot of a
// chunk links the next chunk, so a full tail rarely has none yet (producers that find it
// missing race to link one; one wins). The worker, the only reader, takes ready slots in
// order and stops at the first not yet written. A lock here would be taken by every Enqueue:
// with thousands of producers on a few cores its waiters queue up behind a descheduled holder,
// and enqueue's tail latency grows to many milliseconds.
type fifo[T any] struct {
	tail atomic.Pointer[chunk[T]] // where producers append; nil once dropped
	size int                      // slots per chunk

	// n counts the entries pushed (ready) and not yet taken; wakeAt is how many the fifo must
	// hold before a push wakes the worker (1 while it is idle, the rest of a batch while it
	// naps), 0 while it does not wait. A push adds to n before it reads wakeAt, and wait sets
	// wakeAt before it reads n, so a push and a wait cannot miss each other.
	n      atomic.Int64
	wakeAt atomic.Int64

	head *chunk[T] // owned by the worker: the chunk it reads
	read int       // owned by the worker: slots of head already taken
}

type chunk[T any] struct {
	s       []slot[T]
	claimed atomic.Int64 // slots handed out to producers (may run past len(s))
	next    atomic.Pointer[chunk[T]]
}

type slot[T any] struct {
	e     entry[T]
	ready atomic.Bool
}

// newFifo returns an empty fifo for a worker whose share of the capacity is share records.
func newFifo[T any](share int) *fifo[T] {
	size := max(minChunk, chunkBytes/int(unsafe.Sizeof(slot[T]{})))
	f := &fifo[T]{size: max(1, min(size, maxChunk, share))}
	f.head = f.newChunk()
	f.tail.Store(f.head)
	return f
}

func (f *fifo[T]) newChunk() *chunk[T] { return &chunk[T]{s: make([]slot[T], f.size)} }

// push appends e and reports whether the worker waits for what the fifo holds now.
func (f *fifo[T]) push(e entry[T]) (wake bool) {
	for {
		t := f.tail.Load()
		i := int(t.claimed.Add(1) - 1)
		if i < len(t.s) {
			if i == len(t.s)/2 {
				f.linkNext(t) // ahead of need: the producer that fills t finds it there
			}
			t.s[i].e = e
			t.s[i].ready.Store(true)
			n := f.n.Add(1)
			w := f.wakeAt.Load()
			return w > 0 && n >= w
		}
		f.tail.CompareAndSwap(t, f.linkNext(t)) // t is full: move the tail on
	}
}

// linkNext returns the chunk after t, linking a new one if there is none yet.
func (f *fifo[T]) linkNext(t *chunk[T]) *chunk[T] {
	if nx := t.next.Load(); nx != nil {
		return nx
	}
	c := f.newChunk()
	if t.next.CompareAndSwap(nil, c) {
		return c
	}
	return t.next.Load()
}

// wait sets what the worker waits for (0: nothing) and reports whether the fifo already
// holds it.
func (f *fifo[T]) wait(need int) (ready bool) {
	f.wakeAt.Store(int64(need))
	return f.n.Load() >= int64(need)
}

// holds returns the number of entries pushed and not yet taken.
func (f *fifo[T]) holds() int { return int(f.n.Load()) }

// take appends up to limit ready entries to dst, oldest first, and returns it. Called by the
// worker only.
func (f *fifo[T]) take(dst []entry[T], limit int) []entry[T] {
	h := f.head
	for h != nil && limit > 0 {
		if f.read == len(h.s) {
			nx := h.next.Load()
			if nx == nil {
				return dst // nothing can have been pushed past h yet
			}
			h, f.head, f.read = nx, nx, 0 // h is given up: every slot of it was taken
			continue
		}
		start := f.read
		end := start
		for end < len(h.s) && end-start < limit && h.s[end].ready.Load() {
			end++
		}
		if end == start {
			if f.n.Load() > 0 {
				// A producer claimed this slot and has not written it yet, while a later one
				// has: let it run rather than spin.
				runtime.Gosched()
			}
			return dst
		}
		for i := start; i < end; i++ {
			dst = append(dst, h.s[i].e)
			h.s[i].e = entry[T]{} // drop the reference, so written records can be collected
		}
		f.read = end
		f.n.Add(int64(start - end))
		limit -= end - start
	}
	return dst
}

// drop empties the fifo and gives its chunks up; it returns how many entries it held. Called
// by the worker once no producer can push any more.
func (f *fifo[T]) drop() int64 {
	n := f.n.Swap(0)
	f.head, f.read = nil, 0
	f.tail.Store(nil)
	return n
}
