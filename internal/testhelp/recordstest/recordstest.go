// Package recordstest finds the repository's committed records for the tests that read them:
// the recorded runs (records/runs), the baselines (records/baselines) and the A/B runs
// (records/ab). The records are a module of their own (records/go.mod) so that the module a
// service downloads holds none of them; they are there in a checkout, where the tests run.
// It is for tests only.
package recordstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir is the records directory of the checkout the test runs in: the first records/ holding
// a go.mod, looking up from the test's working directory.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "records", "go.mod")); err == nil {
			return filepath.Join(dir, "records")
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no records/go.mod above %s: the tests of the committed records run in a checkout", wd)
		}
	}
}

// Path is the committed record at rel, a slash-separated path under records/
// ("baselines/linux-amd64-2cpu-24gib/usage_counter_hotspot_baseline.json").
func Path(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(Dir(t), filepath.FromSlash(rel))
}

// Reports lists the committed files of the baselines and the recorded runs whose name ends in
// suffix (".json": the reports, not their ".samples.ndjson"). The A/B runs are left out: they
// hold baseline ab's verdicts, not reports.
func Reports(t testing.TB, suffix string) []string {
	t.Helper()
	root := Dir(t)
	var out []string
	for _, dir := range []string{"baselines", "runs"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no committed *%s under %s", suffix, root)
	}
	return out
}
