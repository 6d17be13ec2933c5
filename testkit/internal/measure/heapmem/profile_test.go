package heapmem

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestProfilePeak(t *testing.T) {
	if _, err := ProfilePeak(filepath.Join(t.TempDir(), "missing", "heap.pprof")); err == nil {
		t.Error("a path in a missing directory was accepted")
	}
	path := filepath.Join(t.TempDir(), "heap.pprof")
	stop, err := ProfilePeak(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) { // pprof profiles are gzipped protobuf
		t.Errorf("profile of %d bytes does not start with the gzip magic", len(b))
	}
}
