package queue

import (
	"sync"
	"testing"
)

// TestFifo: entries come out in order across chunks, whatever the sizes taken; a chunk read
// to the end is given up, and an emptied fifo holds no entry.
func TestFifo(t *testing.T) {
	f := newFifo[int](4)
	next, want := 0, 0
	push := func(k int) {
		for range k {
			f.push(entry[int]{rec: next})
			next++
		}
	}
	take := func(limit, expect int) {
		t.Helper()
		got := f.take(nil, limit)
		if len(got) != expect {
			t.Fatalf("take(%d) got %d entries, want %d", limit, len(got), expect)
		}
		for _, e := range got {
			if e.rec != want {
				t.Fatalf("got record %d, want %d", e.rec, want)
			}
			want++
		}
		if n := f.holds(); n != next-want {
			t.Fatalf("n = %d, want %d", n, next-want)
		}
	}
	push(10) // chunks of 4: 4, 4, 2
	first := f.head
	take(3, 3)
	take(3, 3) // crosses into the second chunk; the first is given up
	if f.head == first {
		t.Fatal("the worker still reads the first chunk after taking all of it")
	}
	push(5)
	take(100, 9)
	take(100, 0)
	push(1)
	take(1, 1)
	push(2)
	if n := f.drop(); n != 2 || f.head != nil || f.tail.Load() != nil || f.holds() != 0 {
		t.Fatalf("drop returned %d, fifo still holds chunks or a count", n)
	}
}

// TestFifoConcurrentProducers: many producers at once, one reader: every entry comes out once,
// and each producer's entries in the order it pushed them (what per-slot order rests on).
func TestFifoConcurrentProducers(t *testing.T) {
	const producers, each = 16, 5000
	f := newFifo[int](64)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				f.push(entry[int]{rec: p*each + i})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := make([]int, producers)
	for i := range last {
		last[i] = -1
	}
	got, finished := 0, false
	for got < producers*each {
		if !finished {
			select {
			case <-done:
				finished = true
			default:
			}
		}
		batch := f.take(nil, 100)
		if len(batch) == 0 && finished && f.holds() == 0 {
			break
		}
		for _, e := range batch {
			p, i := e.rec/each, e.rec%each
			if i <= last[p] {
				t.Fatalf("producer %d: entry %d after %d", p, i, last[p])
			}
			last[p] = i
			got++
		}
	}
	if got != producers*each || f.holds() != 0 {
		t.Fatalf("took %d of %d entries, %d left", got, producers*each, f.holds())
	}
}

// TestClosedQueueHoldsNoRecords: a queue kept for its metrics after Close (as the engine does
// until its report is written) holds no chunk of records.
func TestClosedQueueHoldsNoRecords(t *testing.T) {
	q := newTestQueue(t, &fakeFlusher{}, Options[int, rec]{Workers: 2, Capacity: 5000, FullPolicy: PolicyBlock})
	q.Pause()
	for i := range 4000 {
		if _, err := q.Enqueue(t.Context(), rec{Slot: i % 7, First: i, Last: i, Sum: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, w := range q.workers {
		if w.in.head != nil || w.in.tail.Load() != nil || w.batch != nil {
			t.Errorf("worker %d still holds records' memory after Close", i)
		}
	}
	if m := q.Metrics(); m.FlushedTotal != 4000 || m.EnqueuedTotal != m.Accounted() {
		t.Errorf("after Close: %+v", m)
	}
}
