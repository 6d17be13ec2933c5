package monitor

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hotspotkit/hotspotkit/results"
)

// Point is the part of a sample a soak's figures are computed from (testkit/internal/measure/soak).
type Point struct {
	Time       time.Time
	Completed  int64
	RSSBytes   int64
	Goroutines int
	OpenConns  int
}

var pageSize = int64(os.Getpagesize())

// processStats reads this process's resident memory (Resident) and goroutines; what cannot be
// read stays 0. Its open TCP sockets are counted apart (openTCPSockets), less often.
func processStats() (rss int64, goroutines int) {
	rss, _, _ = Resident()
	return rss, runtime.NumGoroutine()
}

// Resident is this process's resident memory (/proc/self/statm): all of it, and its
// anonymous part (resident less shared: the heap's touched pages, the stacks, the runtime's
// own). ok is false where it cannot be read.
func Resident() (total, anon int64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, 0, false
	}
	resident, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return resident * pageSize, (resident - shared) * pageSize, true
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

// openTCPSockets counts the process's descriptors that are TCP sockets (IPv4 or IPv6,
// listening ones and MPTCP ones included), asking each socket descriptor itself (SO_DOMAIN, SO_PROTOCOL).
// It does not read /proc/net/tcp: that lists every socket of the machine's network
// namespace, TIME_WAIT ones included, and formatting and parsing it cost milliseconds per
// read on a machine that opened many connections (a tenth of all CPU in the suites' tests).
func openTCPSockets() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		num, err := strconv.Atoi(fd.Name())
		if err != nil {
			continue
		}
		// The descriptor may have been closed (and its number reused) since it was listed:
		// the count is a snapshot either way.
		domain, err := unix.GetsockoptInt(num, unix.SOL_SOCKET, unix.SO_DOMAIN)
		if err != nil || domain != unix.AF_INET && domain != unix.AF_INET6 {
			continue
		}
		// Go's listeners are MPTCP sockets where the kernel has it (falling back to TCP).
		if proto, err := unix.GetsockoptInt(num, unix.SOL_SOCKET, unix.SO_PROTOCOL); err == nil && (proto == unix.IPPROTO_TCP || proto == unix.IPPROTO_MPTCP) {
			n++
		}
	}
	return n
}
