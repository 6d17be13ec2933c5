package serverproctest

import (
	"errors"
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

// stopper is a server whose Stop returns err.
type stopper struct{ err error }

func (s *stopper) Stop() error { return s.err }

// A shared server that fails to stop fails a passing run; none started changes nothing.
func TestStopShared(t *testing.T) {
	for _, c := range []struct {
		code int
		srv  *stopper
		want int
	}{{0, nil, 0}, {2, nil, 2}, {0, &stopper{}, 0}, {0, &stopper{errors.New("stuck")}, 1}, {2, &stopper{errors.New("stuck")}, 2}} {
		if got := StopShared(c.code, "a test server", c.srv); got != c.want {
			t.Errorf("StopShared(%d, %+v) = %d, want %d", c.code, c.srv, got, c.want)
		}
	}
}
