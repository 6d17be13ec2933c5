// Package metricstest scrapes a metrics endpoint the way Prometheus does, for tests: it
// parses the text format with Prometheus's own parser and flattens it into series keys.
package metricstest

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one scrape: Series key → value; a histogram's value is its sample count.
type Scrape map[string]float64

// Endpoint finds the URL an invocation announced on stderr ("metrics on http://.../metrics").
var Endpoint = regexp.MustCompile(`metrics on (http://\S+/metrics)`)

// Get scrapes url once.
func Get(url string) (Scrape, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the scrape: %w", err)
	}
	out := Scrape{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := Series(name, labels...)
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[key] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return out, nil
}

// Series is the key of a series: its name and its "label=value" pairs, sorted.
func Series(name string, labels ...string) string {
	sorted := append([]string(nil), labels...)
	sort.Strings(sorted)
	return name + "{" + strings.Join(sorted, ",") + "}"
}

// Decreased lists the counters and histograms of earlier that are lower, or gone, in later.
func Decreased(earlier, later Scrape) []string {
	var out []string
	for k, v := range earlier {
		if !strings.Contains(k, "_total{") && !strings.Contains(k, "_seconds{") {
			continue
		}
		if now, ok := later[k]; !ok {
			out = append(out, k+" disappeared")
		} else if now < v {
			out = append(out, fmt.Sprintf("%s went down from %v to %v", k, v, now))
		}
	}
	sort.Strings(out)
	return out
}
