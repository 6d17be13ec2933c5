package serverproctest

import (
	"fmt"
	"strings"
	"testing"
)

// outcome records how Missing ended a test, without ending the test that calls it.
type outcome struct {
	testing.TB
	failed, skipped string
}

func (o *outcome) Helper()                           {}
func (o *outcome) Fatalf(format string, args ...any) { o.failed = fmt.Sprintf(format, args...) }
func (o *outcome) Skip(args ...any)                  { o.skipped = fmt.Sprint(args...) }

// A missing server is a skip, but in CI a failure that says why.
func TestMissingFailsOnlyInCI(t *testing.T) {
	for _, c := range []struct {
		ci   string
		fail bool
	}{{"", false}, {"false", false}, {"no", false}, {"true", true}, {"1", true}} {
		t.Setenv(CIEnv, c.ci)
		var o outcome
		Missing(&o, "no %s here", "redis-server")
		switch {
		case c.fail && (o.skipped != "" || !strings.Contains(o.failed, "no redis-server here") || !strings.Contains(o.failed, "CI="+c.ci)):
			t.Errorf("CI=%q: failed %q, skipped %q; want a failure naming what is missing and CI", c.ci, o.failed, o.skipped)
		case !c.fail && (o.failed != "" || o.skipped != "no redis-server here"):
			t.Errorf("CI=%q: failed %q, skipped %q; want a skip", c.ci, o.failed, o.skipped)
		}
	}
}
