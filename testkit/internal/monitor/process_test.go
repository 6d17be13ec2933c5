package monitor

import (
	"net"
	"path/filepath"
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

// TestOpenTCPSocketsCountsTCPOnly: a listener and three connections to it (both ends in this
// process) add seven TCP sockets; a Unix socket and a UDP one add none; closing them takes
// the count back.
func TestOpenTCPSocketsCountsTCPOnly(t *testing.T) {
	before := openTCPSockets()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c, s)
	}
	ux, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	if got := openTCPSockets() - before; got != 7 {
		t.Errorf("a listener and three connections: %d more TCP sockets, want 7", got)
	}
	ln.Close()
	for _, c := range conns {
		c.Close()
	}
	if got := openTCPSockets() - before; got != 0 {
		t.Errorf("all closed: %d more TCP sockets than before, want 0", got)
	}
}
