package testkit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

var errHelp = errors.New("help requested")

// parseFlags parses and validates the command line; on --help it prints usage to out.
func parseFlags(s Suite, info Info, args []string, out io.Writer) (*Config, error) {
	fs := pflag.NewFlagSet(info.Name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	cfg := &Config{}
	cfg.register(fs, info)
	if f, ok := s.(Flagger); ok {
		f.Flags(fs)
	}
	for name, v := range info.Defaults {
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("suite default for unknown flag --%s", name)
		}
		if err := f.Value.Set(v); err != nil {
			return nil, fmt.Errorf("suite default --%s=%s: %w", name, v, err)
		}
		f.DefValue = v
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printUsage(out, info, fs)
			return nil, errHelp
		}
		return nil, err
	}
	if *help {
		printUsage(out, info, fs)
		return nil, errHelp
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (all options are flags)", fs.Arg(0))
	}
	if err := cfg.validate(info); err != nil {
		return nil, err
	}
	if v, ok := s.(Validator); ok {
		if err := v.Validate(cfg); err != nil {
			return nil, err
		}
	}
	if err := checkOutputWritable(cfg.Output); err != nil {
		return nil, err
	}
	return cfg, nil
}

func printUsage(w io.Writer, info Info, fs *pflag.FlagSet) {
	fs.SetOutput(w)
	fmt.Fprintf(w, "%s — %s\n\n", info.Name, info.Summary)
	if info.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(info.Description))
	}
	fmt.Fprintf(w, "Usage:\n  %s [flags]\n\nExample:\n  %s\n\nFlags:\n", info.Name, info.Example)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nExit codes: 0 ok, 1 verification failed or the run broke, 2 bad input (nothing started),\n130/143 interrupted by SIGINT/SIGTERM (partial report written, servers stopped).\n")
}
