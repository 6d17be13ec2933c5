package main

import (
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/merge"
)

const mergeUsage = `Usage: baseline merge [-o OUT] REPORT...

Merges the reports of the processes of one split run (--role producer and consumer, each
with its own --output) into one report of the whole run, which baseline table, compare and
plot read like any other. Give every producer's report and the consumers' (the verifying
one's at least: its verification becomes the run's).

It refuses, in one line with exit 2, reports that are not one split run: another suite or
schema, a report of an unsplit run (--role both), two reports of one producer id or one
process, other modes or repetitions, or settings that shape the work and differ (but for
those only one side's work depends on, a producer's --warmup or a consumer's
--flush-batch-size, and each producer's share of the load, its --requests and --concurrency;
baseline compare --explain lists which settings shape the work).

Per run:
  latency (and pool wait, open-loop service time and schedule lag, persist lag, the timed
    reads of a hot row's total) from the processes' HDR histograms merged, the percentiles
    computed anew — never averaged;
  requests, failures, errors by class, retries, queue and stream counters summed;
  throughput = completed requests ÷ the union of the measured windows (the earliest start of
    any process to the latest end of any, a consumer's drain included);
  verification, reconciliation and the suite's figures from the verifying consumer, beside
    every other process's own checks (no verifying consumer: not verified);
  lock waiters: the most any process's monitor saw; what PostgreSQL counted: the figures of
    the window that covers the consumers' writes (windows overlap, so they are not summed),
    per request over the merged requests.
The report lists every process (role, producer id, host, pid, report file, its environment);
its environment keeps what they all agree on, with "merged": true. Notes on what could not be
merged exactly go to stderr.

Example:
  baseline merge -o run.json producer-0.json producer-1.json c1.json c2.json
  baseline table run.json && baseline plot run.json -o run.html

Flags:
`

func runMerge(args []string, stdout, stderr io.Writer) int {
	c := newCommand("merge", mergeUsage, stdout, stderr)
	output := c.flags.StringP("output", "o", "", "report file to write (default: standard output)")
	if code, done := c.parse(args); done {
		return code
	}
	if c.flags.NArg() == 0 {
		return c.usageError("no report file given")
	}
	var inputs []merge.Input
	for _, p := range c.flags.Args() {
		r, err := results.ReadFile(p)
		if err != nil {
			return c.fail(err)
		}
		inputs = append(inputs, merge.Input{Path: p, Report: r})
	}
	m, err := merge.Merge(inputs)
	if err != nil {
		return c.fail(err)
	}
	for _, n := range m.Notes {
		fmt.Fprintf(stderr, "baseline merge: note: %s\n", n)
	}
	if *output == "" {
		if err := m.Report.Write(stdout); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	if err := m.Report.WriteFile(*output); err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(stderr, "baseline merge: wrote %s (%d processes, %d runs)\n", *output, len(m.Report.Processes), len(m.Report.Runs))
	return exitOK
}
