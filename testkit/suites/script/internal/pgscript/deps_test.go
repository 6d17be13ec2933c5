package pgscript

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencies keeps the script language and the key distributions free of SQL execution
// and of suites and the engine: they import the standard library and, for pgscript, keydist;
// nothing else.
func TestDependencies(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	allowed := map[string][]string{
		"testkit/internal/runner/keydist":         nil,
		"testkit/suites/script/internal/pgscript": {"testkit/internal/runner/keydist"},
	}
	for pkg, ours := range allowed {
		out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s printed nothing", pkg)
		}
		for _, dep := range deps {
			rel, inModule := strings.CutPrefix(dep, module)
			switch {
			case inModule && rel != pkg && !slices.Contains(ours, rel):
				t.Errorf("%s depends on %s", pkg, dep)
			case !inModule && strings.Contains(strings.Split(dep, "/")[0], "."):
				t.Errorf("%s depends on %s, outside the standard library", pkg, dep)
			}
		}
	}
}
