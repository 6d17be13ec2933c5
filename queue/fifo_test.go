package queue

import "testing"

// TestFifo: entries come out in order across chunks, whatever the sizes taken; a chunk read
// to the end is given up (one kept spare), and an emptied fifo holds no entry.
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
	take(3, 3)
	take(3, 3) // crosses into the second chunk; the first becomes the spare
	if f.spare == nil || f.head == f.tail {
		t.Fatalf("after reading the first chunk: spare %v, head==tail %v", f.spare != nil, f.head == f.tail)
	}
	push(5) // fills the third chunk and takes the spare
	if f.spare != nil {
		t.Fatal("the spare chunk was not reused")
	}
	take(100, 9)
	take(100, 0)
	push(1)
	take(1, 1)
	if f.head != f.tail || f.head.written != 0 && f.read != f.head.written {
		t.Fatalf("an emptied fifo should keep at most its tail chunk")
	}
	push(2)
	if n := f.drop(); n != 2 || f.head != nil || f.tail != nil || f.spare != nil || f.holds() != 0 {
		t.Fatalf("drop returned %d, fifo still holds chunks or a count", n)
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
		if w.in.head != nil || w.in.spare != nil || w.batch != nil {
			t.Errorf("worker %d still holds records' memory after Close", i)
		}
	}
	if m := q.Metrics(); m.FlushedTotal != 4000 || m.EnqueuedTotal != m.Accounted() {
		t.Errorf("after Close: %+v", m)
	}
}
