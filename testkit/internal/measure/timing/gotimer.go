package timing

import "time"

// waiter is what a Timer waits on: a kernel timer where there is one, else Go's.
type waiter interface {
	// arm sets the waiter to fire after d (d > 0), replacing any earlier setting; at, when
	// not zero, is the wait's deadline, by which Go's own timers end the wait should the
	// waiter not have fired yet (a kernel timer's backstop; Go's timer ignores it).
	arm(d time.Duration, at time.Time)
	// wait blocks until it fires or fireNow is called (true), or until the backstop of arm
	// ends it (false).
	wait() (fired bool)
	// fireNow makes a wait in progress, or the next one before a re-arm, return; it may be
	// called from any goroutine, also after close.
	fireNow()
	close() error
}

// goTimer waits on Go's timer, at its precision (about a millisecond when the process is
// idle): the fallback when no kernel timer can be had.
type goTimer struct {
	t    *time.Timer
	wake chan struct{}
}

func newGoTimer() *goTimer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &goTimer{t: t, wake: make(chan struct{}, 1)}
}

func (g *goTimer) arm(d time.Duration, _ time.Time) { g.t.Reset(d) }

func (g *goTimer) wait() bool {
	select {
	case <-g.t.C:
	case <-g.wake:
	}
	return true
}

func (g *goTimer) fireNow() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

func (g *goTimer) close() error { g.t.Stop(); return nil }
