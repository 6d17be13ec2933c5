package asyncrun

import (
	"context"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
)

// slowFlusher is the hidden --debug-slow-flush-pct: after each flush of the in-memory queue's
// workers (BEGIN, the writes, COMMIT) it waits pct% of the time that flush took, so every flush
// takes pct% longer, as a slower build's would. It exists so that `baseline ab` can be shown a
// build that is slower by a known amount; the records are committed before the wait, so it
// changes timing only, never what is written.
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
	return slowStaged{Staged: st, start: start, pct: s.pct}, nil
}

// slowStaged waits pct% of its batch's time, from Stage to the end of COMMIT, after COMMIT.
type slowStaged struct {
	queue.Staged
	start time.Time
	pct   int
}

func (s slowStaged) Commit(ctx context.Context) (queue.FlushResult, error) {
	res, err := s.Staged.Commit(ctx)
	wait(ctx, time.Since(s.start)*time.Duration(s.pct)/100)
	return res, err
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (s slowFlusher[T]) Flush(ctx context.Context, records []T) (queue.FlushResult, error) {
	start := time.Now()
	res, err := s.Flusher.Flush(ctx, records)
	wait(ctx, time.Since(start)*time.Duration(s.pct)/100)
	return res, err
}
