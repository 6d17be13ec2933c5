package netdelay

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxReader reads a TCP socket together with the kernel's receive time of what it read
// (SO_TIMESTAMPNS), so that a chunk's delay counts from its arrival and not from when the
// reader's goroutine got to run: on a busy machine that wake-up alone is tens to hundreds of
// µs, which would otherwise be added to every delay. It calls recvmsg itself on a message
// header built once, so that a read allocates nothing (x/sys/unix's Recvmsg allocates twice).
type rxReader struct {
	rc  syscall.RawConn
	msg unix.Msghdr
	iov unix.Iovec
	oob [8]uint64 // the control message: a cmsghdr and a timespec (uint64s keep it aligned)
	// recv is the recvmsg the poller retries until the socket is readable, built once (a
	// closure per read would allocate); n and errno are its results.
	recv  func(fd uintptr) bool
	n     int
	errno unix.Errno
}

func newRxReader(c *net.TCPConn) (*rxReader, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rxReader{rc: rc}
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	r.msg.Control = (*byte)(unsafe.Pointer(&r.oob[0]))
	r.recv = func(fd uintptr) bool {
		for {
			r.msg.SetControllen(int(unsafe.Sizeof(r.oob)))
			n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
			if errno != unix.EINTR {
				r.n, r.errno = int(n), errno
				return errno != unix.EAGAIN
			}
		}
	}
	// Should the kernel refuse the stamps, a chunk arrives when its read returns.
	if err := rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// read reads into buf (not empty) and says when the kernel received the last of it (now,
// when it does not say). The end of the stream is io.EOF.
func (r *rxReader) read(buf []byte) (n int, at time.Time, err error) {
	r.iov.Base = &buf[0]
	r.iov.SetLen(len(buf))
	rerr := r.rc.Read(r.recv)
	r.iov.Base = nil
	now := time.Now()
	switch {
	case rerr != nil:
		return 0, now, rerr
	case r.errno != 0:
		return 0, now, r.errno
	case r.n == 0:
		return 0, now, io.EOF
	}
	oob := unsafe.Slice((*byte)(unsafe.Pointer(&r.oob[0])), r.msg.Controllen)
	return r.n, rxTime(oob, now), nil
}

// rxTime reads the receive time out of a control message, as a time with now's monotonic
// reading: now less the age the wall clocks give. A missing or implausible stamp (the wall
// clock stepped) is now.
func rxTime(oob []byte, now time.Time) time.Time {
	if len(oob) < unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))) {
		return now
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	if h.Level != unix.SOL_SOCKET || h.Type != unix.SCM_TIMESTAMPNS {
		return now
	}
	ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
	age := now.Sub(time.Unix(ts.Unix()))
	if age < 0 || age > time.Second {
		return now
	}
	return now.Add(-age)
}
