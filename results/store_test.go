package results

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStoreFilesByMachineClass(t *testing.T) {
	src := filepath.Join(t.TempDir(), "run.json")
	rep := &Report{SchemaVersion: SchemaVersion, Suite: "usage_counter_hotspot_baseline",
		Environment: Environment{MachineClass: "linux-amd64-2cpu-24gib"},
		Runs:        []Run{{Mode: "sync"}, {Mode: "async-compact"}}}
	if err := rep.WriteFile(src); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SamplesPath(src), []byte(`{"run":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dest, err := Store(dir, src)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "linux-amd64-2cpu-24gib", rep.Suite+".json")
	if dest != want {
		t.Fatalf("stored at %s, want %s", dest, want)
	}
	back, err := ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if back.SamplesFile != filepath.Base(SamplesPath(dest)) || len(back.Runs) != len(rep.Runs) {
		t.Errorf("stored report: samples %q, %d runs", back.SamplesFile, len(back.Runs))
	}
	if b, err := os.ReadFile(SamplesPath(dest)); err != nil || string(b) != `{"run":0}`+"\n" {
		t.Errorf("samples not copied: %q %v", b, err)
	}
}
