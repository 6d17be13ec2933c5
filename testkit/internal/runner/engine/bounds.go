package engine

// The bounds of an invocation's waits: what ends it after a signal, a drain that makes no
// progress, and the wait for an unreachable server before a run is reported unverified
// (docs/faults-and-soak.md, "What ends a hung run").

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

const (
	// postLoadBound bounds a run's work after its load (verification, reconciliation, the
	// database's figures) on a reachable server.
	postLoadBound = 2 * time.Minute
	// abortedBound is what is left of it once the invocation is aborted (a second signal, or
	// --shutdown-timeout after the first): a signal ends the process in seconds.
	abortedBound = 3 * time.Second
	// attemptBound bounds one attempt to reach a server while verification waits for it.
	attemptBound = 5 * time.Second
	// stallPoll is how often a drain's progress is looked at.
	stallPoll = 100 * time.Millisecond
)

// handleSignals runs until sigs closes: the first SIGINT or SIGTERM stops new requests and gives
// what is in flight shutdown (--shutdown-timeout) before it is aborted; a second aborts at once.
func (e *engine) handleSignals(sigs <-chan os.Signal, shutdown time.Duration, stop, hard context.CancelFunc) {
	n := 0
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	for sig := range sigs {
		n++
		if n > 1 {
			fmt.Fprintf(e.stderr, "\n%s: second signal: aborting what is in flight; stopping servers\n", e.info.Name)
			hard()
			continue
		}
		name := "SIGINT"
		if sig == syscall.SIGTERM {
			name = "SIGTERM"
		}
		e.signal.Store(&name)
		d := shutdown
		fmt.Fprintf(e.stderr, "\n%s: %s: no new requests; what is in flight has %s to finish (again to abort now)\n", e.info.Name, name, d)
		stop()
		grace = time.AfterFunc(d, func() {
			if e.hardCtx.Err() == nil {
				fmt.Fprintf(e.stderr, "\n%s: %s since %s (--shutdown-timeout): aborting what is in flight\n", e.info.Name, d, name)
				hard()
			}
		})
	}
}

// signalName is the signal that stopped the invocation, "" when none did.
func (e *engine) signalName() string {
	if s := e.signal.Load(); s != nil {
		return *s
	}
	return ""
}

// postLoad is the context of a run's work after its load: postLoadBound, cut to abortedBound
// from the moment the invocation is aborted. It is not cancelled with the invocation itself:
// what the run did is accounted for even after an abort, as far as the bound allows.
func (e *engine) postLoad() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.hardCtx), postLoadBound)
	// The cut is armed by the abort, in a goroutine of its own: a timer's methods are safe
	// from any goroutine, where a timer made there and read here would not be.
	cut := time.AfterFunc(abortedBound, cancel)
	cut.Stop()
	stop := context.AfterFunc(e.hardCtx, func() { cut.Reset(abortedBound) })
	return ctx, func() {
		stop()
		cut.Stop()
		cancel()
	}
}

// errUnreachable is why a run is unverified: a server it needs did not answer within
// --reconcile-timeout after the load. The invocation starts no further run.
var errUnreachable = errors.New("unreachable")

// awaitPaths waits until the database (and the run's Redis, when it has one) answers, for at
// most wait (--reconcile-timeout, or 0 after a drain that waited for them already) and ctx,
// one bounded attempt after another. It returns an *unreachableError that names the server,
// the last failure and what ended the wait when they do not.
func (e *engine) awaitPaths(ctx context.Context, r *run, wait time.Duration) error {
	began := time.Now()
	deadline := began.Add(wait)
	reach := []struct {
		name string
		try  func(context.Context) error
	}{{e.db.Name(), e.target.EnsureAdmin}}
	if name, ping := r.backend.Server(); ping != nil {
		reach = append(reach, struct {
			name string
			try  func(context.Context) error
		}{name, ping})
	}
	for _, p := range reach {
		var err error
		for {
			actx, cancel := context.WithTimeout(ctx, attemptBound)
			err = p.try(actx)
			cancel()
			if err == nil || ctx.Err() != nil || !time.Now().Before(deadline) {
				break
			}
			wait := time.NewTimer(min(time.Second, time.Until(deadline)))
			select {
			case <-ctx.Done():
			case <-wait.C:
			}
			wait.Stop()
		}
		if err != nil {
			u := &unreachableError{server: p.name, limit: wait, waited: time.Since(began), err: err}
			if ctx.Err() != nil && wait > 0 && u.waited < wait {
				u.endedBy = e.waitEnder(ctx)
			}
			return u
		}
	}
	return nil
}

// waitEnder says what ended a wait on ctx (postLoad's) before its own limit: the bound of a
// run's work after its load, or the invocation's abort, by the signal that stopped it.
func (e *engine) waitEnder(ctx context.Context) string {
	switch sig := e.signalName(); {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("the %s bound of a run's work after its load", postLoadBound)
	case sig != "":
		return sig
	}
	return "the invocation's abort"
}

// unreachableError is a server that did not answer after the load: the run's error says which
// (one line), its verification why in full. limit is how long the wait was to last
// (--reconcile-timeout; 0 after a drain that waited already), waited how long it did, and
// endedBy what cut it short ("" when it ran to its limit).
type unreachableError struct {
	server  string
	limit   time.Duration
	waited  time.Duration
	endedBy string
	err     error
}

func (u *unreachableError) Error() string {
	return fmt.Sprintf("unverified: %s unreachable after the run", u.server)
}
func (u *unreachableError) Unwrap() error { return errUnreachable }

// reason is the whole story, for the report's Unverified.Reason: "PostgreSQL did not answer
// for 12.1s after the run: SIGTERM ended the wait (--reconcile-timeout 1m0s): ...".
func (u *unreachableError) reason() string {
	waited := fmt.Sprintf("for %s after the run (--reconcile-timeout)", u.limit)
	switch {
	case u.limit == 0:
		waited = "after the drain had waited for it"
	case u.endedBy != "":
		waited = fmt.Sprintf("for %s after the run: %s ended the wait (--reconcile-timeout %s)",
			u.waited.Round(100*time.Millisecond), u.endedBy, u.limit)
	}
	return fmt.Sprintf("%s did not answer %s: %s", u.server, waited, oneLine(database.Redact(u.err.Error())))
}

// unverified is a run's verification when it could not run, or could not finish: why, and
// what the load knows of its requests.
func unverified(why string, res *load.Result, held int64) results.Verification {
	u := &results.Unverified{Reason: why, Held: held}
	if res != nil && res.Outcomes != nil {
		u.Succeeded = res.Outcomes.Count(load.Succeeded)
		u.Failed = res.Outcomes.Count(load.Failed)
		u.Unknown = res.Outcomes.Count(load.UnknownOutcome)
	}
	return results.Verification{Checks: []results.Check{}, Unverified: u}
}

// drainProgress is how far a run's drain has got: records (or outbox deltas) persisted, and
// accepted ones not yet persisted (the outbox's as the monitor's latest sample, last, counted
// them). Nil for a workload without a drain to follow.
func drainProgress(r *run, wl *testkit.Workload, last func() results.Sample) func() load.DrainStatus {
	switch {
	case r.backend.Figures() != nil:
		q := r.backend.Figures()
		return func() load.DrainStatus {
			m := q.Metrics()
			return load.DrainStatus{Persisted: m.FlushedTotal + m.SyncFallbackTotal,
				Accepted: m.EnqueuedTotal - m.DroppedTotal - m.RejectedTotal, Waiting: m.PendingDepth, Lag: q.PersistLag}
		}
	case wl.FlushLoop != nil:
		o := wl.FlushLoop
		return func() load.DrainStatus {
			st := load.DrainStatus{Persisted: o.Stats().RowsClaimed}
			if p := last().OutboxPending; p != nil {
				st.Waiting = *p // counted by the monitor every second: up to a second old
			}
			return st
		}
	}
	return nil
}

// errDrainStalled ends a drain that persisted nothing for --request-timeout plus
// --reconcile-timeout: its server did not answer (a flush is cut off after the first, and the
// second is the wait for the path to return, as verification's), and what the drain holds
// stays where it is (the outbox, the stream) or is abandoned (the in-memory queue).
var errDrainStalled = errors.New("nothing persisted for --request-timeout plus --reconcile-timeout")

// watchStall cancels the drain's context (cause errDrainStalled) once progress has not moved
// for stall; the returned stop ends the watch and says whether it did.
func watchStall(cancel context.CancelCauseFunc, progress func() load.DrainStatus, stall time.Duration) (stop func() bool) {
	if progress == nil {
		return func() bool { return false }
	}
	done := make(chan struct{})
	stalled := make(chan bool, 1)
	go func() {
		last, since := progress().Persisted, time.Now()
		t := time.NewTicker(stallPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				stalled <- false
				return
			case now := <-t.C:
				if p := progress().Persisted; p != last {
					last, since = p, now
				} else if now.Sub(since) >= stall {
					cancel(errDrainStalled)
					stalled <- true
					return
				}
			}
		}
	}()
	return func() bool {
		close(done)
		return <-stalled
	}
}
