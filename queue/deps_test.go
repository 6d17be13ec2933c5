package queue_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLeafDependencies keeps the queue a library a service can import: it and its backends
// depend on nothing of this module but the histogram package, and on no report rendering.
func TestLeafDependencies(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goCmd, "list", "-deps", module+"queue/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		t.Fatal("go list -deps printed nothing")
	}
	for _, p := range pkgs {
		rel, ours := strings.CutPrefix(p, module)
		switch {
		case strings.Contains(p, "go-echarts"):
			t.Errorf("queue depends on %s (report rendering)", p)
		case ours && rel != "hist" && rel != "queue" && !strings.HasPrefix(rel, "queue/"):
			t.Errorf("queue depends on %s: only queue/… and hist may be imported from this module", p)
		}
	}
}
