package plan

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutputCheckLeavesANamedPipeAlone: the check of --output neither waits for a named
// pipe's reader (an open for writing would, forever without one) nor opens and closes it
// (which would end its reader's input before the report came); a directory is refused.
func TestOutputCheckLeavesANamedPipeAlone(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- checkOutputWritable(fifo) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a named pipe: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the check of --output waits for the named pipe's reader")
	}
	if err := checkOutputWritable(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
}
