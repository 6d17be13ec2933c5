package core

import "slices"

// Compact folds records with equal keys (in order) using merge and returns one record per
// slot, sorted by compare when non-nil (ties keep first-seen order) and in first-seen order
// otherwise. records is not modified.
func Compact[K comparable, T any](records []T, key func(T) K, merge func(*T, T), compare func(a, b K) int) []T {
	if len(records) == 0 {
		return nil
	}
	c := NewCompactor(key, merge, compare)
	return c.Compact(slices.Clone(records))
}

// Compactor keeps the scratch state of repeated compactions so a worker allocates only while
// its batches grow.
type Compactor[K comparable, T any] struct {
	key     func(T) K
	merge   func(*T, T)
	compare func(a, b K) int
	byKey   func(a, b T) int // compare applied to the records' keys, built once
	slot    map[K]int        // key → index of its record in the compacted prefix
}

// NewCompactor returns a Compactor folding with merge the records whose key is equal, and
// sorting by compare when non-nil.
func NewCompactor[K comparable, T any](key func(T) K, merge func(*T, T), compare func(a, b K) int) *Compactor[K, T] {
	c := &Compactor[K, T]{key: key, merge: merge, compare: compare, slot: make(map[K]int)}
	if compare != nil {
		c.byKey = func(a, b T) int { return compare(key(a), key(b)) }
	}
	return c
}

// Compact folds recs in place and returns the compacted prefix. The output index never passes
// the input index, so no record is overwritten before it has been read.
func (c *Compactor[K, T]) Compact(recs []T) []T {
	clear(c.slot)
	n := 0
	for i := range recs {
		k := c.key(recs[i])
		if j, seen := c.slot[k]; seen {
			c.merge(&recs[j], recs[i])
			continue
		}
		c.slot[k] = n
		recs[n] = recs[i]
		n++
	}
	clear(recs[n:]) // drop references held by folded records
	recs = recs[:n]
	if c.byKey != nil {
		slices.SortStableFunc(recs, c.byKey)
	}
	return recs
}
