package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

func TestReadSamples(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, s := range resultstest.Samples()[:3] {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	good := buf.String()
	var header bytes.Buffer
	if err := results.WriteSamplesHeader(&header, resultstest.Suite); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(header.String(), `"schema_version":`) || strings.Count(header.String(), "\n") != 1 {
		t.Fatalf("header %q", header.String())
	}

	// With a header and without (a file from before it), each with a truncated last line: a
	// run killed mid-write leaves one, and it is dropped.
	for name, head := range map[string]string{"headed": header.String(), "headerless": ""} {
		path := filepath.Join(dir, name+".ndjson")
		if err := os.WriteFile(path, []byte(head+good+"\n"+`{"t":"2025-03-14T09:30:00Z","run":0,"mo`), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := results.ReadSamples(path)
		if err != nil {
			t.Fatalf("%s, truncated last line: %v", name, err)
		}
		if len(got) != 3 || got[2].ElapsedMs != 200 || got[1].WaitersByRelation["api_keys"] != 1 {
			t.Errorf("%s: samples = %+v", name, got)
		}
	}

	bad := filepath.Join(dir, "bad.ndjson")
	lines := strings.SplitAfter(good, "\n")
	if err := os.WriteFile(bad, []byte(lines[0]+"{not json}\n"+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadSamples(bad); err == nil || !strings.Contains(err.Error(), "bad.ndjson:2:") {
		t.Errorf("malformed middle line: err = %v", err)
	}
	newer := filepath.Join(dir, "newer.ndjson")
	if err := os.WriteFile(newer, []byte(`{"schema_version":999,"samples_of":"x"}`+"\n"+good), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadSamples(newer); err == nil || !strings.Contains(err.Error(), "newer than this tool understands") {
		t.Errorf("samples of a newer version: err = %v", err)
	}
	if _, err := results.ReadSamples(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file read")
	}
}

// Every committed samples file reads (they predate the header).
func TestCommittedSamplesRead(t *testing.T) {
	paths := recordstest.Reports(t, ".samples.ndjson")
	for _, p := range paths {
		s, err := results.ReadSamples(p)
		if err != nil {
			t.Errorf("%v", err)
		} else if len(s) == 0 {
			t.Errorf("%s: no samples", p)
		}
	}
}
