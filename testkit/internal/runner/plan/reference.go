package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// WriteReference writes the flags reference (docs/flags.md) of the suite binaries: the flags
// every suite shares once, then per suite its own flags, the shared flags whose default it
// changes, and its modes. It is --help's text, so the page says what the binaries do.
func WriteReference(w io.Writer, suites []testkit.Suite) error {
	fmt.Fprint(w, `# Flags

<!-- Generated from the suite binaries' --help by
     HOTSPOTKIT_UPDATE_DOCS=1 go test ./testkit/internal/runner/plan -run TestFlagsReference
     Do not edit by hand: the test fails when this page and --help differ. -->

Every suite binary takes the flags below plus a few of its own; `+"`--help`"+` prints both, with a worked
example. Where each group is explained: sizing and servers in [running.md](running.md), modes,
queue and slots in [modes.md](modes.md), faults, retries and soak in
[faults-and-soak.md](faults-and-soak.md), open loop in [open-loop.md](open-loop.md), ladders and
`+"`--repeat`"+` in [baselines.md](baselines.md), calibration and the metrics endpoint in
[reading-a-report.md](reading-a-report.md). `+"`baseline COMMAND --help`"+` documents the `+"`baseline`"+`
tool's commands.

Durations take Go's units (`+"`250ms`, `30s`, `2m`"+`); lists are comma-separated. Bad input is refused
with a one-line error and exit 2 before anything starts.

## Every suite

`)
	for i, s := range suites {
		c, own, err := newParser(s)
		if err != nil {
			return err
		}
		if i == 0 { // the shared flags, at the engine's defaults, once
			flagTable(w, c.fs, func(f *pflag.Flag) bool { return !own[f.Name] }, func(f *pflag.Flag) string { return c.engineDefaults[f.Name] })
		}
		info := c.info
		fmt.Fprintf(w, "\n## %s\n\n%s.\n\nModes: %s (default %s).\n", info.Name, info.Summary,
			code(testkit.ModeNames(info.Modes)), code(testkit.ModeNames(info.DefaultModes)))
		changed := func(f *pflag.Flag) bool { return !own[f.Name] && f.DefValue != c.engineDefaults[f.Name] }
		if hasAny(c.fs, changed) {
			fmt.Fprintf(w, "\nShared flags with this suite's own default:\n\n")
			flagTable(w, c.fs, changed, func(f *pflag.Flag) string { return f.DefValue })
		}
		if hasAny(c.fs, func(f *pflag.Flag) bool { return own[f.Name] }) {
			fmt.Fprintf(w, "\nIts own flags:\n\n")
			flagTable(w, c.fs, func(f *pflag.Flag) bool { return own[f.Name] }, func(f *pflag.Flag) string { return f.DefValue })
		}
	}
	return nil
}

func hasAny(fs *pflag.FlagSet, pick func(*pflag.Flag) bool) bool {
	found := false
	fs.VisitAll(func(f *pflag.Flag) { found = found || (!f.Hidden && pick(f)) })
	return found
}

func flagTable(w io.Writer, fs *pflag.FlagSet, pick func(*pflag.Flag) bool, def func(*pflag.Flag) string) {
	fmt.Fprintln(w, "| flag | default | what it does |\n|---|---|---|")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || !pick(f) {
			return
		}
		arg, usage := pflag.UnquoteUsage(f)
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		if arg != "" {
			name += " " + arg
		}
		d := def(f)
		if d == "" || d == "[]" {
			d = "—"
		} else {
			d = "`" + d + "`"
		}
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", name, d, cell(usage))
	})
}

func cell(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

func code(names []string) string { return "`" + strings.Join(names, "`, `") + "`" }
