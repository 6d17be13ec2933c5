// Package serverproctest holds what the tests of the temporary servers (testkit/servers/pgserver,
// redisserver, pgbouncer, mariadbserver) share: starting a server for one test, the checks that
// it runs in a session of its own, that Stop leaves nothing and that its watchdog cleans up
// after an owner that was SIGKILLed, a port taken and a directory every user reaches, stopping
// a server a test binary's tests shared, and what a test does when a server or a program it
// needs is not installed (Missing). It is for tests only.
package serverproctest

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// Shared is a server a test binary's tests share: started by the first test that asks for it
// (Get), stopped once they have all run (Stop, from TestMain).
type Shared[S serverproc.Stopper] struct {
	what    string
	timeout time.Duration
	start   func(context.Context) (S, error)
	once    sync.Once
	srv     S
	err     error
}

// NewShared is a shared server that start starts within timeout; what names it in errors.
func NewShared[S serverproc.Stopper](what string, timeout time.Duration, start func(context.Context) (S, error)) *Shared[S] {
	return &Shared[S]{what: what, timeout: timeout, start: start}
}

// Get returns the server, starting it on first use; a start that failed fails the test (and
// every later one that asks).
func (s *Shared[S]) Get(t testing.TB) S {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		s.srv, s.err = s.start(ctx)
	})
	if s.err != nil {
		t.Fatalf("starting %s: %v", s.what, s.err)
	}
	return s.srv
}

// Stop stops the server if a test started it, and returns code, the tests' exit code, or 1
// when stopping failed (StopShared).
func (s *Shared[S]) Stop(code int) int { return StopShared(code, s.what, s.srv) }

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

// InOwnSession fails the test when pid, a server's process (what names it), shares this
// process's process group: a terminal's Ctrl-C would reach it, which the servers' packages
// prevent by starting it in a session of its own, to stop it in order.
func InOwnSession(t testing.TB, what string, pid int) {
	t.Helper()
	if pgid, _ := syscall.Getpgid(pid); pgid == syscall.Getpgrp() {
		t.Errorf("%s shares our process group; Ctrl-C would reach it", what)
	}
}

// ProcessUID is the user id pid runs as.
func ProcessUID(t testing.TB, pid int) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid), &st); err != nil {
		t.Fatalf("stat /proc/%d: %v", pid, err)
	}
	return int(st.Uid)
}

// StopLeavesNothing stops srv, whose process is pid (what names it) and working directory dir,
// and checks that the process is gone, the directory removed, and a second Stop a no-op.
func StopLeavesNothing[S serverproc.Stopper](t testing.TB, what string, srv S, pid int, dir string) {
	t.Helper()
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if serverproc.Alive(pid) {
		t.Errorf("%s %d alive after Stop", what, pid)
	}
	if Exists(dir) {
		t.Errorf("%s left after Stop", dir)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TakenPort is a loopback port that a listener of the test holds until the test ends.
func TakenPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// ReachableDir is a new directory in os.TempDir() that every user may enter (mode 0755; not
// t.TempDir, whose parent is its own user's alone), for what a server started by root reaches
// as its own user, such as a template directory; it is removed when the test ends.
func ReachableDir(t testing.TB, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Opened opens a test's own place on a shared server with open (a database target of either
// kind: what, its schema or database, names it in errors), with one suite's SQL at most, and
// closes it, dropping the place, when the test ends.
func Opened[T interface{ Close() error }](t testing.TB, what string, suiteSQL []fs.FS, open func(context.Context, fs.FS) (T, error)) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var sql fs.FS
	switch len(suiteSQL) {
	case 0:
	case 1:
		sql = suiteSQL[0]
	default:
		t.Fatalf("one suite's SQL at most, got %d", len(suiteSQL))
	}
	target, err := open(ctx, sql)
	if err != nil {
		t.Fatalf("opening a test %s: %v", what, err)
	}
	t.Cleanup(func() {
		if err := target.Close(); err != nil {
			t.Errorf("closing the test %s: %v", what, err)
		}
	})
	return target
}
