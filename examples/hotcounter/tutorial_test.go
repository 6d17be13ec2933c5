package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/racebuild"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestTutorialSteps follows docs/writing-a-suite.md as a reader would: every command of a
// block marked <!-- step -->, in order, at the repository's root, as on a fresh clone: the new
// suite is a package of the module (examples/mycounter, removed again afterwards, and before
// if an interrupted run left it). A command written "! cmd" must fail; every other must
// succeed. Its first run's report then reads as plain JSON (every request of both modes
// completed and verified), and a fault the suite does not declare is refused with exit 2.
//
// The suite's runs take the tests' defaults (suitetest.Defaults: no calibration, the tests'
// pool), as every suite test's runs do: the tutorial's first run as written calibrates and
// opens the binary's pool of 64, several times the CPU (docs/testing.md), and what the test
// proves (each step works as the tutorial says) is not the pool's or the calibration's, which
// the suites' tests cover.
func TestTutorialSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tutorial's suite")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	steps := tutorialSteps(t, filepath.Join(root, "docs", "writing-a-suite.md"))
	if len(steps) < 5 {
		t.Fatalf("found %d commands in the tutorial's steps", len(steps))
	}
	repo := root
	mine := filepath.Join(root, "examples", "mycounter")
	os.RemoveAll(mine)
	t.Cleanup(func() { os.RemoveAll(mine) })
	tmp := t.TempDir() // the tutorial writes its reports to /tmp: keep them in the test's own
	for _, step := range steps {
		cmdline := withTestDefaults(strings.ReplaceAll(step, "/tmp/", tmp+"/"))
		mustFail := strings.HasPrefix(cmdline, "! ")
		cmdline = strings.TrimPrefix(cmdline, "! ")
		out, err := runStep(repo, cmdline)
		switch {
		case mustFail && err == nil:
			t.Fatalf("%s: succeeded, the tutorial says it fails\n%s", step, out)
		case !mustFail && err != nil:
			t.Fatalf("%s: %v\n%s", step, err, out)
		}
		t.Logf("%s: ok", step)
	}
	readAsJSON(t, filepath.Join(tmp, "mycounter.json"))
	// A fault the suite does not declare is refused before any server starts; go run exits 1
	// and names the program's own exit status.
	if out, err := runStep(repo, "go run ./examples/mycounter --fault kill-worker@1s"); err == nil ||
		!strings.Contains(out, "exit status 2") || !strings.Contains(out, "mycounter cannot take kill-worker") {
		t.Errorf("undeclared fault: %v\n%s", err, out)
	}
}

// withTestDefaults adds suitetest.Defaults to every run of the tutorial's suite in cmdline,
// right after its package (a flag given twice: the last wins, so a step's own
// --calibrate=false stays as written).
func withTestDefaults(cmdline string) string {
	const run = "go run ./examples/mycounter"
	return strings.ReplaceAll(cmdline, run, run+" "+strings.Join(suitetest.Defaults(), " "))
}

// runStep runs cmdline with bash in dir and returns its output, stdout and stderr together.
// The go commands build as this test was built (racebuild): the same packages, from the build
// cache, instead of the module compiled a second time.
func runStep(dir, cmdline string) (string, error) {
	cmd := exec.Command("bash", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = racebuild.Env(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// readAsJSON reads the tutorial's first report as any outside tool would, as plain JSON: its
// two modes, every request completed, each verified.
func readAsJSON(t *testing.T, path string) {
	t.Helper()
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
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, r := range rep.Runs {
		modes = append(modes, r.Mode)
		if !r.Verification.Passed || r.Load.Completed != 2000 {
			t.Errorf("%s: verified %v, completed %d of 2000", r.Mode, r.Verification.Passed, r.Load.Completed)
		}
	}
	if strings.Join(modes, ",") != "sync,async-compact" {
		t.Errorf("runs %v, want sync and async-compact", modes)
	}
}

// tutorialSteps are the command lines of the ```bash blocks that follow a <!-- step --> line.
func tutorialSteps(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []string
	marked, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "<!-- step -->":
			marked = true
		case marked && line == "```bash":
			in = true
		case in && line == "```":
			in, marked = false, false
		case in && line != "":
			steps = append(steps, line)
		}
	}
	return steps
}
