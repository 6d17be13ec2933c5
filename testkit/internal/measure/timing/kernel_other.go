//go:build !linux

package timing

// newWaiter returns Go's timer: only Linux has the kernel timer the poller can wait on.
func newWaiter() waiter { return newGoTimer() }
