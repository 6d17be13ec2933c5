// Package cli is what a suite binary's main calls: the command line becomes a plan (flags and
// validation, before any work starts), the engine runs it, and the report and the summary come
// out. A binary's main is one line:
//
//	func main() { cli.Main(mysuite.New()) }
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
)

// Exit codes.
const (
	ExitOK      = engine.ExitOK
	ExitFailed  = engine.ExitFailed // verification failed, or the run could not complete
	ExitUsage   = engine.ExitUsage  // bad input; nothing was started
	ExitSIGINT  = engine.ExitSIGINT
	ExitSIGTERM = engine.ExitSIGTERM
)

// Main runs suite s with the process's arguments and exits with its code.
func Main(s testkit.Suite) {
	redis.SetLogger(quiet{})
	os.Exit(Execute(s, os.Args[1:], os.Stdout, os.Stderr))
}

// quiet is go-redis's logger in a suite binary: go-redis writes its pools' dial failures to
// stderr on its own, before the kit's one-line error for the same failure (an unreachable
// --redis-url seed) and by the hundred while a Redis fault holds a server down; the kit says
// what each failure meant itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Execute runs suite s with args and returns the exit code: 0 ok, 1 verification failed or the
// run broke, 2 bad input (before anything started), 130/143 interrupted by SIGINT/SIGTERM.
// --help goes to stdout, the report to --output or stdout, everything else to stderr.
func Execute(s testkit.Suite, args []string, stdout, stderr io.Writer) int {
	p, err := plan.Parse(s, args, stdout)
	if errors.Is(err, plan.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		name := s.Info().Name
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
		return ExitUsage
	}
	return engine.Execute(s, p, stdout, stderr)
}
