package plan

import "github.com/hotspotkit/hotspotkit/testkit/internal/runner/keydist"

// Skewed hot keys (--hot-key-dist): a suite with hot sets (Info.HotSets: the ones built on
// package counters) spreads its requests over the --hot-keys sets by this distribution. The
// plan only parses, validates and records it; the suite picks each request's set
// (testkit.Config.HotSet).

// hideHotKeyDist hides --hot-key-dist (a setting of RunConfig's, settings.go) from a suite
// without hot sets.
func (c *parser) hideHotKeyDist() {
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
	d, err := keydist.ParseHotKeyDist(c.Settings.HotKeyDist, c.HotKeys)
	if err != nil {
		bad("%v", err)
		return
	}
	c.HotKeyDist, c.Settings.HotKeyDist = d, d.String()
}
