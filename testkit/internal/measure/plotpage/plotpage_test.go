package plotpage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stand-in for the baseline tool on PATH: it records its arguments in the page it is told
// to write, or fails as the tool does on a report it cannot read.
func fakeTool(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = plot ] && [ \"$3\" = --output ] || exit 2\n" +
		"[ -f \"$2\" ] || { echo \"baseline plot: $2: no such file\" >&2; exit 2; }\necho \"$@\" > \"$4\"\n"
	if err := os.WriteFile(filepath.Join(dir, Tool), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return filepath.Join(dir, Tool)
}

func TestLocateAndWrite(t *testing.T) {
	want := fakeTool(t)
	tool, err := Locate()
	if err != nil || tool != want {
		t.Fatalf("Locate = %q, %v; want %q", tool, err, want)
	}
	dir := t.TempDir()
	report, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	if err := os.WriteFile(report, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), tool, report, page); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); strings.TrimSpace(string(b)) != "plot "+report+" --output "+page {
		t.Errorf("the tool ran with %q", b)
	}
	err = Write(context.Background(), tool, filepath.Join(dir, "missing.json"), page)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a failing tool: %v, want its stderr in the error", err)
	}
}

func TestLocateWithoutTheTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Locate(); err != ErrNoTool {
		t.Errorf("Locate without the tool: %v", err)
	}
}
