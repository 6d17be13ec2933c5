package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// A network that never comes back: the binary's path to PostgreSQL (or Redis) goes through a TCP
// proxy in another process, which the test stops (SIGSTOP: the connections stay established,
// nothing is answered, no RST) once the load is going. These are the bounds the tests use,
// shorter than the defaults so that a case takes seconds.
const (
	requestTimeout   = 3 * time.Second
	reconcileTimeout = 3 * time.Second
	shutdownTimeout  = 2 * time.Second
	runFor           = 4 * time.Second
)

// proxyEnv makes this test binary a TCP proxy to the address it holds (TestMain): it prints
// the address it listens on and forwards every connection until killed.
const proxyEnv = "HOTSPOTKIT_TEST_PROXY_UPSTREAM"

func serveProxy(upstream string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr().String())
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				return
			}
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			_, _ = io.Copy(c, u)
			c.Close()
		}()
	}
}

// proxy is a proxy process started by startProxy.
type proxy struct {
	cmd  *exec.Cmd
	addr string
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), proxyEnv+"="+upstream)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return &proxy{cmd: cmd, addr: strings.TrimSpace(line)}
}

func (p *proxy) stop()   { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *proxy) resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// through is dsn with its host and port replaced by the proxy's.
func (p *proxy) through(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// partitionCase is one binary run through a proxy that is stopped once its load is going.
type partitionCase struct {
	name  string
	args  []string
	redis bool // the proxy stands before Redis, not PostgreSQL
}

var partitionCases = []partitionCase{
	{"sync", []string{"--modes", "sync"}, false},
	{"outbox", []string{"--modes", "outbox"}, false},
	{"async-compact", []string{"--modes", "async-compact", "--queue-capacity", "20000"}, false},
	{"async-compact on redis", []string{"--modes", "async-compact", "--queue-capacity", "20000", "--queue-backend", "redis"}, true},
}

// partitioned starts c's run with its proxy in place and stops the proxy once the first run has
// acknowledged requests; it returns the run and the proxy.
func partitioned(t *testing.T, c partitionCase, extra ...string) (running, *proxy) {
	t.Helper()
	pg := testdb.Server(t).DSN()
	var p *proxy
	schema := fmt.Sprintf("hotspot_partition_%d", time.Now().UnixNano())
	args := slices.Concat(c.args, []string{"--schema", schema, "--requests", "0", "--duration", runFor.String(), "--concurrency", "50",
		"--request-timeout", requestTimeout.String(), "--reconcile-timeout", reconcileTimeout.String(),
		"--shutdown-timeout", shutdownTimeout.String(), "--progress-interval", "1s"}, extra)
	if c.redis {
		srv := redistest.Start(t, redisserver.Config{})
		p = startProxy(t, srv.Addr())
		args = append(args, "--postgres-url", pg, "--redis-url", p.through(t, srv.URL()))
	} else {
		p = startProxy(t, mustHost(t, pg))
		args = append(args, "--postgres-url", p.through(t, pg))
	}
	r := startRunOn(t, args...)
	p.stop()
	t.Cleanup(func() { dropSchema(t, pg, schema) })
	return r, p
}

func mustHost(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// dropSchema drops what a run through a dead path could not: its schema on the shared server
// (reached directly).
func dropSchema(t *testing.T, dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Log(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Log(err)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestPartitionThatNeverHeals: the run ends by itself, within its duration and the documented
// bounds, exit 1; the report and the summary say unverified, why, and how many requests
// succeeded, failed and ended unknown; nothing is left behind.
func TestPartitionThatNeverHeals(t *testing.T) {
	// The load's end (runFor), the requests cut off (requestTimeout), a drain that waits out
	// both bounds, the wait for the path (reconcileTimeout), one attempt and the cleanup's
	// bounded goodbyes: the bound is theirs plus the race-built binary's slack.
	bound := runFor + 2*requestTimeout + 2*reconcileTimeout + 25*time.Second
	for _, c := range partitionCases {
		bound := bound
		if c.redis { // each step on a dead Redis path waits out its 5 s bound: the drain's last look at the stream, the look for the path, the keys' removal
			bound += 15 * time.Second
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, _ := partitioned(t, c)
			began := time.Now()
			err := r.cmd.Wait()
			took := time.Since(began)
			if code := exitCode(err); code != 1 {
				t.Fatalf("exit %d after %s, want 1\n%s", code, took, r.stderr.String())
			}
			if took > bound {
				t.Errorf("ended %s after the partition, want within %s", took.Round(time.Second), bound)
			}
			t.Logf("ended by itself %s after the partition", took.Round(100*time.Millisecond))
			if left := leftovers(t, r.tmp); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			rep := readReport(t, r.out)
			if len(rep.Runs) != 1 {
				t.Fatalf("%d runs in the report", len(rep.Runs))
			}
			u := rep.Runs[0].Verification.Unverified
			if u == nil || rep.Runs[0].Verification.Passed {
				t.Fatalf("the run should be unverified: %+v", rep.Runs[0].Verification)
			}
			if u.Succeeded == 0 || u.Succeeded+u.Failed+u.Unknown != rep.Runs[0].Load.CompletedRequests+rep.Runs[0].Load.FailedRequests+rep.Runs[0].Load.WarmupRequests {
				t.Errorf("unverified counts %+v do not add up to the load's %+v", u, rep.Runs[0].Load)
			}
			if !strings.Contains(r.stderr.String(), "UNVERIFIED: ") {
				t.Errorf("the summary does not say unverified:\n%s", r.stderr.String())
			}
			unreachable := "PostgreSQL"
			if c.redis {
				unreachable = "Redis"
			}
			if c.name == "sync" && !strings.Contains(u.Reason, unreachable) {
				t.Errorf("the reason does not name %s: %s", unreachable, u.Reason)
			}
		})
	}
}

// TestSignalEndsAHungRun: SIGTERM while every request hangs ends the process within
// --shutdown-timeout and the bounded accounting after it, the report written.
func TestSignalEndsAHungRun(t *testing.T) {
	for _, c := range []partitionCase{partitionCases[0], partitionCases[3]} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, _ := partitioned(t, c, "--duration", "1m")
			time.Sleep(time.Second)
			sent := time.Now()
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
			err := r.cmd.Wait()
			took := time.Since(sent)
			if code := exitCode(err); code != 143 {
				t.Fatalf("exit %d, want 143\n%s", code, r.stderr.String())
			}
			// --shutdown-timeout, the 3 s left to account for the run, the cleanup's own bound.
			bound := shutdownTimeout + 3*time.Second + 8*time.Second
			if c.redis {
				bound += 15 * time.Second
			}
			if took > bound {
				t.Errorf("exit %s after SIGTERM, want within %s\n%s", took.Round(100*time.Millisecond), bound, r.stderr.String())
			}
			t.Logf("exit %s after SIGTERM", took.Round(100*time.Millisecond))
			if left := leftovers(t, r.tmp); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if rep := readReport(t, r.out); !rep.Interrupted || len(rep.Runs) != 1 {
				t.Errorf("report: interrupted=%v, %d runs", rep.Interrupted, len(rep.Runs))
			}
		})
	}
}

// TestPartitionThatHealsLate: the proxy continues after longer than the request timeout, while
// the run waits for it: the run is verified, lost 0, duplicated 0, and the requests cut off by
// the timeout are counted under their class.
func TestPartitionThatHealsLate(t *testing.T) {
	for _, c := range partitionCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, p := partitioned(t, c, "--reconcile-timeout", "40s")
			time.Sleep(requestTimeout + 3*time.Second)
			p.resume()
			if code := exitCode(r.cmd.Wait()); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.stderr.String())
			}
			rep := readReport(t, r.out)
			run := rep.Runs[0]
			suitetest.Verified(t, run)
			if rc := run.Reconciliation; rc == nil || rc.Lost != 0 || rc.Duplicated != 0 {
				t.Errorf("reconciliation %+v", rc)
			}
			if c.name == "sync" && run.Load.ErrorCounts["request_timeout"] == 0 {
				t.Errorf("no request cut off by the timeout was counted: %v", run.Load.ErrorCounts)
			}
		})
	}
}
