package plan

import (
	"net/url"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
)

// PoolerLink is the pooler between the service and PostgreSQL, typed: --pooler (settings of
// RunConfig's, settings.go) or --pooler-url, and the round trip of its hop from the service
// (--pooler-rtt). The engine starts or attaches it (package pooler).
type PoolerLink struct {
	PoolerRTT time.Duration
	// proxyPooler: --pooler-rtt or a network fault on the pooler's hop puts it through a proxy.
	proxyPooler bool
}

// Pooled says the service's connections go through a pooler.
func (c *Plan) Pooled() bool { return c.Settings.Pooler == "pgbouncer" || c.PoolerURL != "" }

// ProxiesPooler says the service reaches the pooler through the proxy.
func (p *PoolerLink) ProxiesPooler() bool { return p.proxyPooler }

// validatePooler checks the pooler's flags; it runs after the faults are parsed and after
// validateNetwork, which puts the pooler's hop through the proxy for a network fault on it.
func (c *parser) validatePooler(bad func(string, ...any)) {
	changed := c.fs.Changed
	if c.PoolerURL != "" {
		u, err := url.Parse(c.PoolerURL)
		switch {
		case err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "":
			bad("--pooler-url: want a PgBouncer admin console's URL, postgres://user:password@host:port/pgbouncer")
		case u.Path != "/pgbouncer":
			bad("--pooler-url %s is not a PgBouncer admin console (its database must be pgbouncer, e.g. postgres://user:password@host:6432/pgbouncer)", database.RedactURL(c.PoolerURL))
		}
		if changed("pooler") && c.Settings.Pooler == "none" {
			bad("--pooler none and --pooler-url exclude each other")
		}
		for _, f := range []string{"pooler-mode", "pooler-pool-size"} {
			if changed(f) {
				bad("--%s is --pooler-url's PgBouncer's own setting (the run reads it from its console): leave it out", f)
			}
		}
		if c.PostgresURL == "" {
			bad("--pooler-url needs --postgres-url: the server behind that PgBouncer (the run creates its schema there, and the monitor reads it directly)")
		}
		c.Settings.Pooler = "pgbouncer"
	}
	if !c.Pooled() {
		for _, f := range []string{"pooler-mode", "pooler-pool-size", "pooler-rtt"} {
			if changed(f) {
				bad("--%s needs --pooler pgbouncer or --pooler-url", f)
			}
		}
	}
	if err := netdelay.CheckRTT(c.PoolerRTT, 0); err != nil {
		bad("--pooler-rtt %s: %v", c.PoolerRTT, err)
	}
	c.proxyPooler = c.proxyPooler || changed("pooler-rtt") // or a net fault on it (validateNetwork)
	for _, f := range c.Faults {
		if f.IsSetting() && c.PoolerURL != "" {
			bad("--fault %s with --pooler-url: the session settings go on the pooler's server connections, which only --pooler pgbouncer configures", f)
		}
	}
}

// poolerMode is the pooler's pool mode as a suite reads it (testkit.Config.PoolerMode): ""
// without a pooler. With --pooler-url only the pooler's console says it, which the engine
// reads; until then, transaction, the mode that allows least.
func (c *Plan) poolerMode() string {
	switch {
	case !c.Pooled():
		return ""
	case c.PoolerURL != "":
		return "transaction"
	}
	return c.PoolerMode
}
