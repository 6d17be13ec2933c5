package engine

import (
	"context"
	"slices"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/soak"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// faultTarget is what package faults acts on during one run: the run's database and server,
// its flushers and the hooks its workload brings.
type faultTarget struct {
	e  *engine
	r  *run
	wl *testkit.Workload
}

// faultInjection is the run's timed faults (--fault, and with --fault-every the soak's
// rotation), struck relative to its begin (package faults), into the run's Faults, its
// FaultOutcome and its Soak; a blackhole without an end lasts until the run is over.
type faultInjection struct {
	e  *engine
	r  *run
	wl *testkit.Workload
	// series is the monitor's, for the soak's drift and recovery.
	series interface{ series() []monitor.Point }
	in     *faults.Injector
}

// redisFaultTarget is the faultTarget of a run whose backend strikes the Redis faults.
type redisFaultTarget struct {
	faultTarget
	faults.RedisTarget
}

func (f *faultInjection) begin(context.Context) error {
	e := f.e
	list := append(slices.Clone(e.cfg.Faults), e.cfg.Rotation(e.info, f.r.suite.Mode())...)
	ft := faultTarget{e: e, r: f.r, wl: f.wl}
	var t faults.Target = ft
	if redis, ok := f.r.backend.(faults.RedisTarget); ok {
		t = redisFaultTarget{ft, redis}
	}
	f.in = faults.Start(e.hardCtx, t, list)
	return nil
}

func (f *faultInjection) end(_ context.Context, ran ranLoad, out *results.Run) {
	out.Faults = f.in.Stop()
	if ran.res != nil {
		out.FaultOutcome = faultOutcome(out.Faults, ran.res)
		out.Soak = f.soakFigures(out.Faults, ran.res.End)
	}
}

func (f *faultInjection) over() { f.in.Lift() }

// observed is a conn-storm's statements.
func (f *faultInjection) observed() int64 { return f.in.StormStatements() }

// waitPauses waits for the pauses of the flushers to end (the drain's start).
func (f *faultInjection) waitPauses() { f.in.WaitPauses() }

// soakFigures are a --fault-every run's drift and recovery times (nil without it).
func (f *faultInjection) soakFigures(events []results.FaultEvent, end time.Time) *results.Soak {
	if f.e.cfg.FaultEvery <= 0 {
		return nil
	}
	var struck []soak.Fault
	for _, ev := range events {
		if ev.Error == "" && slices.Contains(faults.Timed, ev.Kind) {
			struck = append(struck, soak.Fault{Kind: ev.Kind, At: f.in.Started().Add(time.Duration(ev.AtMs * float64(time.Millisecond)))})
		}
	}
	return soak.Analyze(f.series.series(), f.in.Started(), end, struck)
}

// Terminate ends the run's sessions named one of apps (the target's, of its kind).
func (t faultTarget) Terminate(ctx context.Context, apps ...string) (int, error) {
	return t.e.target.Terminate(ctx, apps...)
}

// ConnectService opens a connection as the load's pool does: through the Route.
func (t faultTarget) ConnectService(ctx context.Context, appName string) (sqldb.Conn, error) {
	return t.e.target.Connect(ctx, appName)
}

// serverFaultTimeout bounds a restart or crash of the temporary server once struck.
const serverFaultTimeout = 2 * time.Minute

// struck is the context a server fault finishes in once it has begun: not the injector's, which
// is cancelled when the load ends — a restart stopped halfway would leave the server down and
// fail a run whose load had finished while the server was stopping.
func struck(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), serverFaultTimeout)
}

func (t faultTarget) RestartPostgres(ctx context.Context) error {
	ctx, cancel := struck(ctx)
	defer cancel()
	return t.e.db.restart(ctx)
}

func (t faultTarget) CrashPostgres(ctx context.Context) (string, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	return t.e.db.crash(ctx)
}

func (t faultTarget) RestartPooler(ctx context.Context) (string, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	return t.e.pooler.Restart(ctx)
}

func (t faultTarget) PausePooler(ctx context.Context, d time.Duration) (string, error) {
	return t.e.pooler.Pause(ctx, d)
}

func (t faultTarget) Flushers() (pause, resume func(), ok bool) {
	if pause, resume, ok := t.r.backend.Flushers(); ok {
		return pause, resume, true
	}
	if f := t.wl.FlushLoop; f != nil {
		return f.Pause, f.Resume, true
	}
	return nil, nil, false
}

func (t faultTarget) Hook(kind string) faults.Hook { return t.wl.Faults[kind] }

func (t faultTarget) Path(target string) (faults.Path, error) { return t.e.path(target) }

func (t faultTarget) Mode() string { return t.r.Mode }

// faultOutcome is how the run's requests came through its timed faults (nil without any).
func faultOutcome(events []results.FaultEvent, res *load.Result) *results.FaultOutcome {
	if !slices.ContainsFunc(events, func(ev results.FaultEvent) bool { return ev.AtMs > 0 || ev.Duration > 0 }) {
		return nil
	}
	o := &results.FaultOutcome{Succeeded: res.Completed + res.WarmupCompleted, Failed: res.Failed + res.WarmupFailed,
		FailedByClass: res.ErrorCounts, RetriesByClass: res.Retries.ByClass, LongestRequestMs: units.Ms(res.Longest)}
	for n, count := range res.Retries.Tries {
		if n > 1 {
			o.Retried += count
		}
	}
	seen := map[string]bool{}
	for class := range res.ErrorCounts {
		if by := endedBy(class); !seen[by] {
			seen[by] = true
			o.EndedBy = append(o.EndedBy, by)
		}
	}
	for class := range res.Retries.ByClass {
		if by := endedBy(class); !seen[by] {
			seen[by] = true
			o.EndedBy = append(o.EndedBy, by)
		}
	}
	slices.Sort(o.EndedBy)
	if len(o.EndedBy) == 0 {
		o.EndedBy = []string{"fault window"}
	}
	return o
}

// endedBy names what an error class says ended a request: a timeout, or the connection.
func endedBy(class string) string {
	switch class {
	case "57014":
		return "statement_timeout"
	case "55P03":
		return "lock_timeout"
	case "deadline_exceeded":
		return "deadline"
	case "acquire_timeout", "pool_acquire":
		return "pool_acquire"
	case "conn_closed", "conn_error", "57P01", "08006", "08003", "08000":
		return "connection (" + class + ")"
	}
	return class
}
