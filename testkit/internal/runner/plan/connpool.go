package plan

import (
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
)

// ConnPool is the load's pool beyond its size, typed: its minimum (--min-connections, a
// setting read as c.MinConnections) and how its connections churn, --conn-max-lifetime and
// --conn-max-idle (settings of RunConfig's, settings.go). The engine hands them to
// database.PoolOptions; a conn-storm fault churns sessions from outside the pool
// (StormSessions).
type ConnPool struct {
	ConnMaxLifetime, ConnMaxIdle time.Duration
}

// validateConnPool checks the pool's settings against each other.
func (c *parser) validateConnPool(bad func(string, ...any)) {
	if c.ConnMaxLifetime < 0 || c.ConnMaxIdle < 0 {
		bad("--conn-max-lifetime and --conn-max-idle must not be negative (0: never)")
	}
	if c.MinConnections > c.MaxConnections {
		bad("--min-connections %d is above --max-connections %d (the pool's minimum cannot exceed its size)", c.MinConnections, c.MaxConnections)
	}
}

// StormSessions is the most sessions a conn-storm of the invocation opens at once (they strike
// one at a time), from --fault or a --fault-every soak's rotation; 0: none. The temporary
// server's max_connections leaves room for them.
func (c *Plan) StormSessions() int {
	n := 0
	for _, f := range c.Faults {
		if f.Kind == faults.ConnStorm {
			n = max(n, f.Sessions)
		}
	}
	if c.FaultEvery > 0 {
		n = max(n, faults.DefaultStormSessions)
	}
	return n
}
