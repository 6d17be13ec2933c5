package engine

import (
	"context"
	"errors"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
)

// The engine's side of production's network (plan.Network, package netpath): the service's
// paths put in place once, the round trip set per run, the probes one of each run's
// instruments, and every run's probes in the report's environment.

// routePostgres puts the service's connections to PostgreSQL through a proxy when the flags
// ask for one (the temporary server, or a --postgres-url over TCP).
func (e *engine) routePostgres() error {
	c := e.cfg
	n, err := netpath.Open(e.target, netpath.Config{DBRTT: c.DBRTT, DBJitter: c.DBRTTJitter, RedisRTT: c.RedisRTT,
		RedisJitter: c.RedisRTTJitter, ProxyDB: c.ProxiesDB(), ProxyRedis: c.ProxiesRedis(), RTTLadder: c.Steps(results.AxisRTT)})
	if errors.Is(err, netpath.ErrNeedsTCP) {
		return usageError{err}
	}
	e.net = n
	return err
}

// setRunRTT gives the run its round trip to PostgreSQL (an --rtt-levels rung).
func (e *engine) setRunRTT(r *run) error { return e.net.SetRTT(r.rtt) }

// path is the network faults' path to target.
func (e *engine) path(target string) (faults.Path, error) {
	if target == faults.NetPooler {
		return e.pooler.Path()
	}
	return e.net.Path(target)
}

// finishNetwork records every run's probes in the environment.
func (e *engine) finishNetwork() {
	if env := e.net.Environment(); env != nil {
		e.report.Environment.Network = env
	}
}

// probes measure round trips over the run's paths while it goes on (netpath.Probe), into the
// run's Network; the transactions they ran on PostgreSQL are not the run's.
type probes struct {
	e     *engine
	r     *run
	probe *netpath.Probe
}

func (p *probes) begin(context.Context) error {
	_, ping := p.r.backend.Server()
	p.probe = p.e.net.StartProbe(p.e.hardCtx, p.e.db.probe(), ping)
	return nil
}

func (p *probes) end(_ context.Context, _ ranLoad, out *results.Run) {
	out.Network = p.probe.Stop(p.r.rtt)
}

func (p *probes) observed() int64 { return p.probe.Transactions() }
