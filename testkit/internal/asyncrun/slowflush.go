package asyncrun

import (
	"context"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/internal/timing"
)

// slowFlusher is the hidden --debug-slow-flush-pct: each flush of the in-memory queue's
// workers takes pct% longer, as a slower build's would. A plain flush (BEGIN, the writes,
// COMMIT) waits pct% of its time after COMMIT; a staged one (the queue pipelines: the next
// batch is written while the previous commits) waits pct% of its writing time once written,
// before its COMMIT, because that is what sets a pipelined worker's pace: a wait after the
// COMMIT would overlap the next batch and hide. It exists so that `baseline ab` can be shown a
// build that is slower by a known amount; it changes timing only, never what is written. The
// waits are precise (timing.Sleep), not rounded up to Go's millisecond.
type slowFlusher[T any] struct {
	queue.Flusher[T]
	pct int
}

// slowFlushes wraps f when pct > 0; a StagedFlusher stays one (the queue pipelines with it),
// its batches waiting after their COMMIT as Flush's do.
func slowFlushes[T any](f queue.Flusher[T], pct int) queue.Flusher[T] {
	if pct <= 0 {
		return f
	}
	if _, ok := f.(queue.StagedFlusher[T]); ok {
		return slowStagedFlusher[T]{slowFlusher[T]{Flusher: f, pct: pct}}
	}
	return slowFlusher[T]{Flusher: f, pct: pct}
}

type slowStagedFlusher[T any] struct{ slowFlusher[T] }

func (s slowStagedFlusher[T]) Stage(ctx context.Context, records []T) (queue.Staged, error) {
	start := time.Now()
	st, err := s.Flusher.(queue.StagedFlusher[T]).Stage(ctx, records)
	if err != nil {
		return nil, err
	}
	wait(ctx, time.Since(start)*time.Duration(s.pct)/100)
	return st, nil
}

func wait(ctx context.Context, d time.Duration) { _ = timing.Sleep(ctx, d) }

func (s slowFlusher[T]) Flush(ctx context.Context, records []T) (queue.FlushResult, error) {
	start := time.Now()
	res, err := s.Flusher.Flush(ctx, records)
	wait(ctx, time.Since(start)*time.Duration(s.pct)/100)
	return res, err
}
