package backend

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hotspotkit/hotspotkit/queue"
)

// slowFlusher is the hidden --debug-slow-flush-pct: each flush of the in-memory queue's
// workers takes pct% longer, as a slower build's would. A plain flush (BEGIN, the writes,
// COMMIT) works pct% of its time more after COMMIT; a staged one (the queue pipelines: the next
// batch is written while the previous commits) works pct% of its writing time more once
// written, before its COMMIT, because that is what sets a pipelined worker's pace: work after
// the COMMIT would overlap the next batch and hide. It exists so that `baseline ab` can be
// shown a build that is slower by a known amount; it changes timing only, never what is
// written.
//
// The extra time is work, a processor kept busy (spend), not a wait. A slower build spends
// more processor time per flush, and on a machine whose processors the database and the
// queue share a wait is no such build: while one worker slept, the other worker's backend had
// the processor to itself and wrote faster (docs/baselines.md has the A/Bs that show it).
type slowFlusher[T any] struct {
	queue.Flusher[T]
	pct int
}

// slowFlushes wraps f when pct > 0; a StagedFlusher stays one (the queue pipelines with it).
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
	spend(ctx, time.Since(start)*time.Duration(s.pct)/100)
	return st, nil
}

// spend does d of processor work on the calling goroutine's thread, or stops when ctx ends:
// d of the thread's own CPU time, so that a busy machine, which gives the thread less of each
// second, makes it take longer, as it would a slower build's flush. Reading the clock over and
// over is the work.
func spend(ctx context.Context, d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := threadCPU()
	if !ok { // no thread clock: d of the wall clock instead
		for end := time.Now().Add(d); time.Now().Before(end) && ctx.Err() == nil; {
		}
		return
	}
	for ctx.Err() == nil {
		if now, ok := threadCPU(); !ok || now-start >= d {
			return
		}
	}
}

// threadCPU is the processor time the calling thread has taken.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

func (s slowFlusher[T]) Flush(ctx context.Context, records []T) (queue.FlushResult, error) {
	start := time.Now()
	res, err := s.Flusher.Flush(ctx, records)
	spend(ctx, time.Since(start)*time.Duration(s.pct)/100)
	return res, err
}
