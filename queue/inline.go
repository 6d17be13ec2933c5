package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrGroupTooLarge is returned under PolicyBlock for a group of more records than the
// backend's capacity: it could never fit, so waiting for room would never end.
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
// of records itself, outside the queue, in one Flush of f (one transaction: all or nothing).
// With compaction the group is compacted and sorted like a batch (Compact), so that the
// Flusher's contract holds and the inline transaction locks rows in the workers' order. The
// write is cancelled by ctx or when life aborts (Close's deadline), whichever comes first.
// It counts the group's records in SyncFallback, or in Rejected when the write fails.
func WriteInline[K comparable, T any](ctx context.Context, life *Lifecycle, c *Counters, f Flusher[T], o *Options[K, T], recs []T) error {
	batch := o.inlineBatch(recs)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(life.Ctx(), cancel)
	_, err := f.Flush(ctx, batch)
	stop()
	cancel()
	n := int64(len(recs))
	if err != nil {
		c.Rejected.Add(n)
		return err
	}
	c.SyncFallback.Add(n)
	return nil
}

// inlineBatch is what WriteInline hands the Flusher: a slice of its own (recs may live on the
// caller's stack), compacted when the options say so and the backend knows the slots (a
// Redis producer may run without Key).
func (o *Options[K, T]) inlineBatch(recs []T) []T {
	if o.Compaction && o.Key != nil && o.Merge != nil && len(recs) > 1 {
		return Compact(recs, o.Key, o.Merge, o.Compare)
	}
	return slices.Clone(recs)
}
