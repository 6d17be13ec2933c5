package plan

import "github.com/hotspotkit/hotspotkit/testkit/internal/keydist"

// Skewed hot keys (--hot-key-dist): a suite with hot sets (Info.HotSets: the ones built on
// package counters) spreads its requests over the --hot-keys sets by this distribution. The
// plan only parses, validates and records it; the suite picks each request's set
// (testkit.Config.HotSet).

func (c *parser) registerHotKeyDist() {
	c.fs.StringVar(&c.hotKeyDistRaw, "hot-key-dist", "uniform", "counter suites: how requests spread over the --hot-keys sets of hot rows: uniform (request i writes set i mod --hot-keys), zipf:θ (rank r with probability ∝ 1/(r+1)^θ; YCSB's θ is 0.99) or exponential:λ (pgbench's random_exponential; the larger λ, the more on the first sets)")
	if !c.HotSets {
		_ = c.fs.MarkHidden("hot-key-dist")
	}
}

// validateHotKeyDist parses --hot-key-dist over --hot-keys (checked before: at least 1).
func (c *parser) validateHotKeyDist(bad func(string, ...any)) {
	if !c.HotSets && c.fs.Changed("hot-key-dist") {
		bad("--hot-key-dist: %s has no hot sets to spread its requests over", c.info.Name)
		return
	}
	if c.HotKeys < 1 {
		return
	}
	d, err := keydist.ParseHotKeyDist(c.hotKeyDistRaw, c.HotKeys)
	if err != nil {
		bad("%v", err)
		return
	}
	c.HotKeyDist = d
}
