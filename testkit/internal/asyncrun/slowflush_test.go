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

// stager stages in 20 ms and commits at once.
type stager struct{ queue.Flusher[int] }

func (stager) Stage(ctx context.Context, records []int) (queue.Staged, error) {
	time.Sleep(20 * time.Millisecond)
	return staged{}, nil
}

type staged struct{}

func (staged) Commit(context.Context) (queue.FlushResult, error) {
	return queue.FlushResult{SQLOps: 1}, nil
}
func (staged) Rollback(context.Context) {}

// A slowed staged flush waits pct% of its writing time before it returns from Stage, where a
// pipelined worker waits for it (a wait after COMMIT would overlap the next batch and hide).
func TestSlowStagedFlushesWaitBeforeTheyReturn(t *testing.T) {
	f, ok := slowFlushes[int](stager{}, 50).(queue.StagedFlusher[int])
	if !ok {
		t.Fatal("a slowed StagedFlusher is not one")
	}
	start := time.Now()
	st, err := f.Stage(context.Background(), []int{1})
	if took := time.Since(start); err != nil || took < 30*time.Millisecond {
		t.Fatalf("a 20 ms stage slowed by 50%% returned after %v (%v), want ≥ 30 ms", took, err)
	}
	if res, err := st.Commit(context.Background()); err != nil || res.SQLOps != 1 {
		t.Errorf("commit: %+v, %v; want the inner result", res, err)
	}
}
