package core

import (
	"context"
	"errors"
	"fmt"
)

// ErrGroupTooLarge is queue.ErrGroupTooLarge (see there).
var ErrGroupTooLarge = errors.New("queue: group of records larger than the queue's capacity")

// GroupTooLarge is ErrGroupTooLarge, with its size, for a group of n records that can never fit
// a backend of capacity records (0: unbounded); nil for one that can.
func GroupTooLarge(n, capacity int64) error {
	if capacity > 0 && n > capacity {
		return fmt.Errorf("%w (%d records, capacity %d)", ErrGroupTooLarge, n, capacity)
	}
	return nil
}

// WriteInline is PolicySync's write, which every backend shares: the caller writes its group
// of n records itself, outside the queue, in one Flush (one transaction: all or nothing),
// which write sends — the group as Options.InlineBatch arranges it, so that the Flusher's
// contract holds and the inline transaction locks rows in the workers' order. The write is
// cancelled by ctx or when life aborts (Close's deadline), whichever comes first. It counts
// the group's records in SyncFallback, or in Rejected when the write fails.
func WriteInline(ctx context.Context, life *Lifecycle, c *Counters, n int, write func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(life.Ctx(), cancel)
	err := write(ctx)
	stop()
	cancel()
	if err != nil {
		c.Rejected.Add(int64(n))
		return err
	}
	c.SyncFallback.Add(int64(n))
	return nil
}
