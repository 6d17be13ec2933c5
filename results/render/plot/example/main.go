// Command example writes the page `baseline plot` draws for the test fixtures
// (internal/testhelp/resultstest): a report of every mode with its monitor's samples, a
// ladder, and a report repeated three times, so that a change to the plots can be looked at
// in a browser without recording runs first:
//
//	go run ./results/render/plot/example --output /tmp/page.html && xdg-open /tmp/page.html
//
// Exit codes: 0 written, 1 the page could not be written, 2 bad usage.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render/plot"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	const usage = "usage: go run ./results/render/plot/example --output PAGE.html"
	flags := pflag.NewFlagSet("example", pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	out := flags.StringP("output", "o", "", "the HTML page to write")
	switch err := flags.Parse(args); {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintln(stderr, usage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "example: %v (%s)\n", err, usage)
		return 2
	case *out == "" || flags.NArg() > 0:
		fmt.Fprintf(stderr, "example: name the page, and nothing else (%s)\n", usage)
		return 2
	}
	var page bytes.Buffer
	if err := plot.Plot(fixtures(), map[string][]results.Sample{plot.SamplesKey(0): resultstest.Samples()}, &page); err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 1
	}
	if err := os.WriteFile(*out, page.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "example: %v\n", err)
		return 1
	}
	return 0
}

// fixtures are the reports of the page: the single report with every mode (the samples are
// its first run's), a concurrency ladder, and a report of three repetitions.
func fixtures() []*results.Report {
	rep := resultstest.SingleReport()
	for _, s := range []resultstest.RunSpec{
		{Mode: "outbox", RPS: 9800, P50: 4.1, P95: 9.7, P99: 15.2, PoolBP: 6250, Waiters: map[string]int64{"providers": 1}, Verified: true},
		{Mode: "async", RPS: 150000, P50: 0.25, P95: 0.71, P99: 1.6, PoolBP: 3125, Queue: true, LagP99: 120.4, SQLOps: 100000, Verified: true},
	} {
		rep.Runs = append(rep.Runs, resultstest.MakeRun(s))
	}
	return []*results.Report{rep, resultstest.LadderReport(), resultstest.RepeatedReport()}
}
