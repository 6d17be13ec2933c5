package redisserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// needBinary is redistest.Need, which this package's tests cannot import (it imports this
// package).
func needBinary(t *testing.T) {
	t.Helper()
	if _, err := FindBinary(""); err != nil {
		serverproctest.Missing(t, "%v", err)
	}
}

func startForTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	return serverproctest.Started(t, 30*time.Second, func(ctx context.Context) (*Server, error) { return Start(ctx, cfg) })
}

func TestStartUseStopLeavesNothing(t *testing.T) {
	needBinary(t)
	s := startForTest(t, Config{})
	opts, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := context.Background()
	if err := c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"k", "v"}}).Err(); err != nil {
		t.Fatalf("XADD: %v", err)
	}
	cfg, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["appendonly"] != "no" || cfg["save"] != "" || cfg["bind"] != "127.0.0.1" {
		t.Errorf("persistence or bind not as configured: appendonly=%q save=%q bind=%q", cfg["appendonly"], cfg["save"], cfg["bind"])
	}
	noAuth := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer noAuth.Close()
	if err := noAuth.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("a client without the password got %v, want NOAUTH", err)
	}
	if s.Version() == "" {
		t.Error("no version read")
	}
	pid, dir := s.PID(), s.Dir()
	serverproctest.InOwnSession(t, "redis-server", pid)
	serverproctest.StopLeavesNothing(t, "redis-server", s, pid, dir)
}

func TestPersistTurnsTheAppendOnlyFileOn(t *testing.T) {
	needBinary(t)
	s := startForTest(t, Config{Persist: PersistEverysec})
	opts, _ := redis.ParseURL(s.URL())
	c := redis.NewClient(opts)
	defer c.Close()
	cfg, err := c.ConfigGet(context.Background(), "appendonly").Result()
	if err != nil || cfg["appendonly"] != "yes" {
		t.Fatalf("appendonly = %v (%v), want yes", cfg, err)
	}
}

func TestStopAllStopsEverything(t *testing.T) {
	needBinary(t)
	a, b := startForTest(t, Config{}), startForTest(t, Config{})
	pids := []int{a.PID(), b.PID()}
	if err := StopAll(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if serverproc.Alive(pid) {
			t.Errorf("redis-server %d alive after StopAll", pid)
		}
	}
}

func TestMissingBinaryIsAClearError(t *testing.T) {
	_, err := Start(context.Background(), Config{Binary: "/nonexistent/redis-server"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/redis-server") {
		t.Fatalf("want an error naming the binary, got %v", err)
	}
}

// TestWatchdogStopsServerWhenOwnerIsKilled starts a server from a child process (this test
// binary re-run), SIGKILLs that process, and checks the watchdog kills the server and removes
// its directory.
func TestWatchdogStopsServerWhenOwnerIsKilled(t *testing.T) {
	needBinary(t)
	serverproctest.WatchdogCleansUp(t, "redis-server", 15*time.Second, func() (int, string, error) {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			return 0, "", err
		}
		return s.PID(), s.Dir(), nil
	})
}

func TestCrashRestartsOnTheSamePortWithWhatTheFileHeld(t *testing.T) {
	needBinary(t)
	for _, c := range []struct {
		persist string
		keeps   bool
	}{{PersistOff, false}, {PersistAlways, true}} {
		t.Run(c.persist, func(t *testing.T) {
			s := startForTest(t, Config{Persist: c.persist})
			ctx := context.Background()
			opts, _ := redis.ParseURL(s.URL())
			cl := redis.NewClient(opts)
			defer cl.Close()
			if err := cl.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"k", "v"}}).Err(); err != nil {
				t.Fatal(err)
			}
			addr, pid := s.Addr(), s.PID()
			if err := s.Crash(ctx, 100*time.Millisecond); err != nil {
				t.Fatalf("Crash: %v", err)
			}
			if serverproc.Alive(pid) || s.PID() == pid || s.Addr() != addr {
				t.Errorf("after the crash: old pid %d alive %v, new pid %d, addr %s -> %s", pid, serverproc.Alive(pid), s.PID(), addr, s.Addr())
			}
			n, err := cl.XLen(ctx, "s").Result()
			for err != nil && strings.Contains(err.Error(), "LOADING") {
				n, err = cl.XLen(ctx, "s").Result()
			}
			if err != nil {
				n, err = cl.XLen(ctx, "s").Result() // the pool's first connection died with the server
			}
			if err != nil || (n == 1) != c.keeps {
				t.Errorf("XLEN after the crash = %d (%v); want the entry kept: %v", n, err, c.keeps)
			}
		})
	}
}
