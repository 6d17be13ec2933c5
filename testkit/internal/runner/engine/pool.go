package engine

import (
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// loadPool is the load's pool of run r: --max-connections, --min-connections and how its
// connections churn (--conn-max-lifetime, --conn-max-idle), the faults' session settings, the
// request path's tracer (requesttime.go, which also marks the requests that ran on a cold
// session), and when each connection opened (opened).
func (e *engine) loadPool(r *run, opened *connects, tracer *stmttime.Tracer) database.PoolOptions {
	c := e.cfg
	return database.PoolOptions{MaxConns: int32(r.Config.MaxConnections), MinConns: int32(c.MinConnections),
		MaxConnLifetime: c.ConnMaxLifetime, MaxConnIdle: c.ConnMaxIdle, Connected: opened.add,
		AppName: "hotspotkit-load", Settings: faults.SessionSettings(c.Faults, e.target.Dialect()), Tracer: tracer,
		FirstUse: load.NoteColdSession}
}

// connects is when a run's load pool opened each of its connections.
type connects struct {
	mu sync.Mutex
	at []time.Time
}

func (c *connects) add() {
	now := time.Now()
	c.mu.Lock()
	c.at = append(c.at, now)
	c.mu.Unlock()
}

// within counts the connections opened from from to to.
func (c *connects) within(from, to time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, t := range c.at {
		if !t.Before(from) && !t.After(to) {
			n++
		}
	}
	return n
}

// churnStats adds to l what the load's pool's sessions cost: the requests that ran on a cold
// session and their latency, and the connections the pool opened in the measured window.
func churnStats(l *results.Load, res *load.Result, opened *connects) {
	l.ConnectionsOpened = opened.within(res.MeasureStart, res.End)
	l.ColdSessionRequests = res.ColdSessions
	if res.ColdSessions == 0 {
		return
	}
	lat := results.Latency(res.ColdLatency.Summary())
	l.ColdSessionLatencyMs = &lat
	if enc, err := res.ColdLatency.Encode(); err == nil {
		l.ColdSessionHistogram = enc
	}
}

// sessionsNeeded is the most sessions the invocation holds on the server at once: the load's
// pool, the queue's workers, the suite's own pools, the engine's own (monitor, admin, fault
// injector, with headroom), the largest conn-storm's and a temporary pooler's pool.
// Through a temporary pooler, the service's sessions are the pooler's pool (poolerConns),
// however many its clients, and the calibration's direct pool holds the load's size as
// PostgreSQL sees it (serverPool).
func (e *engine) sessionsNeeded() int {
	c := e.cfg
	if n := poolerConns(c); n > 0 {
		return n + max(e.serverPool(), c.QueueWorkers) + extraConns
	}
	return c.MaxPool() + c.QueueWorkers + 2 + suiteConns(e.suite) + extraConns + c.StormSessions()
}

// serverPool is the most connections of the load's pool PostgreSQL holds at once: the largest
// pool of any run, or through a pooler no more than the pooler's own pool of server
// connections. The calibration measures the hot row on that many.
func (e *engine) serverPool() int {
	n := e.cfg.MaxPool()
	switch {
	case e.pooler.PoolSize() > 0: // the pooler in place
		n = min(n, e.pooler.PoolSize())
	case poolerConns(e.cfg) > 0:
		n = min(n, poolerConns(e.cfg))
	}
	return n
}
