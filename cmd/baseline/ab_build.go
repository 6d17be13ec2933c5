package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/results/render/judge"
)

// abSide is one side of an A/B, resolved: the binary to run, the suite it is, what it was
// built from.
type abSide struct {
	judge.ABSide
	binary string
	suite  string
	// help is the suite's --help, read to learn its name and which flags it has.
	help string
}

// hasFlag reports whether the suite's --help lists --name: followed by its value's type
// ("--requests int"), or, a boolean, by "[=true|false]" ("--calibrate[=true|false]").
func (s abSide) hasFlag(name string) bool {
	return strings.Contains(s.help, "--"+name+" ") || strings.Contains(s.help, "--"+name+"[=")
}

// resolveSides turns A and B into binaries: a path is a binary; anything else is a git
// revision of o.repo, built into a temporary directory (removed by cleanup, which is always
// safe to call). Then each binary must read like a suite (its --help, given the suite flags,
// names it) and both must be the same suite. Every error is bad input: nothing has run yet.
func resolveSides(o abOptions, sigs *abSignals, say func(string, ...any)) (sides [2]abSide, cleanup func(), err error) {
	b := &builder{repo: o.repo, suite: o.suite, say: say}
	cleanup = b.cleanup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs.onInterrupt(cancel)
	for i, spec := range []struct {
		name, given string
		args        []string
	}{{"A", o.a, o.aArgs}, {"B", o.b, o.bArgs}} {
		s := abSide{ABSide: judge.ABSide{Label: spec.given, Args: spec.args}}
		if st, serr := os.Stat(spec.given); serr == nil {
			if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
				return sides, cleanup, fmt.Errorf("%s: %s is not an executable file", spec.name, spec.given)
			}
			abs, _ := filepath.Abs(spec.given)
			s.binary, s.Binary = abs, abs
		} else {
			sha, rerr := b.revision(ctx, spec.given)
			if rerr != nil {
				return sides, cleanup, fmt.Errorf("%s: %w", spec.name, rerr)
			}
			s.Revision = sha
			s.Label = fmt.Sprintf("%s (%s)", spec.given, sha[:min(12, len(sha))])
			if s.binary, err = b.build(ctx, spec.name, spec.given, sha); err != nil {
				return sides, cleanup, err
			}
		}
		if s.suite, s.help, err = suiteName(ctx, s.binary, append(append(append([]string{}, o.suiteArgs...), spec.args...), "--help"), o.preflightWait); err != nil {
			return sides, cleanup, fmt.Errorf("%s: %w", spec.name, err)
		}
		if o.suite != "" && s.suite != o.suite {
			return sides, cleanup, fmt.Errorf("%s is the suite %s, not --suite %s", spec.name, s.suite, o.suite)
		}
		sides[i] = s
	}
	if sides[0].suite != sides[1].suite {
		return sides, cleanup, fmt.Errorf("two different suites: A is %s, B is %s", sides[0].suite, sides[1].suite)
	}
	return sides, cleanup, nil
}

// suiteHelpHead is the first line of a suite's --help: "NAME — summary".
var suiteHelpHead = regexp.MustCompile(`^([A-Za-z0-9_.-]+) — `)

// suiteRefusal ends what a suite prints when it rejects its flags (exit 2).
var suiteRefusal = regexp.MustCompile(`(?m)^Run '[^']+ --help' for usage\.$`)

// suiteName runs binary with args (which end in --help) and reads the suite's name from its
// usage. The suite parses every flag before it prints its usage, so a flag it does not know,
// or a value it cannot parse, fails here, before any run.
func suiteName(ctx context.Context, binary string, args []string, wait time.Duration) (name, help string, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	text := strings.TrimSpace(out.String())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", "", fmt.Errorf("%s is not a hotspotkit suite (its --help did not answer within %v)", binary, wait)
	case errors.As(err, &exit) && exit.ExitCode() == exitUsage && suiteRefusal.MatchString(text):
		return "", "", fmt.Errorf("the suite refused the flags: %s", firstLine(text))
	case err != nil:
		return "", "", fmt.Errorf("%s is not a hotspotkit suite (%s --help: %v)", binary, filepath.Base(binary), err)
	}
	m := suiteHelpHead.FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "--output") || !strings.Contains(text, "--modes") {
		return "", "", fmt.Errorf("%s is not a hotspotkit suite (its --help does not read like one)", binary)
	}
	return m[1], text, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// builder builds suites from git revisions in temporary worktrees.
type builder struct {
	repo, suite string
	say         func(string, ...any)
	tmp         string
	worktrees   []string
	built       map[string]string // sha -> binary
}

func (b *builder) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", b.repo}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := firstLine(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New(msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// revision resolves rev to a commit of the repository.
func (b *builder) revision(ctx context.Context, rev string) (string, error) {
	if _, err := b.git(ctx, "rev-parse", "--git-dir"); err != nil {
		return "", fmt.Errorf("%q is not a file, and %s is not a git repository to take it as a revision of (--repo)", rev, b.repo)
	}
	sha, err := b.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || sha == "" {
		return "", fmt.Errorf("%q is neither a file nor a git revision of %s", rev, b.repo)
	}
	return sha, nil
}

// build checks out sha into a temporary worktree, builds the suite's command there and
// removes the worktree again; the binary stays in the temporary directory until cleanup.
func (b *builder) build(ctx context.Context, side, rev, sha string) (string, error) {
	if b.suite == "" {
		return "", fmt.Errorf("%s is a git revision (%s): name the suite to build with --suite, e.g. --suite usage_counter_hotspot_baseline", side, rev)
	}
	if strings.ContainsAny(b.suite, `/\`) || strings.HasPrefix(b.suite, ".") {
		return "", fmt.Errorf("--suite %s: name a directory of cmd/, such as usage_counter_hotspot_baseline", b.suite)
	}
	if bin, ok := b.built[sha]; ok {
		return bin, nil
	}
	if b.tmp == "" {
		tmp, err := os.MkdirTemp("", "baseline-ab-*")
		if err != nil {
			return "", err
		}
		b.tmp, b.built = tmp, map[string]string{}
	}
	short := sha[:min(12, len(sha))]
	wt := filepath.Join(b.tmp, "src-"+short)
	if _, err := b.git(ctx, "worktree", "add", "--detach", "--quiet", wt, sha); err != nil {
		return "", fmt.Errorf("%s: git worktree add %s: %v", side, rev, err)
	}
	b.worktrees = append(b.worktrees, wt)
	bin := filepath.Join(b.tmp, "bin-"+short, b.suite)
	b.say("building %s (%s) of %s …", b.suite, short, rev)
	start := time.Now()
	// -trimpath: each worktree is a new directory, and without it every package's build
	// would depend on that path, so nothing of one revision's build (or an earlier A/B's)
	// would come from the build cache for the next.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/"+b.suite)
	cmd.Dir = wt
	out, err := cmd.CombinedOutput()
	b.removeWorktree(wt)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", fmt.Errorf("%s: %s does not build: %s", side, rev, buildError(out, err))
	}
	b.say("built %s in %.1f s", short, time.Since(start).Seconds())
	b.built[sha] = bin
	return bin, nil
}

// buildError is the first error line of go build's output.
func buildError(out []byte, err error) string {
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return err.Error()
}

func (b *builder) removeWorktree(wt string) {
	// A fresh context: this also runs after Ctrl-C cancelled the build's.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.git(ctx, "worktree", "remove", "--force", wt); err != nil {
		_ = os.RemoveAll(wt)
		_, _ = b.git(ctx, "worktree", "prune")
	}
	for i, w := range b.worktrees {
		if w == wt {
			b.worktrees = append(b.worktrees[:i], b.worktrees[i+1:]...)
			break
		}
	}
}

// cleanup removes every worktree still registered and the temporary directory.
func (b *builder) cleanup() {
	for len(b.worktrees) > 0 {
		b.removeWorktree(b.worktrees[0])
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
		b.tmp = ""
	}
}
