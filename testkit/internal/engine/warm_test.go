package engine

import "testing"

// TestWarmHeapTouchesWhatIsMissing: warmHeap touches the heap a run is to find held, and
// nothing when the process holds that much already.
func TestWarmHeapTouchesWhatIsMissing(t *testing.T) {
	want := heapBacked() + 32<<20
	if got := warmHeap(want); got < 32<<20 {
		t.Errorf("touched %d MB to hold 32 MB more, want at least 32", got>>20)
	}
	if got := warmHeap(heapBacked()); got != 0 {
		t.Errorf("touched %d MB when the process held enough", got>>20)
	}
}

// TestHeapWantFollowsTheRunsShape: a small run asks for nothing a process does not hold, a
// run of 20,000 × 1,000 for about the 80 MB that measured best, a larger one no more than the
// cap.
func TestHeapWantFollowsTheRunsShape(t *testing.T) {
	for _, c := range []struct {
		concurrency int
		requests    int64
		min, max    uint64
	}{
		{20, 200, 16 << 20, 20 << 20},
		{1000, 20000, 70 << 20, 80 << 20},
		{6000, 60000, maxHeapWant, maxHeapWant},
		{64, 0, 16 << 20, 20 << 20}, // bounded by time
	} {
		if got := heapWant(c.concurrency, c.requests); got < c.min || got > c.max {
			t.Errorf("%d requests × %d workers: %d MB, want %d–%d", c.requests, c.concurrency, got>>20, c.min>>20, c.max>>20)
		}
	}
}
