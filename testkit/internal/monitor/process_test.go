package monitor

import (
	"net"
	"testing"
)

func TestProcessStatsCountMemoryGoroutinesAndSockets(t *testing.T) {
	rss, goroutines, before := processStats()
	if rss <= 0 || goroutines <= 0 {
		t.Fatalf("rss %d, goroutines %d", rss, goroutines)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The listener, the dialled side and the accepted side.
	if _, _, after := processStats(); after != before+3 {
		t.Errorf("open TCP sockets %d -> %d, want +3", before, after)
	}
}
