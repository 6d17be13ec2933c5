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

// slowFlushes wraps f when pct > 0.
func slowFlushes[T any](f queue.Flusher[T], pct int) queue.Flusher[T] {
	if pct <= 0 {
		return f
	}
	return slowFlusher[T]{Flusher: f, pct: pct}
}

func (s slowFlusher[T]) Flush(ctx context.Context, records []T) (queue.FlushResult, error) {
	start := time.Now()
	res, err := s.Flusher.Flush(ctx, records)
	t := time.NewTimer(time.Since(start) * time.Duration(s.pct) / 100)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return res, err
}
