package redisserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func needBinary(t *testing.T) {
	t.Helper()
	if _, err := FindBinary(""); err != nil {
		t.Skip(err)
	}
}

func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func startForTest(t *testing.T, cfg Config) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
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
	if sid, _ := syscall.Getpgid(pid); sid == syscall.Getpgrp() {
		t.Errorf("redis-server shares our process group; Ctrl-C would reach it")
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if alive(pid) {
		t.Errorf("redis-server %d alive after Stop", pid)
	}
	if exists(dir) {
		t.Errorf("%s left after Stop", dir)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestPersistTurnsTheAppendOnlyFileOn(t *testing.T) {
	needBinary(t)
	s := startForTest(t, Config{Persist: true})
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
		if alive(pid) {
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
	if os.Getenv("HOTSPOTKIT_REDIS_WATCHDOG_CHILD") == "1" {
		s, err := Start(context.Background(), Config{})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Printf("PID %d DIR %s\n", s.PID(), s.Dir())
		time.Sleep(time.Hour)
	}
	needBinary(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWatchdogStopsServerWhenOwnerIsKilled$")
	cmd.Env = append(os.Environ(), "HOTSPOTKIT_REDIS_WATCHDOG_CHILD=1")
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
	if pid == 0 || !alive(pid) {
		t.Fatal("child did not start a server")
	}
	_ = cmd.Process.Kill() // SIGKILL: no deferred Stop, no signal handler runs
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && (alive(pid) || exists(dir)) {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("redis-server %d still running after its owner was killed", pid)
	}
	if exists(dir) {
		t.Errorf("%s left behind after its owner was killed", dir)
	}
}
