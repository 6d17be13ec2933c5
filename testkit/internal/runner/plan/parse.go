// Package plan turns a suite binary's command line into a Plan: the common flags and the
// suite's own (testkit.Flagger) parsed with pflag, validated against each other and against
// what the suite declares (testkit.Info: modes, queue backends, faults, slots) and by the
// suite itself (testkit.Validator), before any work starts. A Plan holds no flag set and is
// read-only once made; the engine runs it. Plan also writes --help.
package plan

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// ErrHelp is what Parse returns once it has written --help.
var ErrHelp = errors.New("help requested")

// Parse parses and validates the command line of suite s; on --help it writes the usage to
// out and returns ErrHelp.
func Parse(s testkit.Suite, args []string, out io.Writer) (*Plan, error) {
	c, own, err := newParser(s)
	if err != nil {
		return nil, err
	}
	info, fs := c.info, c.fs
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printUsage(out, info, fs)
			return nil, ErrHelp
		}
		return nil, err
	}
	if *help {
		printUsage(out, info, fs)
		return nil, ErrHelp
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (all options are flags)", fs.Arg(0))
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	if v, ok := s.(testkit.Validator); ok {
		for _, p := range c.ByKind() { // each kind of database the invocation runs on
			if err := v.Validate(p.Config()); err != nil {
				return nil, err
			}
		}
	}
	if err := checkOutputWritable(c.Output); err != nil {
		return nil, err
	}
	c.RequestsGiven = fs.Changed("requests")
	c.record(own)
	return c.Plan, nil
}

func printUsage(w io.Writer, info testkit.Info, fs *pflag.FlagSet) {
	fs.SetOutput(w)
	fmt.Fprintf(w, "%s — %s\n\n", info.Name, info.Summary)
	if info.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(info.Description))
	}
	fmt.Fprintf(w, "Usage:\n  %s [flags]\n\nExample:\n  %s\n\nFlags:\n", info.Name, info.Example)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nExit codes: 0 ok, 1 verification failed or the run broke, 2 bad input (nothing started),\n130/143 interrupted by SIGINT/SIGTERM (partial report written, servers stopped).\n")
}

// checkOutputWritable makes sure the report (and its samples file) can be written, before the
// load: nobody should lose a long run to a typo. A file it had to create is removed again.
func checkOutputWritable(path string) error {
	if path == "" {
		return nil
	}
	paths := []string{path, results.SamplesPath(path)}
	if results.NotAFile(path) { // a device or a pipe (-o /dev/null): no samples beside it
		paths = paths[:1]
	}
	for _, p := range paths {
		st, statErr := os.Stat(p)
		switch {
		case statErr == nil && st.IsDir():
			return fmt.Errorf("--output %s: is a directory", p)
		case statErr == nil && st.Mode()&os.ModeNamedPipe != 0:
			// Opening a named pipe waits for its reader, and closing it again would end the
			// reader's input before the report came: ask the kernel instead. The report goes
			// in when the run ends (its reader may come later).
			if err := unix.Access(p, unix.W_OK); err != nil {
				return fmt.Errorf("--output %s: cannot be written: %v", p, err)
			}
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("--output %s: cannot be written: %v", p, unwrapPathError(err))
		}
		f.Close()
		if os.IsNotExist(statErr) {
			os.Remove(p)
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("--output %s: %v", path, unwrapPathError(err))
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// newParser is the flag set of suite s, its flags registered and the suite's defaults set;
// own names the flags the suite registered itself.
func newParser(s testkit.Suite) (*parser, map[string]bool, error) {
	info := s.Info()
	fs := pflag.NewFlagSet(info.Name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	c := &parser{Plan: &Plan{Slotted: info.Slots, HotSets: info.HotSets}, info: info, fs: fs}
	c.register()
	engine := map[string]bool{}
	c.engineDefaults = map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) { engine[f.Name], c.engineDefaults[f.Name] = true, f.DefValue })
	if f, ok := s.(testkit.Flagger); ok {
		f.Flags(fs)
	}
	own := map[string]bool{} // the suite's own flags
	fs.VisitAll(func(f *pflag.Flag) { own[f.Name] = !engine[f.Name] })
	for name, v := range info.Defaults {
		f := fs.Lookup(name)
		if f == nil {
			return nil, nil, fmt.Errorf("suite default for unknown flag --%s", name)
		}
		if err := f.Value.Set(v); err != nil {
			return nil, nil, fmt.Errorf("suite default --%s=%s: %w", name, v, err)
		}
		f.DefValue = v
	}
	return c, own, nil
}
