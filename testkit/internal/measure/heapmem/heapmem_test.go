package heapmem

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
)

// TestWarmHeapTouchesWhatIsMissing: Warm touches the heap a run is to find held, and
// nothing when the process holds that much already.
func TestWarmHeapTouchesWhatIsMissing(t *testing.T) {
	want := backed() + 32<<20
	if got := Warm(want); got < 32<<20 {
		t.Errorf("touched %d MB to hold 32 MB more, want at least 32", got>>20)
	}
	if got := Warm(touched() / 2); got != 0 {
		t.Errorf("touched %d MB when the process held enough", got>>20)
	}
}

// TestWarmHeapCountsOnlyTouchedPages: a large object the process has not written to is
// counted by the runtime as backed heap but is not resident; Warm does not take it for
// touched memory (a proxy's histograms did that). It runs in a process of its own: in one
// whose heap has grown and shrunk, the runtime zeroes a new large object, which touches it.
func TestWarmHeapCountsOnlyTouchedPages(t *testing.T) {
	if os.Getenv("HOTSPOTKIT_WARM_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWarmHeapCountsOnlyTouchedPages$", "-test.v")
		cmd.Env = append(os.Environ(), "HOTSPOTKIT_WARM_CHILD=1")
		out, err := cmd.CombinedOutput()
		switch {
		case err != nil:
			t.Errorf("%v\n%s", err, out)
		case bytes.Contains(out, []byte("--- SKIP")):
			t.Skipf("%s", out)
		}
		return
	}
	_, anon0, ok := monitor.Resident()
	if !ok {
		t.Skip("no /proc/self/statm")
	}
	rss0 := uint64(anon0)
	untouched := make([]byte, 256<<20)
	_, anon, _ := monitor.Resident()
	rss := uint64(anon)
	if rss > rss0+64<<20 {
		t.Skipf("the runtime zeroed the allocation (resident memory %d → %d MB): nothing untouched to test with", rss0>>20, rss>>20)
	}
	if got := Warm(rss + 32<<20); got < 30<<20 {
		t.Errorf("touched %d MB to hold 32 MB more than is resident, beside 256 MB allocated and never written; want at least 30", got>>20)
	}
	runtime.KeepAlive(untouched)
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
		{6000, 60000, maxWant, maxWant},
		{64, 0, 16 << 20, 20 << 20}, // bounded by time
	} {
		if got := Want(c.concurrency, c.requests); got < c.min || got > c.max {
			t.Errorf("%d requests × %d workers: %d MB, want %d–%d", c.requests, c.concurrency, got>>20, c.min>>20, c.max>>20)
		}
	}
}
