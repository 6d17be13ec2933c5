package cli_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSuiteBinariesDoNotLinkPlots keeps go-echarts (and the 1.1 MB ECharts script it is shipped
// with, package results/render/plot) out of every suite binary: what a binary links through
// cli — the engine, the summary table of results/render — must not need it. Only the baseline
// tool draws.
func TestSuiteBinariesDoNotLinkPlots(t *testing.T) {
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.Fields(string(out))
	}
	binaries := []string{"github.com/hotspotkit/hotspotkit/testkit/cli", "github.com/hotspotkit/hotspotkit/examples/hotcounter"}
	for _, p := range list("github.com/hotspotkit/hotspotkit/cmd/...") {
		if strings.HasSuffix(p, "_baseline") {
			binaries = append(binaries, p)
		}
	}
	if len(binaries) < 6 {
		t.Fatalf("found only %v", binaries)
	}
	for _, bin := range binaries {
		for _, dep := range list("-deps", bin) {
			if strings.Contains(dep, "go-echarts") || strings.HasSuffix(dep, "results/render/plot") {
				t.Errorf("%s links %s", bin, dep)
			}
		}
	}
}
