package merge

import (
	"errors"

	"github.com/hotspotkit/hotspotkit/results"
)

// network joins what the processes' probes measured of their paths to PostgreSQL and to
// Redis (a run's, or the environment's): each path's round trips from the union of the
// processes' histograms, probes and probe errors summed. Each process measured its own path
// (on other hosts, other networks); the merged figure is the distribution over all of them,
// and the processes' own stay in the merged report's process list.
func (m *merger) network(nets []*results.Network) *results.Network {
	var pg, redis []*results.NetworkPath
	for _, n := range nets {
		if n == nil {
			continue
		}
		if n.Postgres != nil {
			pg = append(pg, n.Postgres)
		}
		if n.Redis != nil {
			redis = append(redis, n.Redis)
		}
	}
	out := &results.Network{Postgres: m.path("PostgreSQL", pg), Redis: m.path("Redis", redis)}
	if out.Postgres == nil && out.Redis == nil {
		return nil
	}
	return out
}

// path joins one server's paths (nil for none, or when a report lacks the histograms).
// The configured delay is one for all (it shapes the work: check refused processes that
// differ in it); whether the proxy was in the path may differ (--db-rtt 0 on some only).
func (m *merger) path(server string, paths []*results.NetworkPath) *results.NetworkPath {
	if len(paths) == 0 {
		return nil
	}
	out := &results.NetworkPath{}
	var rtt, direct []encodedHist
	proxied := 0
	for _, p := range paths {
		if p.Proxied {
			proxied++
			out.ConfiguredRTTMs, out.JitterMs = p.ConfiguredRTTMs, p.JitterMs
		}
		out.Probes += p.Probes
		out.ProbeErrors += p.ProbeErrors
		rtt = append(rtt, encodedHist{p.RTTHistogram, p.Probes})
		if p.DirectRTTMs != nil {
			direct = append(direct, encodedHist{p.DirectRTTHistogram, p.DirectRTTMs.Count})
		}
	}
	out.Proxied = proxied == len(paths)
	if proxied > 0 && !out.Proxied {
		m.note("some processes reached %s through the delaying proxy and some directly: the merged network says directly", server)
		out.ConfiguredRTTMs, out.JitterMs = 0, 0
	}
	var err error
	if out.RTTMs, out.RTTHistogram, err = union("rtt_histogram", rtt); err != nil {
		if errors.Is(err, errNoHistogram) {
			m.note("a report before schema_version 10 has its probes' round trips but not their histogram: the merged report leaves the network to %s out", server)
		} else {
			m.note("the probes' round trips to %s could not be merged (%v): the merged report leaves them out", server, err)
		}
		return nil
	}
	if out.RTTMs.Count == 0 {
		out.RTTHistogram = ""
	}
	if len(direct) > 0 && out.Proxied {
		d, enc, err := union("direct_rtt_histogram", direct)
		if err == nil {
			out.DirectRTTMs, out.DirectRTTHistogram = &d, enc
		}
	}
	return out
}
