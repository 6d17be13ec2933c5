package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/internal/soak"
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
	return faults.Start(e.hardCtx, faultTarget{e: e, r: r, wl: wl}, list)
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

// serverFaultTimeout bounds a restart or crash of the temporary server once struck.
const serverFaultTimeout = 2 * time.Minute

// struck is the context a server fault finishes in once it has begun: not the injector's, which
// is cancelled when the load ends — a restart stopped halfway, the server down and never
// started again, failed a run whose load had finished while the server was stopping.
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

// CrashRedis kills the managed redis-server. Just before, it counts the entries the stream
// holds not yet acknowledged, exactly: the consumers are paused (none holds a batch read but
// not acknowledged), every write command is held by CLIENT PAUSE WRITE (no entry added or
// acknowledged from then on), the count is read, and the consumers resumed — their next
// command waits on the paused server and dies with it.
func (t faultTarget) CrashRedis(ctx context.Context, down time.Duration) (string, error) {
	rt := t.e.redis
	if !rt.Managed() { // before pausing the consumers of a server it cannot crash
		return "", redisrun.ErrNotManaged
	}
	held := "an unknown number of"
	if q := t.r.Backend; q != nil && q.Stream != nil {
		q.Pause()
		n, err := rt.FreezeAndCount(ctx, q.Stream.Streams)
		q.Resume()
		if err == nil {
			held = fmt.Sprint(n)
		}
	}
	if err := rt.Crash(ctx, down); err != nil {
		return "", err
	}
	return fmt.Sprintf("redis-server SIGKILLed holding %s entries not yet acknowledged, started again after %s on the same port and data (appendonly %s)",
		held, down, t.e.cfg.RedisPersist), nil
}

// FailoverRedis kills a master of the managed cluster, counting what it held as CrashRedis
// does (redisrun.Target.Failover).
func (t faultTarget) FailoverRedis(ctx context.Context) (string, time.Duration, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	var hold, release func()
	base := ""
	if q := t.r.Backend; q != nil && q.Stream != nil {
		hold, release, base = q.Pause, q.Resume, q.Stream.Key
	}
	return t.e.redis.Failover(ctx, base, hold, release)
}

// ReshardRedis moves the slots the queue uses on a master of the managed cluster to another.
func (t faultTarget) ReshardRedis(ctx context.Context) (string, time.Duration, error) {
	ctx, cancel := struck(ctx)
	defer cancel()
	return t.e.redis.Reshard(ctx)
}

func (t faultTarget) Flushers() (pause, resume func(), ok bool) {
	switch {
	case t.r.Backend != nil && t.r.Backend.Pause != nil:
		return t.r.Backend.Pause, t.r.Backend.Resume, true
	case t.wl.Flusher != nil:
		return t.wl.Flusher.Pause, t.wl.Flusher.Resume, true
	}
	return nil, nil, false
}

func (t faultTarget) Hook(kind string) faults.Hook { return t.wl.Faults[kind] }

func (t faultTarget) Path(target string) (faults.Path, error) { return t.e.path(target) }

func (t faultTarget) Mode() string { return t.r.Mode }
