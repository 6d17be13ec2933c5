package plan

import (
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// record is what the report records of the plan for every run (RunConfig completes it per
// run): the settings as the flags set them (settings.go), with what the flags declared in code
// parsed into, and the suite's own flags (those its Flags registered, named in own) by flag
// name. Which of them shape the work, and which are left out when they have no effect, is
// results.RunConfig's to say.
func (c *parser) record(own map[string]bool) {
	p := c.Plan
	rc := p.Settings.RunConfig
	rc.Modes, rc.Faults, rc.RTTLevelsMs = testkit.ModeNames(p.Modes), c.faultsRaw, rttLevelsMs(p.RTTLevels)
	rc.ManagedPostgres, rc.PostgresURL = p.PostgresURL == "", database.RedactURL(p.PostgresURL)
	rc.RedisURL, rc.PoolerURL = database.RedactURL(p.RedisURL), database.RedactURL(p.PoolerURL)
	p.recorded = rc
	p.suiteFlags = map[string]any{}
	c.fs.VisitAll(func(f *pflag.Flag) {
		if own[f.Name] {
			p.suiteFlags[f.Name] = flagValue(f)
		}
	})
}

// RunConfig is what the report records of a run at rate (0: closed loop) with concurrency
// workers (or its ladder level), requests and slots (0: a suite without them).
func (c *Plan) RunConfig(rate float64, concurrency int, requests int64, slots int) results.RunConfig {
	rc := c.recorded
	rc.Rate, rc.Concurrency, rc.Requests, rc.Slots = rate, concurrency, requests, slots
	return results.NewRunConfig(rc, c.suiteFlags)
}
