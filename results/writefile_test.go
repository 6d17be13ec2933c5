package results

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A report written to a named pipe (as to /dev/null) goes into it, and the pipe stays one:
// renaming a temporary file over it would replace it, and as root /dev/null with it.
func TestWriteFileIntoAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if !NotAFile(fifo) {
		t.Fatalf("NotAFile(%s) false for a named pipe", fifo)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Suite: "s"}
	if err := rep.WriteFile(fifo); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after the write %s is %v (%v), want the named pipe still", fifo, st.Mode(), err)
	}
	select {
	case s := <-got:
		if !strings.Contains(s, `"suite": "s"`) {
			t.Errorf("the pipe's reader got %q, want the report", s)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the pipe's reader got nothing in 10 s")
	}

	// A regular file is written through a temporary one and renamed: nothing else is left.
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if NotAFile(path) {
		t.Errorf("NotAFile of a path that does not exist")
	}
	if err := rep.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the report alone", len(entries))
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 || NotAFile(path) {
		t.Errorf("report mode %v, want a regular file 0644", st.Mode())
	}
}
