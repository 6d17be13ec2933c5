package testkit

import "io"

// SetAfterInvocation makes every Execute call f with the metrics endpoint's URL once its
// report is written, before the endpoint closes; restore undoes it.
func SetAfterInvocation(f func(metricsURL string)) (restore func()) {
	afterInvocation = f
	return func() { afterInvocation = nil }
}

// ExecuteChecked is Execute without the metrics endpoint, and returns as well the validated
// Config as the invocation left it and a copy of it taken when validation ended (the same
// arguments parsed and validated again), with their flag sets made the same: a Config that is
// read-only after validation comes out equal to its copy.
func ExecuteChecked(s Suite, args []string, stdout, stderr io.Writer) (code int, after, validated Config) {
	info := s.Info()
	cfg, err := parseFlags(s, info, args, io.Discard)
	if err != nil {
		return ExitUsage, Config{}, Config{}
	}
	snapshot, err := parseFlags(s, info, args, io.Discard)
	if err != nil {
		return ExitUsage, Config{}, Config{}
	}
	snapshot.fs = cfg.fs
	e := &engine{suite: s, info: info, cfg: cfg, stderr: stderr}
	code = e.execute(stdout)
	return code, *cfg, *snapshot
}
