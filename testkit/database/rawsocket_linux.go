package database

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// rawSocket reads and writes a TCP or Unix socket of the service's connections with raw
// system calls, through the socket's own poller (syscall.RawConn): the same bytes, the same
// waits for readiness, the same deadlines, but without the runtime's bookkeeping of a call
// that may block. Go's sockets are non-blocking, so a read or write returns at once (with
// EAGAIN when it would wait, and then the goroutine parks on the poller as net.Conn's would);
// announced as blocking (syscall.Syscall), each one wakes the runtime's monitor thread when it
// sleeps and lets it hand the processor to another thread when the call runs past 20 µs (a
// loopback write delivers the bytes to the server in the caller's time): two thread wake-ups
// and their context switches per statement that the process pays and pgbench does not.
type rawSocket struct {
	net.Conn
	rc syscall.RawConn

	// A read's and a write's state, so that the functions given to the RawConn are made
	// once and nothing is allocated per call; a net.Conn may be read, and written, from
	// several goroutines at once.
	rmu, wmu   sync.Mutex
	rbuf       []byte
	rn         int
	rerr       syscall.Errno
	wbuf       []byte
	wn         int
	werr       syscall.Errno
	read, writ func(fd uintptr) bool
}

// newRawSocket is c read and written by raw system calls, or c itself where it is not a
// plain TCP or Unix socket (a route's proxy connection reads and writes through its own code).
func newRawSocket(c net.Conn) net.Conn {
	var sc syscall.Conn
	switch c := c.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	s := &rawSocket{Conn: c, rc: rc}
	s.read, s.writ = s.readFD, s.writeFD
	return s
}

func (s *rawSocket) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(s.rbuf))), uintptr(len(s.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		s.rn, s.rerr = int(n), e
		return true
	}
}

func (s *rawSocket) writeFD(fd uintptr) bool {
	for s.wn < len(s.wbuf) {
		rest := s.wbuf[s.wn:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch e {
		case 0:
			s.wn += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = e
			return true
		}
	}
	return true
}

// Read is net.Conn's Read: io.EOF at the end of the stream, a *net.OpError otherwise.
func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	s.rbuf, s.rn, s.rerr = p, 0, 0
	err := s.rc.Read(s.read)
	n, errno := s.rn, s.rerr
	s.rbuf = nil
	s.rmu.Unlock()
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	raceWritten(p[:n])
	return n, nil
}

// Write is net.Conn's Write: all of p, or an error.
func (s *rawSocket) Write(p []byte) (int, error) {
	raceRead(p)
	s.wmu.Lock()
	s.wbuf, s.wn, s.werr = p, 0, 0
	err := s.rc.Write(s.writ)
	n, errno := s.wn, s.werr
	s.wbuf = nil
	s.wmu.Unlock()
	switch {
	case err != nil:
		return n, s.opError("write", err)
	case errno != 0:
		return n, s.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// opError is err as net.Conn's own: a RawConn's are *net.OpError of op "raw-read" or
// "raw-write", whose cause (a deadline's os.ErrDeadlineExceeded, net.ErrClosed) is kept.
func (s *rawSocket) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: s.LocalAddr().Network(), Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}
