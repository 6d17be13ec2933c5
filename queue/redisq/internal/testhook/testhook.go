// Package testhook holds the one hook package redisqtest installs: a function every consumer
// of the process calls at two points of its batch cycle, so that a test can stop or kill the
// process exactly there. It is nil unless a test set it, and costs a consumer one atomic load
// per point then.
package testhook

import "sync/atomic"

// The points of a consumer's batch cycle where the hook is called.
const (
	AfterRead   = "after-read"   // a batch was read and decoded; nothing of it is committed
	AfterCommit = "after-commit" // its effect and applied ids are committed; nothing is acknowledged
)

// Func is called by the consumer named consumer at point with the batch's entry ids, on the
// consumer's goroutine.
type Func func(consumer, point string, ids []string)

var hook atomic.Pointer[Func]

// Set installs f (nil removes the hook) and returns the hook it replaced.
func Set(f Func) (prev Func) {
	var p *Func
	if f != nil {
		p = &f
	}
	if old := hook.Swap(p); old != nil {
		return *old
	}
	return nil
}

// Get returns the hook, or nil.
func Get() Func {
	if p := hook.Load(); p != nil {
		return *p
	}
	return nil
}
