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
	p.recordDatabase(&rc)
	rc.RedisURL, rc.PoolerURL = database.RedactURL(p.RedisURL), database.RedactURL(p.PoolerURL)
	p.recorded = rc
	p.suiteFlags = map[string]any{}
	c.fs.VisitAll(func(f *pflag.Flag) {
		if own[f.Name] {
			p.suiteFlags[f.Name] = flagValue(f)
		}
	})
}

// RunConfig is what the report records of a run at rung (Rungs, or a trial of --advise) that
// makes requests requests (0: bound by --duration): the plan's settings, each axis of the rung
// at its value, and as its ladder the values stepped over on each axis of the rung (a search's
// trial stands on the axes its mode uses, a headroom's step on the load's too, whose values
// it alone knows).
func (c *Plan) RunConfig(rung results.Position, requests int64) results.RunConfig {
	rc := c.recorded
	rc.Requests = requests
	rc.Ladder = nil
	for name, v := range rung {
		results.AxisNamed(name).Set(&rc, v)
		if rc.Ladder == nil {
			rc.Ladder = map[string][]results.Value{}
		}
		rc.Ladder[name] = c.Ladder[name]
		if len(rc.Ladder[name]) == 0 {
			rc.Ladder[name] = []results.Value{v}
		}
	}
	return results.NewRunConfig(rc, c.suiteFlags)
}

// recordDatabase sets what rc says of the plan's database: whether the kit starts it, and its
// URLs, redacted.
func (p *Plan) recordDatabase(rc *results.RunConfig) {
	rc.ManagedPostgres, rc.PostgresURL, rc.MySQLURL = p.DatabaseURL() == "", database.RedactURL(p.PostgresURL), database.RedactURL(p.MySQLURL)
}
