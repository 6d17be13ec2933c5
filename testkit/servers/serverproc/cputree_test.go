package serverproc

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
	"time"
)

// burn is a shell loop that takes a few hundred ms of CPU, then says so and waits on its
// standard input.
const burn = `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo burnt; read x`

// TestTreeCPUTimeCountsChildren: a shell's tree holds its children's processor time, that of
// a child it has reaped (in its cutime) and that of a child still running (read from the
// child's own stat), where the shell's own time holds neither.
func TestTreeCPUTimeCountsChildren(t *testing.T) {
	for name, script := range map[string]string{
		"reaped": "(" + burn + ") & wait; echo reaped; read y",
		"live":   "/bin/sh -c '" + burn + "'; read y",
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", script)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); _ = cmd.Wait() }()
			lines := bufio.NewScanner(out)
			if !lines.Scan() {
				t.Fatal("the loop never finished")
			}
			if name == "reaped" {
				_, _ = in.Write([]byte("\n")) // the child ends, the shell reaps it
				if !lines.Scan() || lines.Text() != "reaped" {
					t.Fatalf("the shell said %q, want reaped", lines.Text())
				}
			}
			user, system, ok := TreeCPUTime(cmd.Process.Pid)
			own := CPUTime(cmd.Process.Pid)
			if !ok || user+system < 30*time.Millisecond || user+system <= own {
				t.Errorf("tree %s user + %s system (%v), the shell alone %s: the child's loop is not in it", user, system, ok, own)
			}
		})
	}
	if _, _, ok := TreeCPUTime(0); ok {
		t.Error("TreeCPUTime(0) read something")
	}
	u, s, ok := TreeCPUTime(os.Getpid())
	if own := CPUTime(os.Getpid()); !ok || u+s < own {
		t.Errorf("this process's tree %s, less than its own %s", u+s, own)
	}
}

// TestStartTime: a process's start lies between the moments before and after it was started,
// within the boot time's whole second.
func TestStartTime(t *testing.T) {
	before := time.Now()
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	at, ok := StartTime(cmd.Process.Pid)
	if !ok || at.Before(before.Add(-1100*time.Millisecond)) || at.After(after.Add(1100*time.Millisecond)) {
		t.Errorf("StartTime = %s (%v), started between %s and %s", at, ok, before, after)
	}
	if _, ok := StartTime(-1); ok {
		t.Error("StartTime(-1) read something")
	}
}
