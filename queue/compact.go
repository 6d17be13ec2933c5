package queue

import "github.com/hotspotkit/hotspotkit/queue/internal/core"

// Compact folds records with equal keys (in order) using merge and returns one record per
// slot, sorted by compare when non-nil (ties keep first-seen order) and in first-seen order
// otherwise. records is not modified. It is what a compacting backend does to a batch before
// the Flusher sees it, for a caller that wants the same folding elsewhere (a test's expected
// totals, a writer's own grouping).
func Compact[K comparable, T any](records []T, key func(T) K, merge func(*T, T), compare func(a, b K) int) []T {
	return core.Compact(records, key, merge, compare)
}
