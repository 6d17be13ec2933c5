package sqldb_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeafDependencies keeps sqldb what the queue, a library a service imports, can take
// along: it depends on its drivers and on nothing of this module.
func TestLeafDependencies(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	out, err := exec.Command("go", "list", "-deps", module+"sqldb").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps printed nothing")
	}
	for _, p := range deps {
		if strings.HasPrefix(p, module) && p != module+"sqldb" {
			t.Errorf("sqldb depends on %s: it imports nothing of this module", p)
		}
	}
}
