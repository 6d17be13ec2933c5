package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suites/auxcounter"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/settlement"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// The committed baselines must stay comparable with what today's binaries write: a new flag,
// a renamed default or a changed config key would otherwise leave every baseline unpaired
// ("0 matched", exit 2).
//
// Re-running 60000 × 6000 per suite is minutes of work, so each suite runs here for real, on
// its own temporary server (as `make baseline` does), with the committed baseline's modes and
// every other flag at today's default, but at 200 requests × 8 workers (a run opens its pool
// of the default 64 only as far as its workers can hold at once: 8 connections a mode instead
// of 20 at 20 workers, and --max-connections stays the default it pairs on). The comparison then passes
// --across requests,concurrency, which only lets those two keys differ: every other key
// today's engine records (new flags included) must pair with the committed runs under the
// normal rules, and every committed run group must find its partner.
func TestCommittedBaselinesPairWithTodaysBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every suite on a temporary server")
	}
	paths, err := filepath.Glob(recordstest.Path(t, "baselines/*/*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed baselines found (%v)", err)
	}
	suites := []testkit.Suite{usagecounter.New(), settlement.New(), auxcounter.New(), candidates.New()}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			committed, err := results.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			idx := slices.IndexFunc(suites, func(s testkit.Suite) bool { return s.Info().Name == committed.Suite })
			if idx < 0 {
				t.Fatalf("no suite named %s", committed.Suite)
			}
			var modes []string
			for _, r := range committed.Runs {
				if !slices.Contains(modes, r.Mode) {
					modes = append(modes, r.Mode)
				}
			}
			fresh := filepath.Join(t.TempDir(), "fresh.json")
			args := []string{"--requests", "200", "--concurrency", "8", "--modes", strings.Join(modes, ","), "--output", fresh}
			if flagExists(suites[idx], "calibrate") {
				args = append(args, "--calibrate=false") // calibration shapes no run; spare the seconds
			}
			var stdout, stderr bytes.Buffer
			if code := cli.Execute(suites[idx], args, &stdout, &stderr); code != 0 {
				t.Fatalf("%s %s: exit %d\n%s", committed.Suite, strings.Join(args, " "), code, stderr.String())
			}

			var out, errOut bytes.Buffer
			code := run([]string{"compare", "--explain", "--across", "requests,concurrency", path, fresh}, &out, &errOut)
			if code != exitOK && code != 1 {
				t.Fatalf("compare exit %d, want 0 or 1\n%s%s", code, out.String(), errOut.String())
			}
			rep, err := results.ReadFile(fresh)
			if err != nil {
				t.Fatal(err)
			}
			// The engine's settings are RunConfig's fields; config.suite holds the suite's own
			// flags and nothing else (an engine flag found there is missing from RunConfig).
			own := suiteFlags(suites[idx])
			for _, r := range rep.Runs {
				for k := range r.Config.Suite {
					if !own[results.SuiteFlag(k)] {
						t.Errorf("%s: config.suite holds %s, which is not a flag of the suite (add it to results.RunConfig)", r.Mode, k)
					}
				}
			}
			opt := judge.DefaultOptions()
			opt.Across = []string{"requests", "concurrency"}
			c, err := judge.Compare(committed, rep, opt)
			if err != nil || len(c.UnmatchedOld)+len(c.UnmatchedNew) > 0 || len(c.Pairs) != len(modes) {
				t.Errorf("committed and fresh runs do not pair group for group (%v):\n%s", err, out.String())
			}
		})
	}
}

// suiteFlags is the set of the flags the suite registers itself.
func suiteFlags(s testkit.Suite) map[string]bool {
	out := make(map[string]bool)
	if f, ok := s.(testkit.Flagger); ok {
		fs := pflag.NewFlagSet("suite", pflag.ContinueOnError)
		f.Flags(fs)
		fs.VisitAll(func(f *pflag.Flag) { out[f.Name] = true })
	}
	return out
}

// flagExists reports whether the suite's binary has --name, read from its --help.
func flagExists(s testkit.Suite, name string) bool {
	var stdout, stderr bytes.Buffer
	cli.Execute(s, []string{"--help"}, &stdout, &stderr)
	return strings.Contains(stdout.String()+stderr.String(), "--"+name)
}
