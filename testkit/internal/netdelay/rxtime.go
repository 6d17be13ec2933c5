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
// µs, which would otherwise be added to every delay.
type rxReader struct {
	rc    syscall.RawConn
	stamp bool
	oob   [8]uint64 // a control message: a cmsghdr and a timespec (uint64s keep it aligned)
}

func newRxReader(c *net.TCPConn) (*rxReader, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rxReader{rc: rc}
	if err := rc.Control(func(fd uintptr) {
		r.stamp = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	}); err != nil {
		return nil, err
	}
	return r, nil
}

// read reads into buf and says when the kernel received the last of it (now, when it does
// not say). The end of the stream is io.EOF.
func (r *rxReader) read(buf []byte) (n int, at time.Time, err error) {
	oob := unsafe.Slice((*byte)(unsafe.Pointer(&r.oob[0])), unsafe.Sizeof(r.oob))
	var oobn int
	rerr := r.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = unix.Recvmsg(int(fd), buf, oob, 0)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	})
	now := time.Now()
	switch {
	case rerr != nil:
		return 0, now, rerr
	case err != nil:
		return 0, now, err
	case n == 0 && len(buf) > 0:
		return 0, now, io.EOF
	}
	return n, rxTime(oob[:oobn], now), nil
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
