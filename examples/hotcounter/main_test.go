package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/racebuild"
)

// TestExampleRunsVerified builds the example as its README command does and runs its two
// default modes on a temporary server the engine starts; both must verify.
func TestExampleRunsVerified(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hotcounter")
	build := exec.Command("go", append(append([]string{"build"}, racebuild.GoFlags()...), "-o", bin, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "report.json")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--requests", "1000", "--concurrency", "50", "--hot-keys", "3",
		"--modes", "sync,async-compact", "--calibrate=false", "--output", out)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// Read the report as any outside tool would: plain JSON.
	var rep struct {
		Runs []struct {
			Mode string `json:"mode"`
			Load struct {
				Completed int64 `json:"completed_requests"`
			} `json:"load"`
			Verification struct {
				Passed bool `json:"passed"`
			} `json:"verification"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, r := range rep.Runs {
		modes = append(modes, r.Mode)
		if !r.Verification.Passed || r.Load.Completed != 1000 {
			t.Errorf("%s: verified %v, completed %d of 1000", r.Mode, r.Verification.Passed, r.Load.Completed)
		}
	}
	if strings.Join(modes, ",") != "sync,async-compact" {
		t.Errorf("runs %v, want sync and async-compact", modes)
	}

	// A fault the example does not declare is refused before any server starts.
	stderr.Reset()
	cmd = exec.Command(bin, "--fault", "restart-postgres@1s")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 ||
		!strings.Contains(stderr.String(), "hotcounter cannot take restart-postgres") {
		t.Errorf("undeclared fault: %v\n%s", err, stderr.String())
	}
}

// TestExampleNeedsOnlyThePublicAPI: the example imports testkit (and testkit/cli for its main)
// and nothing else of ours.
func TestExampleNeedsOnlyThePublicAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/hotspotkit/hotspotkit/") &&
			p != "github.com/hotspotkit/hotspotkit/testkit" && p != "github.com/hotspotkit/hotspotkit/testkit/cli" {
			t.Errorf("the example imports %s", p)
		}
	}
}
