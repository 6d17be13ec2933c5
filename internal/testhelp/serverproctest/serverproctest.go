// Package serverproctest holds what the tests of the temporary servers (testkit/servers/pgserver,
// testkit/servers/redisserver) share: starting a server for one test, the check that its watchdog
// cleans up after an owner that was SIGKILLed, stopping a server a test binary's tests shared,
// and what a test does when a server or a program it needs is not installed (Missing). It is
// for tests only.
package serverproctest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// CIEnv names the environment variable that says the tests run in CI: CI=true, as CI services
// set it and .ci/run does.
const CIEnv = "CI"

// InCI reports whether CIEnv holds a true value (as strconv.ParseBool reads it: true, 1, …).
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv(CIEnv))
	return err == nil && ci
}

// Missing ends a test that needs a server or a program this machine does not have; format and
// args say which (as t.Skipf's). The test is skipped, except in CI (InCI), where it fails: CI's
// set-up (scripts/setup) installs everything the tests use, so there a missing one is a broken
// set-up, and a skip would let it pass unseen.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (%s=%s: CI's set-up installs it, so it must be there)", msg, CIEnv, os.Getenv(CIEnv))
	} else {
		t.Skip(msg)
	}
}

// StopShared stops srv, the server a test binary's tests shared (the zero S: none was started),
// once they have run, and returns code, their exit code, or 1 when stopping failed (said on
// stderr, what naming the server).
func StopShared[S serverproc.Stopper](code int, what string, srv S) int {
	var none S
	if srv == none {
		return code
	}
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping %s: %v\n", what, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// childEnv marks the re-run of a test binary that plays the owner WatchdogCleansUp kills.
const childEnv = "HOTSPOTKIT_WATCHDOG_CHILD"

// Started calls start under timeout, fails the test when it returns an error, and stops the
// server when the test ends.
func Started[S serverproc.Stopper](t testing.TB, timeout time.Duration, start func(context.Context) (S, error)) S {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := start(ctx)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Exists reports whether path exists.
func Exists(path string) bool { _, err := os.Stat(path); return err == nil }

// WatchdogCleansUp checks that a server is stopped and its directory removed once the process
// that started it is SIGKILLed (no deferred Stop, no signal handler runs). The test binary
// re-runs itself, running only the calling test, as that process: there start starts a server
// and returns its process id and working directory, and the process waits to be killed. what
// names the server's process in errors; within bounds how long the watchdog may take.
func WatchdogCleansUp(t *testing.T, what string, within time.Duration, start func() (pid int, dir string, err error)) {
	t.Helper()
	if os.Getenv(childEnv) == "1" {
		pid, dir, err := start()
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Printf("PID %d DIR %s\n", pid, dir)
		time.Sleep(time.Hour)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "PID %d DIR %s", &pid, &dir); n == 2 {
			break
		}
		if strings.HasPrefix(sc.Text(), "ERR") {
			t.Fatal(sc.Text())
		}
	}
	if pid == 0 || !serverproc.Alive(pid) {
		t.Fatal("child did not start a server")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) && (serverproc.Alive(pid) || Exists(dir)) {
		time.Sleep(100 * time.Millisecond)
	}
	if serverproc.Alive(pid) {
		t.Errorf("%s %d still running after its owner was killed", what, pid)
	}
	if Exists(dir) {
		t.Errorf("%s left behind after its owner was killed", dir)
	}
}
