package load

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ClassRequestTimeout is the class of a try that ran past Config.RequestTimeout: its outcome is
// unknown (it may have committed), and it is tried again only when a retry set names it.
const ClassRequestTimeout = "request_timeout"

// ErrRequestTimeout is the cause of a try's context cancelled by the request timeout.
var ErrRequestTimeout = errors.New("request timeout")

// timeoutError is the error of a try the request timeout ended: an unknown outcome (Unknown)
// under its own class.
type timeoutError struct {
	after time.Duration
	err   error // Unknown(the try's error)
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("request timeout (%s) reached: %v", e.after, e.err)
}
func (e *timeoutError) Unwrap() error      { return e.err }
func (e *timeoutError) ErrorClass() string { return ClassRequestTimeout }

// IsRequestTimeout reports whether err ended a try at the request timeout.
func IsRequestTimeout(err error) bool {
	var t *timeoutError
	return errors.As(err, &t)
}

// attemptTimedOut marks attempt words whose try the watchdog has cancelled.
const attemptTimedOut = -1

// attempt is the per-worker state the watchdog reads: when the running try began, as
// nanoseconds since the run's start plus one (0: no try running; attemptTimedOut: cancelled),
// and the context the worker's tries run under, replaced once a timeout has cancelled it.
type attempt struct {
	began atomic.Int64
	cur   atomic.Pointer[tryContext]
}

type tryContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// context is the context for the worker's next try: the one it has, unless a timeout
// cancelled it (end).
func (a *attempt) context(parent context.Context) context.Context {
	cur := a.cur.Load()
	if cur == nil {
		ctx, cancel := context.WithCancelCause(parent)
		cur = &tryContext{ctx, cancel}
		a.cur.Store(cur)
	}
	return cur.ctx
}

// begin marks a try as running since now (an offset from the run's start).
func (a *attempt) begin(now time.Duration) { a.began.Store(int64(now) + 1) }

// end marks the try as over and reports whether the watchdog cancelled it; the worker's next
// try then runs under a new context.
func (a *attempt) end() (timedOut bool) {
	if a.began.Swap(0) != attemptTimedOut {
		return false
	}
	if cur := a.cur.Swap(nil); cur != nil {
		cur.cancel(ErrRequestTimeout)
	}
	return true
}

// release cancels the worker's context at the end of the run.
func (a *attempt) release() {
	if cur := a.cur.Load(); cur != nil {
		cur.cancel(nil)
	}
}

// watchdog cancels every try that has run longer than timeout, looking every tick; a try
// ends at most a tick after its timeout. It returns when stop closes.
func (r *runner) watchdog(timeout time.Duration, stop <-chan struct{}) {
	tick := min(max(timeout/20, 5*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := int64(time.Since(r.start))
		for i := range r.workers {
			a := &r.workers[i].req.attempt
			began := a.began.Load()
			if began <= 0 || now-(began-1) < int64(timeout) {
				continue
			}
			cur := a.cur.Load() // stored before began: the try's own
			if a.began.CompareAndSwap(began, attemptTimedOut) && cur != nil {
				cur.cancel(ErrRequestTimeout)
			}
		}
	}
}
