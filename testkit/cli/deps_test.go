package cli_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSuiteBinariesLinkNeitherPlotsNorStatistics keeps out of every suite binary what only the
// baseline tool uses: go-echarts (and the 1.1 MB ECharts script it is shipped with, package
// results/render/plot), and golang.org/x/perf's statistics (the verdicts of baseline compare and
// baseline ab, packages results/render/judge and results/verdict). What a binary links through
// cli — the engine, the summary table of results/render — must need neither.
func TestSuiteBinariesLinkNeitherPlotsNorStatistics(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	// Each with every package below it.
	banned := []string{"github.com/go-echarts", "golang.org/x/perf", module + "results/render/plot",
		module + "results/render/judge", module + "results/verdict"}
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	binaries := []string{module + "testkit/cli", module + "examples/hotcounter"}
	for _, p := range list(module + "cmd/...") {
		if strings.HasSuffix(p, "_baseline") {
			binaries = append(binaries, p)
		}
	}
	if len(binaries) < 6 {
		t.Fatalf("found only %v", binaries)
	}
	// One line per binary: its import path, then every package it links.
	for _, line := range list(append([]string{"-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, binaries...)...) {
		deps := strings.Fields(line)
		for _, dep := range deps[1:] {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s links %s", deps[0], dep)
				}
			}
		}
	}
}
