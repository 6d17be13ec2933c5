package plan

import "github.com/hotspotkit/hotspotkit/results"

// The pool-size ladder (--pool-levels, the pool's axis: ladder.go) steps the load's pgxpool
// MaxConns (--max-connections), one run per mode and size, each on fresh state and bounded by
// --duration or --requests as every run; the engine opens each run's pool at its config's
// size. Here: what the sizes must agree with beyond the ladders' rules.

// validatePool checks --min-connections against the smallest --pool-levels size.
func (c *parser) validatePool(bad func(string, ...any)) {
	if sizes := c.Ladder[results.AxisPool.Name]; len(sizes) > 0 && float64(c.MinConnections) > sizes[0].Num {
		bad("--min-connections %d is above the smallest %s size %s (the pool's minimum cannot exceed its size)",
			c.MinConnections, results.AxisPool.FlagName(), sizes[0])
	}
}
