// Package netdelay owns the kit's in-process network: a TCP proxy between the kit's clients
// and one upstream server (PostgreSQL, Redis) that holds each direction's bytes for half a
// configured round trip, with optional jitter that never reorders a connection's bytes, and
// that strikes the network faults of a run on command: a further delay for a window, a
// blackhole for a window, and a reset of every connection at once. The machines it runs on
// have no netem, so the delay is made here, in user space, and waited out with
// testkit/internal/timing (Go's timers would turn a 200 µs round trip into 2.5 ms).
//
// One Proxy serves one upstream: a caller points its clients at Addr instead of the server
// (the host:port of a connection string swapped for the proxy's) and Closes the proxy when
// done, which ends every connection and goroutine. It knows nothing of the protocols it
// carries: the round trip a client sees is measured by a round trip of that protocol
// (SELECT 1, PING) through Addr; Stats says what the proxy itself held and delivered.
//
// What it does not model: the TCP handshake (a connection is set up at loopback speed, every
// byte after it is delayed), bandwidth, loss, and the kernel's view of a partition — a client
// reaches the proxy over loopback, whose kernel acknowledges what the client sends, so a
// blackhole is felt by the application (no answer) but not by TCP keepalive or
// TCP_USER_TIMEOUT on the client's socket.
package netdelay

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
)

// MaxRTT is the largest round trip (delay and jitter together, or a Delay's extra) a proxy
// adds: more than any one region's network, and a guard against a unit slip (1s for 1ms).
const MaxRTT = time.Second

// dialTimeout bounds the dial of the upstream for one accepted connection.
const dialTimeout = 10 * time.Second

// Config describes a proxy.
type Config struct {
	// Upstream is the server's host:port.
	Upstream string
	// RTT is the round trip the proxy adds: each direction holds its bytes for RTT/2.
	RTT time.Duration
	// Jitter spreads each chunk's round trip uniformly over RTT ± Jitter (each direction
	// draws its half); a chunk is never delivered before the one read ahead of it, so a
	// connection's bytes keep their order. At most RTT.
	Jitter time.Duration
}

// CheckRTT validates a round trip and its jitter as Config takes them: the check a command
// line runs before anything starts.
func CheckRTT(rtt, jitter time.Duration) error {
	switch {
	case rtt < 0 || jitter < 0:
		return fmt.Errorf("round trip and jitter must not be negative, got %s and %s", rtt, jitter)
	case jitter > rtt:
		return fmt.Errorf("jitter (%s) must not exceed the round trip (%s)", jitter, rtt)
	case rtt+jitter > MaxRTT:
		return fmt.Errorf("round trip %s with jitter %s is above the %s the proxy adds at most", rtt, jitter, MaxRTT)
	}
	return nil
}

// Proxy is a running delaying proxy. Its methods are safe for concurrent use.
type Proxy struct {
	cfg    Config
	ln     net.Listener
	ctx    context.Context // cancelled by Close: ends dials and waits
	cancel context.CancelFunc
	path   atomic.Pointer[path]
	wg     sync.WaitGroup

	mu     sync.Mutex // guards the fields below and the replacement of path
	conns  map[*conn]struct{}
	closed bool
	nextID int

	accepted, dialFailed, resets atomic.Int64
	up, down                     direction
}

// path is what the proxy currently does to a byte: replaced whole by the controls, read
// once per chunk.
type path struct {
	rtt, jitter time.Duration
	// extra is added to the round trip of chunks read before extraUntil (Delay).
	extra      time.Duration
	extraUntil time.Time
	// blackholeUntil: until then nothing is delivered either way (Blackhole).
	blackholeUntil time.Time
}

// oneWay is the hold of a chunk read at now: half its round trip.
func (p *path) oneWay(now time.Time) time.Duration {
	d := p.rtt
	if p.jitter > 0 {
		d += time.Duration(rand.Int64N(2*int64(p.jitter)+1)) - p.jitter
	}
	if now.Before(p.extraUntil) {
		d += p.extra
	}
	return d / 2
}

func (p *path) blackholed(now time.Time) bool { return now.Before(p.blackholeUntil) }

// New listens on 127.0.0.1:0 and proxies every connection it accepts to cfg.Upstream
// (dialled once per accepted connection) until Close.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == "" {
		return nil, errors.New("netdelay: no upstream address")
	}
	if _, _, err := net.SplitHostPort(cfg.Upstream); err != nil {
		return nil, fmt.Errorf("netdelay: upstream %q: %w", cfg.Upstream, err)
	}
	if err := CheckRTT(cfg.RTT, cfg.Jitter); err != nil {
		return nil, fmt.Errorf("netdelay: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netdelay: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, ln: ln, ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{},
		up: newDirection(), down: newDirection()}
	p.path.Store(&path{rtt: cfg.RTT, jitter: cfg.Jitter})
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's host:port, to put in place of the upstream's in a connection string
// ("" on a nil Proxy: no proxy, connect directly).
func (p *Proxy) Addr() string {
	if p == nil {
		return ""
	}
	return p.ln.Addr().String()
}

// Upstream is the server's address the proxy dials.
func (p *Proxy) Upstream() string { return p.cfg.Upstream }

// Delay adds extra to the round trip of every byte read in the next window (the net-delay
// fault), replacing a Delay still in force. Bytes read after the window have the configured
// delay again but wait behind the ones before them: order is kept.
func (p *Proxy) Delay(extra, window time.Duration) error {
	if extra < 0 || window < 0 || extra > MaxRTT {
		return fmt.Errorf("netdelay: a delay of %s for %s: the delay must be 0 to %s and the window not negative", extra, window, MaxRTT)
	}
	p.update(func(np *path) { np.extra, np.extraUntil = extra, time.Now().Add(window) })
	return nil
}

// Blackhole holds every byte in both directions for window (the net-blackhole fault): the
// proxy keeps reading (a client's writes succeed, as into its socket buffer), answers nothing
// and resets nothing. When the window ends, what it held is delivered, in order, half a
// round trip later: as TCP's retransmission would deliver it once the partition heals (at
// once rather than at the next retransmission timeout, which would add up to its backoff).
// A Blackhole still in force is extended, never shortened. New connections are accepted and
// dialled, and hang with the rest.
func (p *Proxy) Blackhole(window time.Duration) error {
	if window < 0 {
		return fmt.Errorf("netdelay: a blackhole of %s: the window must not be negative", window)
	}
	until := time.Now().Add(window)
	p.update(func(np *path) {
		if until.After(np.blackholeUntil) {
			np.blackholeUntil = until
		}
	})
	return nil
}

// SetRTT replaces the configured round trip and jitter (a rung of an RTT ladder): bytes read
// from now on are held for the new one, behind those read before.
func (p *Proxy) SetRTT(rtt, jitter time.Duration) error {
	if err := CheckRTT(rtt, jitter); err != nil {
		return fmt.Errorf("netdelay: %w", err)
	}
	p.update(func(np *path) { np.rtt, np.jitter = rtt, jitter })
	return nil
}

func (p *Proxy) update(change func(*path)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	np := *p.path.Load()
	change(&np)
	p.path.Store(&np)
}

// Reset resets every live connection at once (the net-reset fault): both the client's and
// the server's side get an RST (SO_LINGER 0), and what the proxy held for them is dropped. It
// returns how many connections it reset. The proxy keeps accepting.
func (p *Proxy) Reset() int {
	conns := p.live()
	for _, c := range conns {
		c.close(true)
	}
	p.resets.Add(int64(len(conns)))
	return len(conns)
}

func (p *Proxy) live() []*conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

// Close stops accepting, closes every connection and returns when every goroutine of the
// proxy has ended. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.cancel()
	for _, c := range p.live() {
		c.close(false)
	}
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Stats is what a proxy did so far.
type Stats struct {
	// Accepted counts connections accepted; Live those open now; DialFailed those whose
	// upstream could not be dialled (the client was reset); Reset those Reset reset.
	Accepted, Live, DialFailed, Reset int64
	// Up is client to server, Down server to client.
	Up, Down DirectionStats
}

// DirectionStats is what one direction of every connection carried.
type DirectionStats struct {
	// Bytes and Chunks delivered (a chunk is what one read took).
	Bytes, Chunks int64
	// Hold is, per chunk, the time from its arrival (the kernel's receive time) to the end of
	// the write that delivered it: the one-way delay the proxy added, its own cost included.
	// Hold of Up plus Hold of Down is the round trip it adds.
	Hold *hist.Histogram
	// Late is, per chunk that had a delay to keep, how long after its due time it was
	// delivered: the proxy's own error.
	Late *hist.Histogram
}

// Stats returns the counters and histograms so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	live := int64(len(p.conns))
	p.mu.Unlock()
	return Stats{Accepted: p.accepted.Load(), Live: live, DialFailed: p.dialFailed.Load(),
		Reset: p.resets.Load(), Up: p.up.stats(), Down: p.down.stats()}
}

// direction holds the counters of one direction over every connection.
type direction struct {
	bytes, chunks atomic.Int64
	hold, late    *hist.Sharded
}

// statShards spreads the connections' histogram records over this many locks.
const statShards = 16

func newDirection() direction {
	return direction{hold: hist.NewSharded(statShards), late: hist.NewSharded(statShards)}
}

func (d *direction) stats() DirectionStats {
	return DirectionStats{Bytes: d.bytes.Load(), Chunks: d.chunks.Load(), Hold: d.hold.Merged(), Late: d.late.Merged()}
}

// accept serves connections until the listener is closed.
func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept failure (out of descriptors): wait a little, as net/http does.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		p.accepted.Add(1)
		p.wg.Go(func() { p.connect(c.(*net.TCPConn)) })
	}
}

// connect dials the upstream for an accepted client and starts carrying bytes both ways.
func (p *Proxy) connect(client *net.TCPConn) {
	d := net.Dialer{Timeout: dialTimeout}
	sc, err := d.DialContext(p.ctx, "tcp", p.cfg.Upstream)
	if err != nil {
		p.dialFailed.Add(1)
		reset(client)
		return
	}
	server := sc.(*net.TCPConn)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	c := newConn(p, p.nextID, client, server)
	p.nextID++
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	c.start()
}

func (p *Proxy) forget(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// reset closes a connection with an RST rather than a FIN.
func reset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}
