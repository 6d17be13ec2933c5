package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSuiteAPIDoesNotLinkServersOrRedis: what a suite author imports (package testkit) needs
// neither the temporary server's package nor Redis: the engine picks the queue's backend and
// starts the servers, and hands a run only what it runs on.
func TestSuiteAPIDoesNotLinkServersOrRedis(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/hotspotkit/hotspotkit/testkit").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps found only %v", deps)
	}
	for _, dep := range deps {
		for _, banned := range []string{"/internal/pgserver", "/testkit/servers/redisserver", "/testkit/servers/pgbouncer", "/queue/redisq", "/internal/redisrun", "go-redis", "miniredis"} {
			if strings.Contains(dep, banned) {
				t.Errorf("package testkit links %s", dep)
			}
		}
	}
}
