// Package plotpage draws the HTML page of the report a suite binary has just written (--html)
// by running the baseline tool's plot command on it. The page is the one `baseline plot`
// draws, and the suite binary links no chart library: the plots, go-echarts and its script
// live in the baseline tool alone (testkit/cli's TestSuiteBinariesLinkNoPlotsNorComparisons
// keeps it so). The tool is looked for beside the running binary (make build puts every binary
// in bin/), then on PATH; this package never builds or installs it.
package plotpage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tool is the name of the binary that draws the page.
const Tool = "baseline"

// ErrNoTool: neither beside the running binary nor on PATH.
var ErrNoTool = errors.New("--html needs the " + Tool + " tool beside this binary or on PATH (make build puts both in bin/)")

// Locate returns the path of the baseline tool: beside the running executable, else on PATH.
func Locate() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), Tool)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(Tool); err == nil {
		return p, nil
	}
	return "", ErrNoTool
}

// Write draws the page of report (a report file, its samples beside it) into page with tool.
func Write(ctx context.Context, tool, report, page string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, tool, "plot", report, "--output", page)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s plot %s: %v: %s", tool, report, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
