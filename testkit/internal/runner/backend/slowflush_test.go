package backend

import (
	"context"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
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

// A slowed staged flush works pct% of its writing time more before it returns from Stage,
// where a pipelined worker waits for it (work after COMMIT would overlap the next batch and
// hide), and the extra time is processor work, as a slower build's is, not a wait (a wait
// gives the processor to the database's other writers: slowflush.go). The inner stage sleeps,
// so nearly all the processor time the call takes is the slowdown's.
func TestSlowStagedFlushesWorkBeforeTheyReturn(t *testing.T) {
	f, ok := slowFlushes[int](stager{}, 50).(queue.StagedFlusher[int])
	if !ok {
		t.Fatal("a slowed StagedFlusher is not one")
	}
	cpu0, start := timing.CPUTime(), time.Now()
	st, err := f.Stage(context.Background(), []int{1})
	if took := time.Since(start); err != nil || took < 30*time.Millisecond {
		t.Fatalf("a 20 ms stage slowed by 50%% returned after %v (%v), want ≥ 30 ms", took, err)
	}
	if cpu := timing.CPUTime() - cpu0; cpu < 8*time.Millisecond {
		t.Errorf("a 20 ms stage slowed by 50%% took %v of processor time, want ≥ 8 ms (10 ms of work)", cpu)
	}
	if res, err := st.Commit(context.Background()); err != nil || res.SQLOps != 1 {
		t.Errorf("commit: %+v, %v; want the inner result", res, err)
	}
}
