// Package suitetest runs a suite in tests the way its binary runs: through testkit.Execute,
// with a real report file, against the shared test server of testkit/testdb. Suites' tests
// use it instead of each writing their own harness.
package suitetest

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

// Run executes s with args (plus --output) and returns the exit code, the report and stderr.
// A run that writes no report fails the test.
func Run(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout, stderr bytes.Buffer
	code := testkit.Execute(s, append(args, "--output", out), &stdout, &stderr)
	rep, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\nstderr:\n%s", code, err, stderr.String())
	}
	return code, rep, stderr.String()
}

// Shared returns the flags that point a run at the shared test server (a schema of its own).
func Shared(t *testing.T) []string {
	t.Helper()
	return []string{"--postgres-url", testdb.Server(t).DSN()}
}
