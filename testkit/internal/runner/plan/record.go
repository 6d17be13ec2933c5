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
	rc.Modes, rc.Faults = testkit.ModeNames(p.Modes), c.faultsRaw
	rc.ManagedPostgres, rc.PostgresURL, rc.MySQLURL = p.DatabaseURL() == "", database.RedactURL(p.PostgresURL), database.RedactURL(p.MySQLURL)
	rc.RedisURL, rc.PoolerURL = database.RedactURL(p.RedisURL), database.RedactURL(p.PoolerURL)
	p.recorded = rc
	p.suiteFlags = map[string]any{}
	c.fs.VisitAll(func(f *pflag.Flag) {
		if own[f.Name] {
			p.suiteFlags[f.Name] = flagValue(f)
		}
	})
}

// RunConfig is what the report records of a run at rung (Rungs) that makes requests requests
// (0: bound by --duration): the plan's settings, each axis of the rung at its value.
func (c *Plan) RunConfig(rung results.Position, requests int64) results.RunConfig {
	rc := c.recorded
	rc.Requests = requests
	for name, v := range rung {
		results.AxisNamed(name).Set(&rc, v)
	}
	return results.NewRunConfig(rc, c.suiteFlags)
}
