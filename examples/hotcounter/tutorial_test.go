package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/racebuild"
)

// TestTutorialSteps follows docs/writing-a-suite.md as a reader would: every command of a
// block marked <!-- step -->, in order, at the repository's root, as on a fresh clone: the new
// suite is a package of the module (examples/mycounter, removed again afterwards, and before
// if an interrupted run left it). A command written "! cmd" must fail; every other must
// succeed.
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
		cmdline := strings.ReplaceAll(step, "/tmp/", tmp+"/")
		mustFail := strings.HasPrefix(cmdline, "! ")
		cmdline = strings.TrimPrefix(cmdline, "! ")
		cmd := exec.Command("bash", "-c", cmdline)
		cmd.Dir = repo
		// The go commands build as this test was built (racebuild): the same packages, from
		// the build cache, instead of the module compiled a second time.
		cmd.Env = racebuild.Env(os.Environ())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		switch {
		case mustFail && err == nil:
			t.Fatalf("%s: succeeded, the tutorial says it fails\n%s", step, out.String())
		case !mustFail && err != nil:
			t.Fatalf("%s: %v\n%s", step, err, out.String())
		}
		t.Logf("%s: ok", step)
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
