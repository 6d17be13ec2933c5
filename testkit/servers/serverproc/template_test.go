package serverproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Processes (here goroutines) that share a template directory make the template once; each
// then reads the whole of it; a failed make leaves no template, and the next caller makes it.
func TestWithTemplateMakesItOnce(t *testing.T) {
	base := filepath.Join(t.TempDir(), "tpl")
	var made atomic.Int32
	fill := func(dir string) error {
		made.Add(1)
		time.Sleep(20 * time.Millisecond) // the others wait on the lock meanwhile
		return os.WriteFile(filepath.Join(dir, "data"), []byte("initialised"), 0o600)
	}
	if err := WithTemplate(base, func(string) error { return errors.New("initdb failed") }, nil); err == nil || !strings.Contains(err.Error(), "making the template: initdb failed") {
		t.Fatalf("a failing make: %v", err)
	}
	if _, err := os.Stat(base); err == nil {
		t.Fatal("a failed make left a template")
	}
	var wg sync.WaitGroup
	read := make([]string, 4)
	for i := range read {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := WithTemplate(base, fill, func(dir string) error {
				b, err := os.ReadFile(filepath.Join(dir, "data"))
				read[i] = string(b)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if made.Load() != 1 {
		t.Errorf("the template was made %d times, want once", made.Load())
	}
	for i, r := range read {
		if r != "initialised" {
			t.Errorf("caller %d read %q", i, r)
		}
	}
	if _, err := os.Stat(base + ".new"); err == nil {
		t.Error("base.new left")
	}
}

func TestCheckReachable(t *testing.T) {
	parent := t.TempDir()
	closed := filepath.Join(parent, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	const other = 65534 // not this process's user, who owns the directories
	if err := CheckReachable(closed, other, "nobody"); err == nil || !strings.Contains(err.Error(), "directory "+closed+" is not searchable by others: user nobody") {
		t.Errorf("a 0700 directory: %v", err)
	}
	if err := CheckReachable(closed, os.Geteuid(), "me"); err != nil {
		t.Errorf("its owner: %v", err)
	}
}

// The watchdog of an instance whose process started children (a script's: a set-up step) kills
// them too, and removes the directory.
func TestInstanceWatchdogKillsTheSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "server")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := NewInstance(dir)
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Launch(cmd); err != nil {
		t.Fatal(err)
	}
	if err := in.Arm(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 32)
	n, _ := out.Read(line)
	child, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil || !Alive(child) {
		t.Fatalf("no child running: %q, %v", line[:n], err)
	}
	_ = in.watchdog.w.Close() // as the owner's death would
	_ = in.watchdog.cmd.Wait()
	<-in.Exited()
	deadline := time.Now().Add(5 * time.Second)
	for Alive(child) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if Alive(child) {
		t.Errorf("the process's child %d outlived the watchdog", child)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s left", dir)
	}
}
