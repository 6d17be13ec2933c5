package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// The settings results.RunConfig declares: each of its fields with a usage tag is a flag of
// every suite, registered here from the field's tags (its name, default, help, bounds) and
// bound to the field, so that what the command line set is what the report records (record.go)
// and what baseline compare pairs runs by, with nothing copied between. A new setting is a
// field of RunConfig and the code that reads it (as c.TheSetting); what it must agree with
// among the other flags, if anything, is a line of validate.

// Settings is the report's RunConfig as the flags set it. It is a struct of its own, embedded
// in Plan, so that the Plan's RunConfig method stays and the settings are the Plan's fields one
// level below its own and its other embedded structs': where one of those has a setting's name
// (a typed view, as QueueFull, Role, HotKeyDist and OpenLoop's Arrivals), it comes first, and
// the setting is c.Settings.Name.
type Settings struct{ results.RunConfig }

// registerSettings registers the settings not registered yet, in RunConfig's field order,
// through the one whose flag is through ("": all that are left).
func (c *parser) registerSettings(through string) {
	all := results.Settings()
	for c.registered < len(all) {
		s := all[c.registered]
		c.registered++
		if s.Usage != "" {
			c.registerSetting(s)
			c.registerLadders(s) // ladder.go
		}
		if through != "" && s.Flag == through {
			return
		}
	}
	if through != "" {
		panic("plan: no setting --" + through + " among the settings left to register")
	}
}

// registerSetting registers s, bound to its field of c.Settings; a setting in milliseconds
// takes a Go duration, which checkSettings sets into its field once the flags are parsed (a
// duration flag of pflag's own writes its defaults as every other duration flag does).
func (c *parser) registerSetting(s results.Setting) {
	fs := c.fs
	switch p := s.Addr(&c.Settings.RunConfig).(type) {
	case *int:
		fs.IntVar(p, s.Flag, 0, s.Usage)
	case *int64:
		fs.Int64Var(p, s.Flag, 0, s.Usage)
	case *bool:
		fs.BoolVar(p, s.Flag, false, s.Usage)
	case *string:
		if s.Enum != nil {
			fs.Var(&enumValue{p, s.Enum}, s.Flag, s.Usage)
		} else {
			fs.StringVar(p, s.Flag, "", s.Usage)
		}
	case *float64:
		if s.Unit == results.UnitMs {
			fs.Duration(s.Flag, 0, s.Usage)
		} else {
			fs.Float64Var(p, s.Flag, 0, s.Usage)
		}
	default:
		panic(fmt.Sprintf("plan: --%s: a setting of type %T", s.Flag, p)) // results refuses its tags
	}
	f := fs.Lookup(s.Flag)
	if s.Default != "" {
		if err := f.Value.Set(s.Default); err != nil {
			panic(fmt.Sprintf("plan: --%s: default %q: %v", s.Flag, s.Default, err))
		}
		f.DefValue = f.Value.String()
	}
	f.Hidden = s.Hidden
}

// checkSettings sets each setting in milliseconds from its flag's duration, and checks every
// setting against the bounds its tags give.
func (c *parser) checkSettings(bad func(string, ...any)) {
	for _, s := range results.Settings() {
		if s.Usage == "" {
			continue
		}
		p := s.Addr(&c.Settings.RunConfig)
		if s.Unit == results.UnitMs {
			d, err := c.fs.GetDuration(s.Flag)
			if err != nil {
				panic(err) // registered as a duration
			}
			*p.(*float64) = results.Milliseconds(d)
		}
		if s.Min == "" && s.Max == "" {
			continue
		}
		var v float64
		switch p := p.(type) {
		case *int:
			v = float64(*p)
		case *int64:
			v = float64(*p)
		case *float64:
			v = *p
		}
		lo, hi := bound(s.Min, v), bound(s.Max, v)
		switch {
		case v >= lo && v <= hi:
		case s.Min != "" && s.Max != "":
			bad("--%s must be %s..%s", s.Flag, s.Min, s.Max)
		case s.Min == "0":
			bad("--%s must not be negative", s.Flag)
		case s.Min != "":
			bad("--%s must be at least %s", s.Flag, s.Min)
		default:
			bad("--%s must be at most %s", s.Flag, s.Max)
		}
	}
}

// bound is a min or max tag's number (results checked it is one), or none's: v.
func bound(tag string, none float64) float64 {
	if tag == "" {
		return none
	}
	b, _ := strconv.ParseFloat(tag, 64)
	return b
}

// views sets the Plan's typed views of its settings (see Plan).
func (c *Plan) views() {
	ms := results.Duration
	c.Duration, c.Warmup, c.DrainTimeout = ms(c.DurationMs), ms(c.WarmupMs), ms(c.DrainTimeoutMs)
	c.RequestTimeout, c.ReconcileTimeout, c.ShutdownTimeout = ms(c.RequestTimeoutMs), ms(c.ReconcileTimeoutMs), ms(c.ShutdownTimeoutMs)
	c.FaultEvery = ms(c.FaultEveryMs)
	c.ConnMaxLifetime, c.ConnMaxIdle = ms(c.ConnMaxLifetimeMs), ms(c.ConnMaxIdleMs)
	c.QueueFull, _ = queue.ParseFullPolicy(c.Settings.QueueFull) // one of its enum's (TestSettingsMirrorTheirPackages)
	c.PgDownload = pgserver.DownloadConfig{CachePath: c.PgDownloadCache, RepositoryURL: c.PgDownloadURL, Major: c.PgDownloadVersion}
	c.Ramp, c.MaxLag = ms(c.RampMs), ms(c.MaxLagMs)
	c.DBRTT, c.DBRTTJitter, c.RedisRTT, c.RedisRTTJitter = ms(c.DBRTTMs), ms(c.DBRTTJitterMs), ms(c.RedisRTTMs), ms(c.RedisRTTJitterMs)
	c.PoolerRTT = ms(c.PoolerRTTMs)
}

// enumValue is the flag of a setting with an enum tag: one of names, matched without regard to
// case and written as its name; its type, as --help shows it, is the names between bars.
type enumValue struct {
	p     *string
	names []string
}

func (v *enumValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}
func (v *enumValue) Type() string { return strings.Join(v.names, "|") }

func (v *enumValue) Set(s string) error {
	for _, name := range v.names {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			*v.p = name
			return nil
		}
	}
	last := len(v.names) - 1
	return fmt.Errorf("want %s or %s", strings.Join(v.names[:last], ", "), v.names[last])
}
