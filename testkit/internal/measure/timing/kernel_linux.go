package timing

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// timerfd is a kernel timer parked on in Go's network poller. Its hrtimer is armed with no
// slack (timerfd_settime takes none, whatever the thread's timer slack), so it fires at the
// deadline; the poller's thread, asleep in epoll, wakes on it and runs the waiting
// goroutine. Nothing spins and no thread is held while it waits.
//
// Its backstop (arm's at) is the descriptor's read deadline, a timer of Go's own, for the
// waits of a process too busy for Go to look at its poller (package comment, busyAbove).
type timerfd struct {
	fd   int
	file *os.File
	rc   syscall.RawConn
	// read is the read of the expiry count the poller retries, built once (a closure per
	// wait would allocate).
	read func(fd uintptr) bool
	buf  [8]byte
	// backstop: a read deadline is set.
	backstop bool
	// mu keeps fireNow, which a context's cancellation calls from another goroutine, off a
	// descriptor close has released (its number could already name another file).
	mu     sync.Mutex
	closed bool
}

// newWaiter returns a timerfd, or Go's timer when the kernel refuses one.
func newWaiter() waiter {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newGoTimer()
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return newGoTimer()
	}
	k := &timerfd{fd: fd, file: f, rc: rc}
	k.read = func(fd uintptr) bool {
		_, err := unix.Read(int(fd), k.buf[:])
		return err != unix.EAGAIN && err != unix.EINTR
	}
	return k
}

// arm sets the timer to fire after d (d > 0), replacing any earlier setting and clearing an
// expiry not yet read, and the backstop to end the wait at at (none if at is zero).
func (k *timerfd) arm(d time.Duration, at time.Time) {
	k.set(d)
	if !at.IsZero() || k.backstop {
		_ = k.file.SetReadDeadline(at)
		k.backstop = !at.IsZero()
	}
}

// set sets the kernel timer alone to fire after d.
func (k *timerfd) set(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_ = unix.TimerfdSettime(k.fd, 0, &spec, nil) // fails only on a closed descriptor
}

// wait blocks until the timer fires or fireNow is called (true), or the backstop passes
// (false). A descriptor closed under it (a Timer waited on after Close) ends the wait too,
// as a firing.
func (k *timerfd) wait() bool {
	return !errors.Is(k.rc.Read(k.read), os.ErrDeadlineExceeded)
}

func (k *timerfd) fireNow() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.closed {
		k.set(time.Nanosecond)
	}
}

func (k *timerfd) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	return k.file.Close()
}
