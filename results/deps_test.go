package results_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPlainReportTypes keeps the report types plain data: package results depends on the
// standard library and results/units (which depends on the standard library only, its own
// test says so), so that anything (a service, the engine, the baseline tool) can read a report
// without pulling in the rendering (results/render, go-echarts) or anything else.
func TestPlainReportTypes(t *testing.T) {
	const pkg = "github.com/hotspotkit/hotspotkit/results"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps printed nothing (the package itself should be listed)")
	}
	for _, p := range deps {
		if p != pkg && p != pkg+"/units" {
			t.Errorf("results depends on %s: the report types may import the standard library and results/units only", p)
		}
	}
}
