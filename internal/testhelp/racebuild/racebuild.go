// Package racebuild says how this binary was built (-race, -trimpath), so that a test that
// builds another binary of the module (to run it as a user would), or has a tool build one
// (baseline ab's revisions), builds it the same way: it then takes every package from the
// build cache's build of the tests instead of compiling the module, its dependencies and the
// standard library a second time (on two cores, a fifth of CI's time). It owns nothing else.
package racebuild

import (
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// matched are the build settings a second build must share with this one to find its
// packages in the build cache: each changes every package's compilation.
var matched = []string{"-race", "-trimpath"}

// GoFlags are the go command's build flags that match this binary's build: "-race" and
// "-trimpath" where it was built with them.
func GoFlags() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var flags []string
	for _, s := range bi.Settings {
		if slices.Contains(matched, s.Key) && s.Value == "true" {
			flags = append(flags, s.Key)
		}
	}
	return flags
}

// GOFLAGS is the GOFLAGS environment variable's value (this process's) with GoFlags added: for
// a go command a tool runs (it takes its flags from the environment).
func GOFLAGS() string { return withGoFlags(os.Getenv("GOFLAGS")) }

// Env returns env with GoFlags added to its GOFLAGS: for a go command run by a shell line.
func Env(env []string) []string {
	out := make([]string, 0, len(env)+1)
	current := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			current = v
			continue
		}
		out = append(out, kv)
	}
	if f := withGoFlags(current); f != "" {
		out = append(out, "GOFLAGS="+f)
	}
	return out
}

func withGoFlags(goflags string) string {
	return strings.TrimSpace(goflags + " " + strings.Join(GoFlags(), " "))
}
