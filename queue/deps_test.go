package queue_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeafDependencies keeps the queue a library a service can import: it and its backends
// depend on nothing of this module but the histogram package, the SQL handles (sqldb) and the
// queue's own internal packages, and on no report rendering.
func TestLeafDependencies(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	for _, pkg := range []string{"queue", "queue/redisq", "queue/redisq/redisqtest"} {
		out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s printed nothing", pkg)
		}
		for _, p := range deps {
			rel, ours := strings.CutPrefix(p, module)
			switch {
			case strings.Contains(p, "go-echarts"):
				t.Errorf("%s depends on %s (report rendering)", pkg, p)
			case ours && rel != "hist" && rel != "sqldb" && rel != pkg && !isQueueInternal(rel) && !strings.HasPrefix(pkg, rel+"/"):
				t.Errorf("%s depends on %s: only hist, sqldb, the packages above it and queue's internal ones may be imported from this module", pkg, p)
			}
		}
	}
}

// isQueueInternal reports whether rel is an internal package of the queue's.
func isQueueInternal(rel string) bool {
	return strings.HasPrefix(rel, "queue/") && strings.Contains(rel+"/", "/internal/")
}
