package plan

// The pool-size ladder (--pool-levels): the load's pgxpool MaxConns (--max-connections) stepped
// over, one run per mode and size, each on fresh state and bounded by --duration or --requests
// as every run. The plan parses, bounds and records the sizes and lists them in Rungs; the
// engine opens each run's pool at its rung's size.

// MaxPoolLevel caps a --pool-levels size: far above any pool a service keeps in front of
// PostgreSQL, and below what the temporary server's max_connections can be set to.
const MaxPoolLevel = 10000

// registerPool registers --pool-levels, after --max-connections.
func (c *parser) registerPool() {
	c.fs.StringVar(&c.poolLevelsRaw, "pool-levels", "", "pool-size ladder over the load's connection pool (--max-connections), e.g. 4,8,16,32,64,128: one run per mode and size, each on fresh state")
}

// validatePool checks --pool-levels: positive integer sizes, and one ladder per invocation.
func (c *parser) validatePool(bad func(string, ...any)) {
	c.PoolLevels = ladderRungs(c.poolLevelsRaw, "--pool-levels", "a positive integer (a pool size)", positiveInt, bad)
	for _, n := range c.PoolLevels {
		if n > MaxPoolLevel {
			bad("--pool-levels: %d is above %d", n, MaxPoolLevel)
			break
		}
	}
	if len(c.PoolLevels) == 0 {
		return
	}
	switch {
	case c.fs.Changed("max-connections"):
		bad("--max-connections and --pool-levels exclude each other (--pool-levels sets the pool of each run)")
	case len(c.Levels) > 0 || len(c.SlotsLevels) > 0 || c.ratesRaw != "" || c.rttLevelsRaw != "":
		bad("--pool-levels cannot be combined with --levels, --slots-levels, --rates or --rtt-levels (one ladder per invocation)")
	case c.Settings.Role != "" && c.Settings.Role != "both":
		bad("--role %s cannot be combined with --pool-levels (every process of a split run must have the same pool)", c.Settings.Role)
	case c.MinConnections > c.PoolLevels[0]:
		bad("--min-connections %d is above the smallest --pool-levels size %d (the pool's minimum cannot exceed its size)", c.MinConnections, c.PoolLevels[0])
	}
}

// poolRungs are the pool sizes each mode runs at (Rungs crosses them with the other rungs):
// --pool-levels (recorded as the config's pool_levels, as --levels is), else --max-connections.
func (c *Plan) poolRungs() []int {
	if len(c.PoolLevels) > 0 {
		return c.PoolLevels
	}
	return []int{c.MaxConnections}
}

// MaxPool is the largest pool of any run (--pool-levels are in increasing order): the
// temporary server's max_connections and the calibration (once per invocation) are sized for
// it.
func (c *Plan) MaxPool() int {
	rungs := c.poolRungs()
	return rungs[len(rungs)-1]
}
