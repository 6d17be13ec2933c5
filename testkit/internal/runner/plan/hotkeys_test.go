package plan

import (
	"io"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// --hot-key-dist is parsed over --hot-keys before anything starts, refused in one line when
// bad or when the suite has no hot sets, and recorded only where it shapes the work.
func TestHotKeyDist(t *testing.T) {
	for args, want := range map[string]string{
		"--hot-keys 10 --hot-key-dist zipf:0":      "--hot-key-dist: zipf needs θ > 0, got 0",
		"--hot-keys 10 --hot-key-dist zipf:x":      "--hot-key-dist: zipf needs θ > 0, got x",
		"--hot-keys 10 --hot-key-dist pareto:1":    `--hot-key-dist: "pareto:1" is none of uniform, zipf:θ, exponential:λ`,
		"--hot-keys 10 --hot-key-dist exponential": "--hot-key-dist: exponential needs λ > 0, as exponential:1.5",
		"--hot-keys 0 --hot-key-dist zipf:1":       "--hot-keys must be at least 1",
	} {
		refused(t, usagecounter.New(), args, want) // settings_test.go
	}
	if _, err := Parse(candidates.New(), strings.Fields("--hot-keys 10 --hot-key-dist zipf:1"), io.Discard); err == nil ||
		err.Error() != "--hot-key-dist: request_candidate_persistence_baseline has no hot sets to spread its requests over" {
		t.Errorf("a suite without hot sets took --hot-key-dist: %v", err)
	}

	p := parse(t, usagecounter.New(), "--hot-keys 100 --hot-key-dist Zipf:0.990 --seed 7")
	if got := p.RunConfig(nil, 2000).HotKeyDist; got != "zipf:0.99" {
		t.Errorf("recorded hot_key_dist %q, want the canonical zipf:0.99", got)
	}
	c := p.Config()
	if c.HotKeyDist.String() != "zipf:0.99" || c.HotKeyDist.Keys() != 100 {
		t.Fatalf("the suites' config has %v over %d keys", c.HotKeyDist, c.HotKeyDist.Keys())
	}
	spread := map[int]bool{}
	for i := range int64(200) {
		if c.HotSet(i) != c.HotKeyDist.Pick(7, i) {
			t.Fatalf("request %d: hot set %d, the distribution picks %d at --seed 7", i, c.HotSet(i), c.HotKeyDist.Pick(7, i))
		}
		spread[c.HotSet(i)] = true
	}
	if len(spread) < 10 || len(spread) == 100 {
		t.Errorf("200 zipfian requests over 100 sets met %d of them", len(spread))
	}
	for _, args := range []string{"--hot-keys 100", "--hot-keys 100 --hot-key-dist uniform", "--hot-key-dist zipf:1.2"} {
		p := parse(t, usagecounter.New(), args)
		if got := p.RunConfig(nil, 2000).HotKeyDist; got != "" {
			t.Errorf("%s: recorded hot_key_dist %q, want it left out (uniform work)", args, got)
		}
		for i := range int64(300) {
			if c := p.Config(); strings.HasPrefix(args, "--hot-keys 100") && c.HotSet(i) != int(i%100) {
				t.Fatalf("%s: request %d writes set %d, not i mod --hot-keys", args, i, c.HotSet(i))
			}
		}
	}
}
