package timing

import (
	"testing"
	"time"
)

// The kernel timer's backstop (Go's own timer, the descriptor's read deadline) ends a wait
// the kernel timer has not ended, and a wait armed without one is not ended by a backstop
// that passed before it.
func TestBackstopEndsAWait(t *testing.T) {
	k, ok := newWaiter().(*timerfd)
	if !ok {
		t.Skip("no kernel timer here")
	}
	defer k.close()
	wait := func() bool {
		t.Helper()
		done := make(chan bool, 1)
		go func() { done <- k.wait() }()
		select {
		case fired := <-done:
			return fired
		case <-time.After(10 * time.Second):
			t.Fatal("the wait did not end")
			return false
		}
	}

	k.arm(time.Hour, time.Now().Add(20*time.Millisecond))
	if wait() {
		t.Fatal("a wait the backstop ended says the kernel timer fired")
	}
	// The backstop above has passed: a wait without one must end on the kernel timer alone.
	start := time.Now()
	k.arm(30*time.Millisecond, time.Time{})
	if !wait() {
		t.Fatal("a wait without a backstop was ended by the one that passed before it")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("the kernel timer's wait ended after %s, before it fired", waited)
	}
	// And a backstop later than the kernel timer leaves the wait to it.
	k.arm(10*time.Millisecond, time.Now().Add(time.Hour))
	if !wait() {
		t.Fatal("the kernel timer fired first, yet the wait says the backstop ended it")
	}
}
