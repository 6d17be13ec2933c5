// Package redisqtest stops redisq consumers at exact points of their batch cycle, for tests
// and test tools that must prove the crash guarantees of queue/redisq: a hook that blocks (or
// kills its process) at AfterRead leaves a batch read and uncommitted, at AfterCommit one
// committed and unacknowledged. It is not for production code; a process that never calls
// SetHook pays one atomic load per batch for it.
package redisqtest

import "github.com/hotspotkit/hotspotkit/queue/redisq/internal/testhook"

// The points where a consumer calls the hook.
const (
	// AfterRead: a batch was read and decoded; nothing of it is committed.
	AfterRead = testhook.AfterRead
	// AfterCommit: the batch's effect and applied ids are committed; nothing is acknowledged.
	AfterCommit = testhook.AfterCommit
)

// Hook is called by a consumer at AfterRead and AfterCommit with its name (Options.Consumer
// followed by "-w<i>" for worker i, "-reclaim" for the reclaimer, "-s<i>" for shard i's reader
// with Options.Shards > 1; ".<n>" added to a replacement's) and the batch's entry ids.
// It runs on the consumer's goroutine, which waits for it to return.
type Hook func(consumer, point string, ids []string)

// SetHook installs h for every consumer of every redisq.Queue in the process, at once (nil
// removes it), and returns a function that puts back the hook it replaced.
func SetHook(h Hook) (restore func()) {
	prev := testhook.Set(testhook.Func(h))
	return func() { testhook.Set(prev) }
}
