package core

import (
	"context"
	"sync"
)

// Lifecycle is the close handshake every backend shares, so that Close means the same
// whatever the backend: it runs once; it stops intake (Counters.CloseIntake: later Enqueue
// calls are rejected), announces closing, arms Close's deadline and waits until no Enqueue
// call is in flight; only then does the backend drain what it accepted. When the deadline
// expires first, Abort closes AbortC and cancels Ctx, under which every flush and read runs.
// Create it with NewLifecycle.
type Lifecycle struct {
	once      sync.Once
	err       error
	closingC  chan struct{}
	abortOnce sync.Once
	abortC    chan struct{}
	ctx       context.Context
	cancel    context.CancelFunc
}

// NewLifecycle returns a Lifecycle of a running backend.
func NewLifecycle() *Lifecycle {
	l := &Lifecycle{closingC: make(chan struct{}), abortC: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// Close runs the handshake once: intake stops, ClosingC closes, stopIntake runs (a backend
// resumes its paused workers there), Enqueue calls in flight are waited for, then drain runs
// under Close's ctx, whose expiry aborts. Ctx is cancelled once drain returns. Later calls wait
// for the first and return its result.
func (l *Lifecycle) Close(ctx context.Context, c *Counters, stopIntake func(), drain func(ctx context.Context) error) error {
	l.once.Do(func() {
		c.CloseIntake()
		close(l.closingC)
		stopIntake()
		stop := context.AfterFunc(ctx, l.Abort)
		defer stop()
		c.AwaitInFlight()
		l.err = drain(ctx)
		l.cancel()
	})
	return l.err
}

// Abort gives up the drain: AbortC closes and Ctx is cancelled.
func (l *Lifecycle) Abort() {
	l.abortOnce.Do(func() {
		close(l.abortC)
		l.cancel()
	})
}

// Ctx is the context every flush and read of the backend runs under; Abort cancels it.
func (l *Lifecycle) Ctx() context.Context { return l.ctx }

// ClosingC is closed when Close begins.
func (l *Lifecycle) ClosingC() <-chan struct{} { return l.closingC }

// AbortC is closed when Close's deadline expires.
func (l *Lifecycle) AbortC() <-chan struct{} { return l.abortC }

// Closing reports whether Close has begun.
func (l *Lifecycle) Closing() bool { return IsClosed(l.closingC) }

// Aborted reports whether Close's deadline has expired.
func (l *Lifecycle) Aborted() bool { return IsClosed(l.abortC) }

// IsClosed reports, without waiting, whether ch is closed: how a backend polls the channels
// it closes to announce that Close has begun or that its deadline has expired.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
