// Package racebuild says whether this binary was built with the race detector, so that a test
// that builds another binary of the module (to run it as a user would) builds it the same way:
// it then takes every package from the build cache's race-instrumented build of the tests
// instead of compiling the module and its dependencies a second time without (on two cores,
// a fifth of CI's time). It owns nothing else.
package racebuild

import "strings"

// GoFlags are the go command's build flags that match this binary's build: "-race" or none.
func GoFlags() []string {
	if Enabled {
		return []string{"-race"}
	}
	return nil
}

// Env returns env with GOFLAGS carrying GoFlags too, for a go command run by a shell line (a
// documented command run as written).
func Env(env []string) []string {
	if !Enabled {
		return env
	}
	out := make([]string, 0, len(env)+1)
	flags := "-race"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			if v != "" {
				flags = v + " -race"
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GOFLAGS="+flags)
}
