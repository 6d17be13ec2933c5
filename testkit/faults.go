package testkit

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/faults"
)

// faultTarget is what package faults acts on during one run: the run's database and server,
// its flushers and the hooks its workload brings.
type faultTarget struct {
	e  *engine
	r  *Run
	wl *Workload
}

// startFaults schedules the run's timed faults relative to now.
func (e *engine) startFaults(r *Run, wl *Workload) *faults.Injector {
	return faults.Start(e.hardCtx, faultTarget{e: e, r: r, wl: wl}, e.cfg.faults)
}

func (t faultTarget) Connect(ctx context.Context, appName string) (*pgx.Conn, error) {
	return t.e.target.Connect(ctx, appName)
}

func (t faultTarget) RestartPostgres(ctx context.Context) error {
	return t.e.target.Server.Restart(ctx)
}

func (t faultTarget) Flushers() (pause, resume func(), ok bool) {
	switch {
	case t.wl.Queue != nil && t.wl.Queue.Pause != nil:
		return t.wl.Queue.Pause, t.wl.Queue.Resume, true
	case t.wl.Flusher != nil:
		return t.wl.Flusher.Pause, t.wl.Flusher.Resume, true
	}
	return nil, nil, false
}

func (t faultTarget) Hook(kind string) faults.Hook { return t.wl.Faults[kind] }

func (t faultTarget) Mode() string { return t.r.Mode }
