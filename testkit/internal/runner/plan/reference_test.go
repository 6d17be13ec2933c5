package plan

import (
	"bytes"
	"os"
	"testing"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suites/auxcounter"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/jobqueue"
	"github.com/hotspotkit/hotspotkit/testkit/suites/settlement"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// docs/flags.md is what the suite binaries' --help says; HOTSPOTKIT_UPDATE_DOCS=1 rewrites it.
func TestFlagsReference(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteReference(&buf, []testkit.Suite{usagecounter.New(), auxcounter.New(), settlement.New(), candidates.New(), jobqueue.New()}); err != nil {
		t.Fatal(err)
	}
	const path = "../../../../docs/flags.md"
	if os.Getenv("HOTSPOTKIT_UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, buf.Bytes()) {
		t.Errorf("docs/flags.md is not what --help says: HOTSPOTKIT_UPDATE_DOCS=1 go test ./testkit/internal/runner/plan -run TestFlagsReference rewrites it")
	}
	// Every flag --help shows is on the page.
	for _, s := range []testkit.Suite{usagecounter.New(), candidates.New(), jobqueue.New()} {
		c, _, err := newParser(s)
		if err != nil {
			t.Fatal(err)
		}
		c.fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !bytes.Contains(buf.Bytes(), []byte("`--"+f.Name)) && !bytes.Contains(buf.Bytes(), []byte(", --"+f.Name)) {
				t.Errorf("--%s of %s is not on the page", f.Name, s.Info().Name)
			}
		})
	}
}
