package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExampleNeedsOnlyThePublicAPI: the example imports testkit and testkit/counters (and
// testkit/cli for its main) and nothing else of ours.
func TestExampleNeedsOnlyThePublicAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/hotspotkit/hotspotkit/") &&
			p != "github.com/hotspotkit/hotspotkit/testkit" && p != "github.com/hotspotkit/hotspotkit/testkit/counters" &&
			p != "github.com/hotspotkit/hotspotkit/testkit/cli" {
			t.Errorf("the example imports %s", p)
		}
	}
}
