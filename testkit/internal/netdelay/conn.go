package netdelay

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/internal/timing"
)

// conn is one proxied connection: the client's socket, the server's, and a delay line each
// way. It ends when both directions have delivered their end of stream, or at once (both
// sockets closed, what is held dropped) on an error, a Reset or Close.
type conn struct {
	p              *Proxy
	id             int
	client, server *net.TCPConn
	ctx            context.Context // cancelled when the connection ends: wakes held writers
	cancel         context.CancelFunc
	running        atomic.Int32 // directions not yet finished
	once           sync.Once
}

func newConn(p *Proxy, id int, client, server *net.TCPConn) *conn {
	ctx, cancel := context.WithCancel(p.ctx)
	return &conn{p: p, id: id, client: client, server: server, ctx: ctx, cancel: cancel}
}

func (c *conn) start() {
	c.running.Store(2)
	for _, l := range []*line{
		{c: c, src: c.client, dst: c.server, stats: &c.p.up},
		{c: c, src: c.server, dst: c.client, stats: &c.p.down},
	} {
		l.q = make(chan chunk, lineChunks)
		c.p.wg.Go(l.read)
		c.p.wg.Go(l.write)
	}
}

// finished is called by each direction's writer once it delivered its end of stream; the
// second ends the connection.
func (c *conn) finished() {
	if c.running.Add(-1) == 0 {
		c.close(false)
	}
}

// close ends the connection once: with an RST to both peers when rst, else a plain close.
func (c *conn) close(rst bool) {
	c.once.Do(func() {
		c.cancel()
		if rst {
			reset(c.client)
			reset(c.server)
		} else {
			c.client.Close()
			c.server.Close()
		}
		c.p.forget(c)
	})
}

// lineChunks bounds the chunks one direction holds: a sender that outruns the delay (or a
// blackhole) then waits, as on a full TCP window. bufSize is a chunk's largest size.
const (
	lineChunks = 128
	bufSize    = 16 << 10
)

var bufs = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// chunk is what one read took (or the end of the stream, when buf is nil), with when the
// kernel received it and when it is due.
type chunk struct {
	buf       *[]byte
	n         int
	read, due time.Time
}

func (ch *chunk) free() {
	if ch.buf != nil {
		bufs.Put(ch.buf)
		ch.buf = nil
	}
}

// line is one direction of a connection: the reader stamps each chunk with its due time
// (arrival plus the one-way delay, never before the chunk ahead of it) and hands it to the
// writer, which holds it until then. With nothing to hold (no delay, nothing queued, no
// blackhole) the reader writes it itself: at zero delay the proxy is a plain copy.
type line struct {
	c        *conn
	src, dst *net.TCPConn
	stats    *direction
	q        chan chunk
	// queued counts chunks handed to the writer and not yet delivered: while it is above
	// zero the reader may not write past them.
	queued atomic.Int64
	// ended: the end of the stream was delivered (the destination half-closed).
	ended   atomic.Bool
	lastDue time.Time // the reader's: the latest due time handed out
}

func (l *line) read() {
	defer close(l.q)
	src, err := newRxReader(l.src)
	if err != nil {
		l.c.close(true)
		return
	}
	for {
		bp := bufs.Get().(*[]byte)
		n, at, err := src.read(*bp)
		if n > 0 {
			if !l.forward(chunk{buf: bp, n: n, read: at}) {
				return
			}
		} else {
			bufs.Put(bp)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			l.forward(chunk{read: at})
			return
		default:
			// The peer reset or the connection was closed: reset the other side too.
			l.c.close(true)
			return
		}
	}
}

// forward delivers ch now when nothing is to be held, else queues it for the writer; false
// when the connection ended.
func (l *line) forward(ch chunk) bool {
	pa := l.c.p.path.Load()
	ch.due = ch.read.Add(pa.oneWay(ch.read))
	if ch.due.Before(l.lastDue) {
		ch.due = l.lastDue
	}
	l.lastDue = ch.due
	if now := time.Now(); !ch.due.After(now) && !pa.blackholed(now) && l.queued.Load() == 0 {
		return l.deliver(&ch)
	}
	l.queued.Add(1)
	select {
	case l.q <- ch:
		return true
	case <-l.c.ctx.Done():
		ch.free()
		return false
	}
}

// write delivers the queued chunks at their due times until the reader closes the queue; a
// connection that ended meanwhile has its chunks dropped.
func (l *line) write() {
	var timer *timing.Timer
	defer func() {
		if timer != nil {
			timer.Close()
		}
	}()
	for ch := range l.q {
		if ch.due.After(time.Now()) || l.c.p.path.Load().blackholed(time.Now()) {
			if timer == nil {
				timer = timing.NewTimer()
			}
			if !l.hold(timer, ch.due) {
				ch.free()
				continue
			}
		}
		if l.c.ctx.Err() != nil || !l.deliver(&ch) {
			ch.free()
			continue
		}
		l.queued.Add(-1)
	}
	if l.ended.Load() {
		l.c.finished()
	}
}

// hold waits until due and then out any blackhole (to its end plus half a round trip, the
// retransmission's way across); false when the connection ended first.
func (l *line) hold(timer *timing.Timer, due time.Time) bool {
	if timer.SleepUntil(l.c.ctx, due) != nil {
		return false
	}
	for {
		pa := l.c.p.path.Load()
		if !pa.blackholed(time.Now()) {
			return true
		}
		if timer.SleepUntil(l.c.ctx, pa.blackholeUntil.Add(pa.rtt/2)) != nil {
			return false
		}
	}
}

// deliver writes ch to the destination (or half-closes it at the end of the stream) and
// counts it; false when the write failed and the connection was ended.
func (l *line) deliver(ch *chunk) bool {
	if ch.buf == nil {
		if err := l.dst.CloseWrite(); err != nil {
			l.c.close(true)
			return false
		}
		l.ended.Store(true)
		return true
	}
	_, err := l.dst.Write((*ch.buf)[:ch.n])
	ch.free()
	if err != nil {
		l.c.close(true)
		return false
	}
	done := time.Now()
	l.stats.bytes.Add(int64(ch.n))
	l.stats.chunks.Add(1)
	l.stats.hold.Record(l.c.id, done.Sub(ch.read))
	if ch.due.After(ch.read) {
		l.stats.late.Record(l.c.id, done.Sub(ch.due))
	}
	return true
}
