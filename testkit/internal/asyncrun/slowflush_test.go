package asyncrun

import (
	"context"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
)

// A slowed flush returns what the flush returned, after waiting at least pct% of its duration
// (a lower bound: never flaky on a busy machine); pct 0 leaves the flusher as it was.
func TestSlowFlushes(t *testing.T) {
	inner := queue.FlusherFunc[int](func(ctx context.Context, records []int) (queue.FlushResult, error) {
		time.Sleep(20 * time.Millisecond)
		return queue.FlushResult{SQLOps: len(records)}, nil
	})
	if _, wrapped := slowFlushes[int](inner, 0).(slowFlusher[int]); wrapped {
		t.Error("pct 0 wrapped the flusher")
	}
	start := time.Now()
	res, err := slowFlushes[int](inner, 50).Flush(context.Background(), []int{1, 2, 3})
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("a 20 ms flush slowed by 50%% took %v, want ≥ 30 ms", took)
	}
	if err != nil || res.SQLOps != 3 {
		t.Errorf("slowed flush returned %+v, %v; want the inner result", res, err)
	}
}
