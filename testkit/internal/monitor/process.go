package monitor

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
)

// Point is the part of a sample a soak's figures are computed from (testkit/internal/soak).
type Point struct {
	Time       time.Time
	Completed  int64
	RSSBytes   int64
	Goroutines int
	OpenConns  int
}

var pageSize = int64(os.Getpagesize())

// processStats reads this process's resident memory (/proc/self/statm), goroutines and open
// TCP sockets (/proc/self/fd links to socket inodes listed in /proc/net/tcp{,6}); what cannot
// be read stays 0.
func processStats() (rss int64, goroutines, conns int) {
	goroutines, conns = Held()
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			rss = pages * pageSize
		}
	}
	return rss, goroutines, conns
}

// Held is what the process holds now: its goroutines and open TCP sockets.
func Held() (goroutines, conns int) {
	return runtime.NumGoroutine(), openTCPSockets()
}

// Leftover waits up to settle for the process to come back down to what it held before
// (goroutines and sockets winding down after their pools closed), and returns before and after.
func Leftover(goroutinesBefore, connsBefore int, settle time.Duration) *results.Leftover {
	end := time.Now().Add(settle)
	for {
		g, c := Held()
		if (g <= goroutinesBefore && c <= connsBefore) || time.Now().After(end) {
			return &results.Leftover{GoroutinesBefore: goroutinesBefore, GoroutinesAfter: g, OpenConnsBefore: connsBefore, OpenConnsAfter: c}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openTCPSockets() int {
	tcp := map[string]bool{}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			if f := strings.Fields(string(line)); i > 0 && len(f) > 9 {
				tcp[f[9]] = true // the inode
			}
		}
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok && tcp[strings.TrimSuffix(inode, "]")] {
			n++
		}
	}
	return n
}
