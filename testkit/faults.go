package testkit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

// Fault kinds for --fault.
const (
	FaultTerminateBackends = "terminate-backends" // KIND@T: pg_terminate_backend on the load's and flushers' sessions
	FaultRestartPostgres   = "restart-postgres"   // KIND@T: stop and start the managed server (same data, same port)
	FaultPauseFlush        = "pause-flush"        // KIND@T+D: flushers stop for D (the queue fills up)
	FaultKillConsumer      = "kill-consumer"      // KIND@T: a queue backend's consumer dies (Redis backend)
	FaultStatementTimeout  = "statement-timeout"  // KIND=MS: statement_timeout on the load's sessions
	FaultLockTimeout       = "lock-timeout"       // KIND=MS: lock_timeout on the load's sessions
)

var timedFaults = []string{FaultTerminateBackends, FaultRestartPostgres, FaultPauseFlush, FaultKillConsumer}

// Fault is one parsed --fault.
type Fault struct {
	Kind string
	// At is when a timed fault strikes, from the start of the run's load.
	At time.Duration
	// For is how long pause-flush lasts.
	For time.Duration
	// Setting is the value in milliseconds of a *-timeout fault.
	Setting int
	raw     string
}

func (f Fault) String() string { return f.raw }

// ParseFault reads "terminate-backends@1s", "pause-flush@2s+3s", "lock-timeout=50".
func ParseFault(s string) (Fault, error) {
	f := Fault{raw: s}
	if kind, ms, ok := strings.Cut(s, "="); ok {
		f.Kind = kind
		if kind != FaultStatementTimeout && kind != FaultLockTimeout {
			return f, fmt.Errorf("--fault %q: only statement-timeout and lock-timeout take =MS", s)
		}
		n, err := strconv.Atoi(ms)
		if err != nil || n < 1 {
			return f, fmt.Errorf("--fault %q: %s wants a positive number of milliseconds", s, kind)
		}
		f.Setting = n
		return f, nil
	}
	kind, when, ok := strings.Cut(s, "@")
	f.Kind = kind
	if !ok {
		return f, fmt.Errorf("--fault %q: want KIND@TIME (kinds: %s) or statement-timeout=MS / lock-timeout=MS", s, strings.Join(timedFaults, ", "))
	}
	if !slices.Contains(timedFaults, kind) {
		return f, fmt.Errorf("--fault %q: unknown fault %q (kinds: %s, statement-timeout=MS, lock-timeout=MS)", s, kind, strings.Join(timedFaults, ", "))
	}
	at, dur, hasDur := strings.Cut(when, "+")
	var err error
	if f.At, err = time.ParseDuration(at); err != nil || f.At < 0 {
		return f, fmt.Errorf("--fault %q: %q is not a duration such as 1s or 500ms", s, at)
	}
	if kind == FaultPauseFlush {
		if !hasDur {
			return f, fmt.Errorf("--fault %q: pause-flush wants @T+D, e.g. pause-flush@1s+2s", s)
		}
		if f.For, err = time.ParseDuration(dur); err != nil || f.For <= 0 {
			return f, fmt.Errorf("--fault %q: %q is not a positive duration", s, dur)
		}
	} else if hasDur {
		return f, fmt.Errorf("--fault %q: only pause-flush takes +D", s)
	}
	return f, nil
}

// sessionSettings are the server settings the faults put on the load's sessions.
func sessionSettings(faults []Fault) map[string]string {
	out := map[string]string{}
	for _, f := range faults {
		switch f.Kind {
		case FaultStatementTimeout:
			out["statement_timeout"] = strconv.Itoa(f.Setting)
		case FaultLockTimeout:
			out["lock_timeout"] = strconv.Itoa(f.Setting)
		}
	}
	return out
}

// FaultHook injects a fault a workload knows how to cause (e.g. killing a queue consumer).
type FaultHook func(ctx context.Context) (detail string, err error)

// injector runs the timed faults of one run.
type injector struct {
	e      *engine
	r      *Run
	wl     *Workload
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// pausing counts pause-flush faults in effect: the drain waits for them, or closing the
	// queue would resume the flushers early.
	pausing sync.WaitGroup

	mu     sync.Mutex
	events []results.FaultEvent
}

// startFaults schedules the run's timed faults relative to now.
func (e *engine) startFaults(r *Run, wl *Workload) *injector {
	ctx, cancel := context.WithCancel(e.hardCtx)
	in := &injector{e: e, r: r, wl: wl, start: time.Now(), cancel: cancel}
	for _, f := range e.cfg.faults {
		if f.Kind == FaultStatementTimeout || f.Kind == FaultLockTimeout {
			in.record(results.FaultEvent{Kind: f.Kind, Detail: fmt.Sprintf("%s ms on every load session", strconv.Itoa(f.Setting))})
			continue
		}
		in.wg.Add(1)
		go func(f Fault) {
			defer in.wg.Done()
			select {
			case <-ctx.Done():
				in.record(results.FaultEvent{Kind: f.Kind, AtMs: ms(f.At),
					Error: fmt.Sprintf("not injected: the run was over after %.0f ms, before the fault was due", ms(time.Since(in.start)))})
				return
			case <-time.After(time.Until(in.start.Add(f.At))):
			}
			in.inject(ctx, f)
		}(f)
	}
	return in
}

func (in *injector) record(ev results.FaultEvent) {
	in.mu.Lock()
	in.events = append(in.events, ev)
	in.mu.Unlock()
}

func (in *injector) inject(ctx context.Context, f Fault) {
	ev := results.FaultEvent{Kind: f.Kind, AtMs: ms(time.Since(in.start))}
	var err error
	switch f.Kind {
	case FaultTerminateBackends:
		ev.Detail, err = in.terminateBackends(ctx)
	case FaultRestartPostgres:
		t0 := time.Now()
		err = in.e.target.Server.Restart(ctx)
		ev.Duration = ms(time.Since(t0))
		ev.Detail = "server stopped and started on the same port and data"
	case FaultPauseFlush:
		ev.Duration = ms(f.For)
		ev.Detail, err = in.pauseFlush(ctx, f.For)
	default:
		hook := in.wl.Faults[f.Kind]
		if hook == nil {
			err = fmt.Errorf("%s does not apply to the %s mode with this backend", f.Kind, in.r.Mode)
			break
		}
		ev.Detail, err = hook(ctx)
	}
	if err != nil {
		ev.Error = err.Error()
	}
	in.record(ev)
}

// terminateBackends ends every session of the load and the flushers (not the monitor's, not
// the engine's own), from a connection of its own.
func (in *injector) terminateBackends(ctx context.Context) (string, error) {
	conn, err := in.e.target.Connect(ctx, "hotspotkit-faults")
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		  AND application_name IN ('hotspotkit-load', 'hotspotkit-flush')`).Scan(&n)
	return fmt.Sprintf("%d sessions terminated", n), err
}

func (in *injector) pauseFlush(ctx context.Context, d time.Duration) (string, error) {
	var pause, resume func()
	switch {
	case in.wl.Queue != nil && in.wl.Queue.Pause != nil:
		pause, resume = in.wl.Queue.Pause, in.wl.Queue.Resume
	case in.wl.Flusher != nil:
		pause, resume = in.wl.Flusher.Pause, in.wl.Flusher.Resume
	default:
		return "", fmt.Errorf("the %s mode has no flushers to pause", in.r.Mode)
	}
	in.pausing.Add(1)
	defer in.pausing.Done()
	pause()
	defer resume()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return fmt.Sprintf("flushers paused for %s", d), nil
}

// waitPauses returns when no pause-flush is in effect.
func (in *injector) waitPauses() { in.pausing.Wait() }

// stop cancels faults that have not struck yet and returns what happened.
func (in *injector) stop() []results.FaultEvent {
	in.cancel()
	in.wg.Wait()
	in.mu.Lock()
	defer in.mu.Unlock()
	slices.SortFunc(in.events, func(a, b results.FaultEvent) int { return cmp.Compare(a.AtMs, b.AtMs) })
	return in.events
}
