package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page holds a chart for each of the fixtures' kinds: throughput, latency and enqueue
// latency bars, the ladder, the repeated report's, and the samples over time.
func TestWritesThePage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "page.html")
	var stderr bytes.Buffer
	if code := run([]string{"--output", out}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "echarts.init("); n < 8 {
		t.Errorf("the page has %d charts, want every kind's (8 or more)", n)
	}
	for _, want := range []string{"async-compact", "outbox", "lock waiters", "ladder"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--bogus"}, {"-o", "a.html", "extra"}} {
		var stderr bytes.Buffer
		if code := run(args, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, %q; want 2 and a line saying why", args, code, stderr.String())
		}
	}
}
