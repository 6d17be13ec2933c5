package cli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuiteBinariesLinkNoPlotsNorComparisons keeps out of every suite binary what only the
// baseline tool uses: go-echarts (and the 1.1 MB ECharts script it is shipped with, package
// results/render/plot), and the comparisons of baseline compare and baseline ab (package
// results/render/judge). What a binary links through cli — the engine, the summary table of
// results/render — must need neither. The A/B verdict's statistics (results/verdict, and
// golang.org/x/perf's Mann-Whitney test under it) are a suite binary's since --advise judges
// its winner against its runner-up with them (testkit/internal/runner/advise): five packages.
func TestSuiteBinariesLinkNoPlotsNorComparisons(t *testing.T) {
	const module = "github.com/hotspotkit/hotspotkit/"
	// Each with every package below it.
	banned := []string{"github.com/go-echarts", module + "results/render/plot", module + "results/render/judge"}
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	binaries := []string{module + "testkit/cli", module + "examples/hotcounter"}
	for _, p := range list(module + "cmd/...") {
		if strings.HasSuffix(p, "_baseline") {
			binaries = append(binaries, p)
		}
	}
	if len(binaries) < 6 {
		t.Fatalf("found only %v", binaries)
	}
	// One line per binary: its import path, then every package it links.
	for _, line := range list(append([]string{"-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, binaries...)...) {
		deps := strings.Fields(line)
		for _, dep := range deps[1:] {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s links %s", deps[0], dep)
				}
			}
		}
	}
}

// TestTreeHoldsNoBinary: git tracks no compiled program or object (an ELF file, a Mach-O or a
// PE): a build's output belongs in bin/ (ignored), never in the repository.
func TestTreeHoldsNoBinary(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := strings.TrimSpace(string(root))
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 50 {
		t.Fatalf("git ls-files found only %d files", len(files))
	}
	magics := [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {'M', 'Z'}}
	for _, f := range files {
		head := make([]byte, 4)
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			continue // a symbolic link to a directory, a file deleted in the work tree
		}
		n, _ := io.ReadFull(fh, head)
		fh.Close()
		for _, m := range magics {
			if n >= len(m) && bytes.Equal(head[:len(m)], m) {
				t.Errorf("git tracks a binary: %s", f)
			}
		}
	}
}
