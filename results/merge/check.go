package merge

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
)

// What makes several reports one split run.

// check returns the inputs as processes, producers first (by id), then consumers (the
// verifying one last), or why they are not one split run.
func check(inputs []Input) ([]*process, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("give the reports of at least two processes of one split run (got %d)", len(inputs))
	}
	var procs []*process
	for _, in := range inputs {
		p, err := asProcess(in)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	for _, p := range procs[1:] {
		first := procs[0]
		if p.Report.Suite != first.Report.Suite {
			return nil, fmt.Errorf("%s is a report of %s, %s of %s: not one run", first.Path, first.Report.Suite, p.Path, p.Report.Suite)
		}
		if p.Report.Environment.Schema != first.Report.Environment.Schema {
			return nil, fmt.Errorf("%s ran in schema %q, %s in %q: not one run", first.Path, first.Report.Environment.Schema, p.Path, p.Report.Environment.Schema)
		}
	}
	slices.SortStableFunc(procs, func(a, b *process) int {
		return rank(a) - rank(b)
	})
	producers := 0
	for i, p := range procs {
		if p.role == "producer" {
			producers++
		}
		for _, q := range procs[:i] {
			switch {
			case p.role == "producer" && q.role == "producer" && p.producerID == q.producerID:
				return nil, fmt.Errorf("%s and %s are both producer %d: one producer's report twice, or two runs", q.Path, p.Path, p.producerID)
			case sameProcess(p.Report, q.Report):
				return nil, fmt.Errorf("%s and %s are the same process's report", q.Path, p.Path)
			}
		}
	}
	if producers == 0 {
		return nil, errors.New("no producer's report among them: the run's requests are the producers'")
	}
	for _, p := range procs {
		if p.role == "consumer" {
			if want := p.Report.Runs[0].Config.ExpectProducers; want > producers {
				return nil, fmt.Errorf("%s waited for %d producers (--expect-producers), but %d producer reports were given", p.Path, want, producers)
			}
		}
	}
	// Every process against the first (a producer): the settings all share, and a producer's;
	// every consumer against the first consumer: a consumer's.
	var firstConsumer *process
	for _, p := range procs[1:] {
		if err := sameRuns(procs[0], p); err != nil {
			return nil, err
		}
		if p.role != "consumer" {
			continue
		}
		if firstConsumer == nil {
			firstConsumer = p
		} else if err := sameRuns(firstConsumer, p); err != nil {
			return nil, err
		}
	}
	return procs, nil
}

// rank orders processes: producers by id, then consumers, the verifying consumer last.
func rank(p *process) int {
	switch {
	case p.role == "producer":
		return p.producerID
	case p.verify:
		return 1 << 30
	}
	return 1<<30 - 1
}

func asProcess(in Input) (*process, error) {
	r := in.Report
	if len(r.Runs) == 0 {
		return nil, fmt.Errorf("%s has no runs", in.Path)
	}
	if r.Environment.Merged || len(r.Processes) > 0 {
		return nil, fmt.Errorf("%s is a merged report already: give the processes' own reports", in.Path)
	}
	c := r.Runs[0].Config
	if c.Role != "producer" && c.Role != "consumer" {
		return nil, fmt.Errorf("%s is not a report of a split run (role %q; a split run's processes run with --role producer or consumer)", in.Path, c.Role)
	}
	for i, run := range r.Runs[1:] {
		if rc := run.Config; rc.Role != c.Role || rc.ProducerID != c.ProducerID || rc.Verify != c.Verify {
			return nil, fmt.Errorf("%s: run %d has another role than run 0", in.Path, i+1)
		}
	}
	return &process{Input: in, role: c.Role, producerID: c.ProducerID, verify: c.Role == "consumer" && c.Verify}, nil
}

// sameProcess: the same report given twice under two names (the pid is recorded since
// version 8; before it, the host and the start to the nanosecond tell).
func sameProcess(a, b *results.Report) bool {
	ea, eb := a.Environment, b.Environment
	return ea.Hostname == eb.Hostname && ea.PID == eb.PID && a.StartedAt.Equal(b.StartedAt)
}

// sameRuns checks that p ran the same runs as first, run by run, with the same settings,
// but where the settings' split tags let a producer and a consumer differ.
func sameRuns(first, p *process) error {
	a, b := first.Report.Runs, p.Report.Runs
	if len(a) != len(b) {
		return fmt.Errorf("%s has %d runs, %s %d: not one run", first.Path, len(a), p.Path, len(b))
	}
	for i := range a {
		ra, rb := a[i], b[i]
		if ra.Mode != rb.Mode || ra.Repetition != rb.Repetition || results.Shown(ra.Config).Key() != results.Shown(rb.Config).Key() {
			return fmt.Errorf("run %d: %s ran %s, %s ran %s: not one run", i, first.Path, runName(ra), p.Path, runName(rb))
		}
		if key, va, vb, ok := differingSetting(first, ra.Config, p, rb.Config); !ok {
			return fmt.Errorf("run %d (%s): %s has %s %s, %s has %s: not one run", i, runName(ra), first.Path, key, va, p.Path, vb)
		}
	}
	return nil
}

func runName(r results.Run) string {
	s := r.Mode
	if r.Repetition > 0 {
		s += fmt.Sprintf(" repetition %d", r.Repetition)
	}
	shown := results.Shown(r.Config)
	for _, a := range results.Axes {
		if v, ok := shown[a.Name]; ok {
			if row := a.Row(a.Format(v), r.Config); row != "" {
				s += " " + row
			}
		}
	}
	return s
}

// differingSetting returns the first setting that shapes the work on which the two processes
// must agree and do not (ok false), in key order.
func differingSetting(pa *process, a results.RunConfig, pb *process, b results.RunConfig) (key, va, vb string, ok bool) {
	sa, sb := a.Shaping(), b.Shaping()
	for _, k := range slices.Sorted(maps.Keys(sa)) {
		split := ""
		if s, found := results.LookupSetting(k); found {
			split = s.Split
		}
		switch {
		case split == results.SplitProcess:
			continue
		case split == results.SplitProducer && (pa.role != "producer" || pb.role != "producer"):
			continue
		case split == results.SplitConsumer && (pa.role != "consumer" || pb.role != "consumer"):
			continue
		}
		if sa[k] != sb[k] {
			return k, sa[k], orAbsent(sb, k), false
		}
	}
	for k := range sb {
		if _, found := sa[k]; !found {
			return k, "(absent)", sb[k], false // a suite flag only one has
		}
	}
	return "", "", "", true
}

func orAbsent(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "(absent)"
}
