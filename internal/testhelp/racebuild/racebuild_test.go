package racebuild

import (
	"slices"
	"strings"
	"testing"
)

// GoFlags names -race exactly when this test binary has the race detector (a build tag says
// so independently), and Env keeps the caller's GOFLAGS, adds GoFlags once and drops nothing
// else.
func TestGoFlagsAndEnv(t *testing.T) {
	if got := slices.Contains(GoFlags(), "-race"); got != raceOn {
		t.Errorf("GoFlags %v: -race %v, the race detector %v", GoFlags(), got, raceOn)
	}
	env := Env([]string{"A=1", "GOFLAGS=-mod=mod", "B=2"})
	want := strings.TrimSpace("-mod=mod " + strings.Join(GoFlags(), " "))
	if !slices.Equal(env, []string{"A=1", "B=2", "GOFLAGS=" + want}) {
		t.Errorf("Env: %q, want A, B and GOFLAGS=%q", env, want)
	}
	if env := Env([]string{"A=1"}); len(GoFlags()) == 0 && !slices.Equal(env, []string{"A=1"}) {
		t.Errorf("Env of a plain build: %q, want A=1 alone", env)
	}
}
