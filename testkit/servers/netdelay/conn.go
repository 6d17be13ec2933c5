package netdelay

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
)

// conn is one connection of the service to the upstream: the real socket, with each
// direction's delay applied where the service meets it.
//
//   - The server's bytes are held in Read, on the reading goroutine itself: from the kernel's
//     receive time (rxReader) until their due time, then returned.
//   - The service's bytes are handed by Write to the connection's writer goroutine, which
//     delivers them at their due time; Write returns at once, as into a socket buffer, so a
//     stream of writes (a COPY) is not slowed to one a round trip.
//
// With nothing to hold (no delay, nothing held before, no blackhole) both go straight to the
// socket: at zero delay a connection costs a clock reading and an atomic load per call, no
// hop and no goroutine. Bytes keep their order each way; jitter never reorders them.
type conn struct {
	p  *Proxy
	id int
	tc *net.TCPConn
	// ctx ends when the connection is ended by the proxy (Reset, the proxy's Close): held
	// bytes are dropped and every wait wakes. rctx also ends when the service Closes it,
	// which wakes a held Read but lets held writes go out first.
	ctx, rctx     context.Context
	kill, rcancel context.CancelFunc
	reset         atomic.Bool // ended by Reset: reads and writes fail with ECONNRESET
	endOnce       sync.Once
	closeOnce     sync.Once

	// The read side: one Read at a time.
	rmu         sync.Mutex
	rx          *rxReader
	rtimer      *timing.Timer
	held        []byte // read from the socket, not yet returned (heldAt, heldDue: see chunk)
	heldStore   []byte
	heldAt      time.Time
	heldDue     time.Time
	lastDownDue time.Time
	rdl         deadline

	// The write side: Writes are serialized by wmu; the writer goroutine never takes it.
	wmu       sync.Mutex
	q         chan chunk // nil until the first held write starts the writer
	qClosed   bool
	closing   bool // the service Closed the connection (held writes still go out)
	lastUpDue time.Time
	wdl       deadline
	// queued counts chunks handed to the writer and not yet delivered: while it is above zero
	// a Write may not go straight to the socket, past them.
	queued atomic.Int64
	// sockWDL: a write deadline is set on the socket (a direct Write's), which the writer
	// clears before it writes. direct: a direct Write is in progress.
	sockWDL, direct atomic.Bool
	werr            atomic.Pointer[error] // the writer's failure, returned by later Writes
	// spare holds a few buffers the writer has delivered, for the next Writes (made with q):
	// a steady stream of round trips reuses its own, whatever the shared pool kept (which
	// the race detector empties at random) or other connections took.
	spare chan *[]byte
}

func newConn(p *Proxy, id int, tc *net.TCPConn, rx *rxReader) *conn {
	c := &conn{p: p, id: id, tc: tc, rx: rx}
	c.ctx, c.kill = context.WithCancel(p.ctx)
	c.rctx, c.rcancel = context.WithCancel(c.ctx)
	return c
}

// lineChunks bounds the chunks a connection's writer holds: a sender that outruns the
// delay (or a blackhole) then waits, as on a full TCP window. bufSize is a chunk's largest
// size; spareBufs how many delivered buffers a connection keeps for itself (a burst's others
// go back to bufs, shared by every connection).
const (
	lineChunks = 128
	bufSize    = 16 << 10
	spareBufs  = 4
)

var bufs = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// chunk is what one Write handed over (up to bufSize of it), with when it was written and
// when it is due at the server.
type chunk struct {
	buf       *[]byte
	n         int
	read, due time.Time
}

// newBuf is a buffer for a held write: one of the connection's spares, else the pool's.
func (c *conn) newBuf() *[]byte {
	select {
	case b := <-c.spare:
		return b
	default:
		return bufs.Get().(*[]byte)
	}
}

// free gives ch's buffer back: to the connection's spares while they have room, else to the
// pool.
func (c *conn) free(ch *chunk) {
	if ch.buf == nil {
		return
	}
	select {
	case c.spare <- ch.buf:
	default:
		bufs.Put(ch.buf)
	}
	ch.buf = nil
}

// due is when bytes that arrived at at are due at the other end: half their round trip
// later, never before the bytes ahead of them (last, which it moves on).
func due(pa *path, at time.Time, last *time.Time) time.Time {
	d := at.Add(pa.oneWay(at))
	if d.Before(*last) {
		d = *last
	}
	*last = d
	return d
}

// Read returns the server's bytes once their half of the round trip has passed since the
// kernel received them (and any blackhole is over).
func (c *conn) Read(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.rctx.Err() != nil {
		return 0, c.opError("read", c.endedErr())
	}
	if len(b) == 0 {
		return 0, nil
	}
	if len(c.held) == 0 {
		n, at, err := c.rx.read(b)
		if err != nil {
			return 0, c.readErr(err)
		}
		now := time.Now()
		pa := c.p.path.Load()
		d := due(pa, at, &c.lastDownDue)
		if !d.After(now) && !pa.blackholed(now) {
			c.p.down.record(c.id, n, now, at, d)
			return n, nil
		}
		// Held: keep a copy, so that a Read the deadline ends leaves it to the next.
		c.heldStore = append(c.heldStore[:0], b[:n]...)
		c.held, c.heldAt, c.heldDue = c.heldStore, at, d
	}
	if err := c.hold(c.rctx, &c.rdl, &c.rtimer, c.heldDue); err != nil {
		return 0, c.opError("read", err)
	}
	n := copy(b, c.held)
	c.held = c.held[n:]
	c.p.down.record(c.id, n, time.Now(), c.heldAt, c.heldDue)
	return n, nil
}

// readErr is the error of a failed socket read as the service sees it: io.EOF as it is, the
// end the proxy or the service made as theirs.
func (c *conn) readErr(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case c.rctx.Err() != nil:
		return c.opError("read", c.endedErr())
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = os.NewSyscallError("recvmsg", errno)
	}
	return c.opError("read", err)
}

// Write hands b to the writer, due half a round trip from now, or writes it straight to the
// socket when nothing is to be held. It returns at once unless the writer holds lineChunks
// already (then it waits for room, or the write deadline).
func (c *conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.writeErr(); err != nil {
		return 0, err
	}
	now := time.Now()
	pa := c.p.path.Load()
	d := due(pa, now, &c.lastUpDue)
	if c.queued.Load() == 0 && !d.After(now) && !pa.blackholed(now) {
		return c.writeDirect(b, now)
	}
	if c.q == nil {
		c.q, c.spare = make(chan chunk, lineChunks), make(chan *[]byte, spareBufs)
		c.p.wg.Go(c.writer)
	}
	written := 0
	for len(b) > 0 {
		bp := c.newBuf()
		n := copy(*bp, b)
		ch := chunk{buf: bp, n: n, read: now, due: d}
		if err := c.enqueue(ch); err != nil {
			return written, err
		}
		b, written = b[n:], written+n
	}
	return written, nil
}

// writeDirect writes b to the socket under the service's write deadline (wmu held, nothing
// queued: the writer is idle).
func (c *conn) writeDirect(b []byte, now time.Time) (int, error) {
	c.direct.Store(true)
	defer c.direct.Store(false)
	if dl := c.wdl.get(); !dl.IsZero() || c.sockWDL.Load() {
		_ = c.tc.SetWriteDeadline(dl)
		c.sockWDL.Store(!dl.IsZero())
	}
	n, err := c.tc.Write(b)
	if n > 0 {
		c.p.up.record(c.id, n, time.Now(), now, now)
	}
	if err != nil {
		if c.ctx.Err() != nil {
			err = c.endedErr()
		}
		return n, c.opError("write", err)
	}
	return n, nil
}

// enqueue hands ch to the writer, waiting for room until the write deadline (wmu held).
func (c *conn) enqueue(ch chunk) error {
	c.queued.Add(1)
	select {
	case c.q <- ch:
		return nil
	default:
	}
	for {
		ctx, expired := c.wdl.context(c.ctx)
		if expired {
			c.queued.Add(-1)
			c.free(&ch)
			return c.opError("write", os.ErrDeadlineExceeded)
		}
		select {
		case c.q <- ch:
			return nil
		case <-ctx.Done():
			if c.ctx.Err() != nil {
				c.queued.Add(-1)
				c.free(&ch)
				return c.opError("write", c.endedErr())
			}
			// The deadline passed or changed: look again.
		}
	}
}

// writeErr says why a Write cannot be taken (wmu held).
func (c *conn) writeErr() error {
	switch {
	case c.closing || c.ctx.Err() != nil:
		return c.opError("write", c.endedErr())
	case c.werr.Load() != nil:
		return *c.werr.Load()
	}
	return nil
}

// writer delivers the queued chunks at their due times until the queue is closed (the
// service's Close, once what is held went out, or the proxy's end, which drops it), then
// ends the connection.
func (c *conn) writer() {
	var t *timing.Timer
	defer func() {
		if t != nil {
			t.Close()
		}
	}()
	for ch := range c.q {
		if c.ctx.Err() == nil && c.werr.Load() == nil {
			if err := c.hold(c.ctx, nil, &t, ch.due); err == nil {
				c.deliver(&ch)
			}
		}
		c.free(&ch)
		c.queued.Add(-1)
	}
	c.end(false)
}

// deliver writes a held chunk to the socket; a failure is kept for the next Write.
func (c *conn) deliver(ch *chunk) {
	for try := 0; ; try++ {
		if c.sockWDL.Load() {
			_ = c.tc.SetWriteDeadline(time.Time{})
			c.sockWDL.Store(false)
		}
		_, err := c.tc.Write((*ch.buf)[:ch.n])
		if err == nil {
			c.p.up.record(c.id, ch.n, time.Now(), ch.read, ch.due)
			return
		}
		// A deadline the service set for a direct write that just ended is not the
		// writer's: clear it and write again, once.
		if errors.Is(err, os.ErrDeadlineExceeded) && try == 0 {
			c.sockWDL.Store(true)
			continue
		}
		c.fail(err)
		return
	}
}

// fail keeps the writer's failure for later Writes (its own function: a pointer to deliver's
// error would move it to the heap on every delivery).
func (c *conn) fail(err error) {
	if c.ctx.Err() != nil {
		err = c.endedErr()
	}
	err = c.opError("write", err)
	c.werr.Store(&err)
}

// hold waits until due and then out any blackhole (until its end plus half a round trip,
// the retransmission's way across, or its Heal), or until ctx ends or the deadline dl (when
// not nil) passes: os.ErrDeadlineExceeded, or the connection's end.
func (c *conn) hold(ctx context.Context, dl *deadline, t **timing.Timer, due time.Time) error {
	for {
		now := time.Now()
		until := due
		var healed context.Context // the blackhole's end, when it sets until
		if pa := c.p.path.Load(); pa.blackholed(now) {
			if end := pa.blackholeUntil.Add(pa.rtt / 2); end.After(until) {
				until, healed = end, pa.healed
			}
		}
		if !until.After(now) {
			return nil
		}
		wctx := ctx
		if dl != nil {
			var expired bool
			if wctx, expired = dl.context(ctx); expired {
				return os.ErrDeadlineExceeded
			}
		}
		if *t == nil {
			*t = timing.NewTimer()
		}
		if healed != nil { // a Heal ends the wait too (rare: only a blackhole's waits pay for it)
			var stop context.CancelFunc
			wctx, stop = context.WithCancel(wctx)
			unhook := context.AfterFunc(healed, stop)
			_ = (*t).SleepUntil(wctx, until)
			unhook()
			stop()
		} else {
			_ = (*t).SleepUntil(wctx, until)
		}
		if ctx.Err() != nil {
			return c.endedErr()
		}
		// Woken at the deadline, or by a change of it, by a Heal, or at until: look again.
	}
}

// Close closes the connection as the service's side of it: what the writer holds still goes
// out, then the socket is closed; a Read in progress returns.
func (c *conn) Close() error {
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		return c.opError("close", net.ErrClosed)
	}
	c.rcancel()
	_ = c.tc.SetReadDeadline(time.Unix(1, 0)) // wakes a Read waiting on the socket
	c.wmu.Lock()
	c.closing = true
	draining := c.q != nil && !c.qClosed && c.ctx.Err() == nil
	if draining {
		close(c.q)
		c.qClosed = true
	}
	c.wmu.Unlock()
	if !draining {
		c.end(false)
	}
	return nil
}

// end ends the connection once: every wait woken, what is held dropped, the socket closed
// (with an RST, SO_LINGER 0, when rst).
func (c *conn) end(rst bool) {
	c.endOnce.Do(func() {
		if rst {
			c.reset.Store(true)
		}
		c.kill()
		if rst {
			_ = c.tc.SetLinger(0)
		}
		_ = c.tc.Close()
		c.wmu.Lock()
		if c.q != nil && !c.qClosed {
			close(c.q)
			c.qClosed = true
		}
		c.wmu.Unlock()
		c.p.forget(c)
	})
}

// endedErr is what the service sees of a connection that ended: a reset, or a closed one.
func (c *conn) endedErr() error {
	if c.reset.Load() {
		return os.NewSyscallError("read", syscall.ECONNRESET)
	}
	return net.ErrClosed
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.tc.LocalAddr(), Addr: c.tc.RemoteAddr(), Err: err}
}

// SyscallConn is the socket's, for a client's look at the liveness of an idle connection
// (go-redis peeks at a pooled one before it reuses it, and so sees a Reset); a read through
// it would bypass the delay.
func (c *conn) SyscallConn() (syscall.RawConn, error) { return c.tc.SyscallConn() }

func (c *conn) LocalAddr() net.Addr  { return c.tc.LocalAddr() }
func (c *conn) RemoteAddr() net.Addr { return c.tc.RemoteAddr() }

// SetReadDeadline bounds a Read waiting on the socket or holding what it read.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.rdl.set(t)
	return c.tc.SetReadDeadline(t)
}

// SetWriteDeadline bounds a Write waiting for room in the writer's queue or writing straight
// to the socket; what was handed to the writer goes out whatever the deadline, as a
// socket's buffer would.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.wdl.set(t)
	if c.direct.Load() {
		c.sockWDL.Store(true)
		return c.tc.SetWriteDeadline(t)
	}
	return nil
}

func (c *conn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

// deadline is one direction's deadline as a wait can watch it: a context that ends when
// the deadline passes or is changed.
type deadline struct {
	mu     sync.Mutex
	t      time.Time
	ctx    context.Context
	cancel context.CancelFunc
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.t = t
	if d.cancel != nil {
		d.cancel()
		d.ctx, d.cancel = nil, nil
	}
}

func (d *deadline) get() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t
}

// context returns a context of parent that ends at the deadline or when it changes, or
// expired when the deadline has passed.
func (d *deadline) context(parent context.Context) (ctx context.Context, expired bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.t.IsZero() && !time.Now().Before(d.t) {
		return nil, true
	}
	if d.ctx == nil || d.ctx.Err() != nil && parent.Err() == nil {
		if d.t.IsZero() {
			d.ctx, d.cancel = context.WithCancel(parent)
		} else {
			d.ctx, d.cancel = context.WithDeadline(parent, d.t)
		}
	}
	return d.ctx, false
}
