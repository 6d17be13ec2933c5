package units_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLoadNeedsNoRenderer: the load engine's progress line writes its figures through this
// package, which depends on the standard library only, and so the load engine links no renderer.
func TestLoadNeedsNoRenderer(t *testing.T) {
	for pkg, banned := range map[string]string{
		"github.com/hotspotkit/hotspotkit/results/units":                "github.com/hotspotkit/hotspotkit/",
		"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load": "github.com/hotspotkit/hotspotkit/results/render",
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, p := range strings.Fields(string(out)) {
			if p != pkg && strings.HasPrefix(p, banned) {
				t.Errorf("%s depends on %s", pkg, p)
			}
		}
	}
}
