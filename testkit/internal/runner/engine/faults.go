package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/soak"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
)

// faultTarget is what package faults acts on during one run: the run's database and server,
// its flushers and the hooks its workload brings.
type faultTarget struct {
	e  *engine
	r  *run
	wl *testkit.Workload
}

// startFaults schedules the run's timed faults relative to now.
// With --fault-every the soak's rotation joins the --fault ones.
func (e *engine) startFaults(r *run, wl *testkit.Workload) *faults.Injector {
	list := append(slices.Clone(e.cfg.Faults), e.cfg.Rotation(e.info, r.suite.Mode())...)
	ft := faultTarget{e: e, r: r, wl: wl}
	var t faults.Target = ft
	if redis, ok := r.backend.(faults.RedisTarget); ok {
		t = redisFaultTarget{ft, redis}
	}
	return faults.Start(e.hardCtx, t, list)
}

// redisFaultTarget is the faultTarget of a run whose backend strikes the Redis faults.
type redisFaultTarget struct {
	faultTarget
	faults.RedisTarget
}

// soakFigures are a --fault-every run's drift and recovery times (nil without it).
func (e *engine) soakFigures(in *faults.Injector, events []results.FaultEvent, mon *monitor.Monitor, end time.Time) *results.Soak {
	if e.cfg.FaultEvery <= 0 {
		return nil
	}
	var struck []soak.Fault
	for _, ev := range events {
		if ev.Error == "" && slices.Contains(faults.Timed, ev.Kind) {
			struck = append(struck, soak.Fault{Kind: ev.Kind, At: in.Started().Add(time.Duration(ev.AtMs * float64(time.Millisecond)))})
		}
	}
	return soak.Analyze(mon.Series(), in.Started(), end, struck)
}

func (t faultTarget) Connect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.e.target.ConnectDirect(ctx, appName)
}

// ConnectService opens a connection as the load's pool does: through the Route.
func (t faultTarget) ConnectService(ctx context.Context, appName string) (*pgx.Conn, error) {
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
	return t.e.pg.Restart(ctx)
}

func (t faultTarget) CrashPostgres(ctx context.Context) (string, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	recovered, err := t.e.pg.Crash(ctx)
	if err != nil {
		return "", err
	}
	if !recovered {
		return "", errors.New("the server came back, but its log shows no crash recovery")
	}
	return "server killed without a checkpoint (immediate stop), started again on the same port and data; crash recovery ran", nil
}

func (t faultTarget) RestartPooler(ctx context.Context) (string, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	return t.e.pooler.restart(ctx)
}

func (t faultTarget) PausePooler(ctx context.Context, d time.Duration) (string, error) {
	return t.e.pooler.pause(ctx, d)
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
