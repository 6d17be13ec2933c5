package monitor

import (
	"net"
	"path/filepath"
	"testing"
)

// steady runs measure, which opens sockets, counts, closes them and returns the count before,
// with them open and after, until the count after equals the count before: the process's
// other TCP sockets held still meanwhile. Another test's pool may still be closing its
// connections in the background (a socket counted before can be gone after). After five tries
// it returns the last counts as they are.
func steady(measure func() (before, open, after int)) (before, open, after int) {
	for try := 1; ; try++ {
		if before, open, after = measure(); before == after || try == 5 {
			return before, open, after
		}
	}
}

func TestProcessStatsCountMemoryGoroutinesAndSockets(t *testing.T) {
	rss, goroutines := processStats()
	if rss <= 0 || goroutines <= 0 {
		t.Fatalf("rss %d, goroutines %d", rss, goroutines)
	}
	before, open, _ := steady(func() (before, open, after int) {
		before = openTCPSockets()
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
		open = openTCPSockets()
		s.Close()
		c.Close()
		l.Close()
		after = openTCPSockets()
		return before, open, after
	})
	// The listener, the dialled side and the accepted side.
	if open != before+3 {
		t.Errorf("open TCP sockets %d -> %d, want +3", before, open)
	}
}

// TestOpenTCPSocketsCountsTCPOnly: a listener and three connections to it (both ends in this
// process) add seven TCP sockets; a Unix socket and a UDP one add none; closing them takes
// the count back.
func TestOpenTCPSocketsCountsTCPOnly(t *testing.T) {
	before, open, after := steady(func() (before, open, after int) {
		before = openTCPSockets()
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
		open = openTCPSockets()
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
		return before, open, openTCPSockets()
	})
	if got := open - before; got != 7 {
		t.Errorf("a listener and three connections: %d more TCP sockets, want 7", got)
	}
	if got := after - before; got != 0 {
		t.Errorf("all closed: %d more TCP sockets than before, want 0", got)
	}
}
