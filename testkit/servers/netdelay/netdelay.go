// Package netdelay owns the kit's in-process network: a delay line between the kit's clients
// and one upstream server (PostgreSQL, Redis) that holds each direction's bytes for half a
// configured round trip, with optional jitter that never reorders a connection's bytes, and
// that strikes the network faults of a run on command: a further delay for a window, a
// blackhole for a window, and a reset of every connection at once. The machines it runs on
// have no netem, so the delay is made here, in user space, and waited out with
// testkit/internal/measure/timing (Go's timers would turn a 200 µs round trip into 2.5 ms).
//
// One Proxy serves one upstream. Clients reach it through DialContext (pgx's DialFunc,
// go-redis's Dialer): each connection is the real socket to the server, wrapped, so the delay
// is applied where the client reads and writes and there is no second hop — at zero delay a
// connection is the plain socket plus a clock reading per call. Close the Proxy when done:
// it ends every connection and goroutine. It knows nothing of the protocols it carries: the
// round trip a client sees is measured by a round trip of that protocol (SELECT 1, PING)
// over a connection it dialled; Stats says what it held and delivered.
//
// What it does not model: the TCP handshake (a connection is set up at loopback speed, every
// byte after it is delayed), bandwidth, loss, and the kernel's view of a partition — the
// socket under a connection is a live loopback one whose kernel acknowledges what is sent,
// so a blackhole is felt by the application (no answer) but not by TCP keepalive or
// TCP_USER_TIMEOUT.
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

// Proxy is a delay line to one upstream. Its methods are safe for concurrent use.
type Proxy struct {
	cfg    Config
	ctx    context.Context // cancelled by Close: ends dials and waits
	cancel context.CancelFunc
	path   atomic.Pointer[path]
	wg     sync.WaitGroup // the connections' writers

	mu     sync.Mutex // guards the fields below and the replacement of path
	conns  map[*conn]struct{}
	closed bool
	heal   context.CancelFunc // ends path.healed: Heal
	nextID int

	dialed, dialFailed, resets atomic.Int64
	up, down                   direction
}

// path is what the proxy currently does to a byte: replaced whole by the controls, read
// once per chunk.
type path struct {
	rtt, jitter time.Duration
	// extra is added to the round trip of chunks read before extraUntil (Delay).
	extra      time.Duration
	extraUntil time.Time
	// blackholeUntil: until then nothing is delivered either way (Blackhole); healed ends
	// when Heal ends the blackhole early (the waits on it wake and look again).
	blackholeUntil time.Time
	healed         context.Context
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

// New returns a Proxy to cfg.Upstream: its DialContext dials the upstream and delays what
// the connection carries, until Close.
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
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{},
		up: newDirection(), down: newDirection()}
	p.path.Store(&path{rtt: cfg.RTT, jitter: cfg.Jitter})
	return p, nil
}

// DialContext opens a connection to the upstream whose bytes the proxy delays: the dial
// function of a client (pgx's ConnConfig.DialFunc, go-redis's Options.Dialer). network and
// addr are the client's view of the server and are not used: the proxy dials its upstream
// over TCP.
func (p *Proxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", p.cfg.Upstream)
	if err != nil {
		p.dialFailed.Add(1)
		return nil, err
	}
	tc := nc.(*net.TCPConn)
	rx, err := newRxReader(tc)
	if err != nil {
		tc.Close()
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		tc.Close()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: tc.RemoteAddr(), Err: net.ErrClosed}
	}
	c := newConn(p, p.nextID, tc, rx)
	p.nextID++
	p.conns[c] = struct{}{}
	p.dialed.Add(1)
	return c, nil
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
		if np.healed == nil {
			np.healed, p.heal = context.WithCancel(p.ctx)
		}
	})
	return nil
}

// Heal ends at once the faults in force: a Blackhole (what it held is delivered, in order,
// half a round trip later) and a Delay's window (bytes read from now on have the configured
// round trip; those read before keep theirs, a second at most). A run's network faults end
// with the run, so that closing its connections (pgx's cancel requests, which dial through
// the proxy, among them) does not wait out a blackhole.
func (p *Proxy) Heal() {
	var wake context.CancelFunc
	p.update(func(np *path) {
		np.blackholeUntil, np.extraUntil, np.healed = time.Time{}, time.Time{}, nil
		wake, p.heal = p.heal, nil
	})
	if wake != nil { // after the healed path is in place: the waits that wake see it
		wake()
	}
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

// Reset resets every live connection at once (the net-reset fault): the server gets an RST
// (SO_LINGER 0), the client's reads and writes fail with ECONNRESET, and what the proxy held
// for them is dropped. It returns how many connections it reset. The proxy keeps dialling.
func (p *Proxy) Reset() int {
	conns := p.live()
	for _, c := range conns {
		c.end(true)
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

// Close stops dialling, closes every connection (what is held is dropped) and returns when
// every goroutine of the proxy has ended. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	for _, c := range p.live() {
		c.end(false)
	}
	p.wg.Wait()
	return nil
}

// Stats is what a proxy did so far.
type Stats struct {
	// Dialed counts connections opened; Live those open now; DialFailed dials of the
	// upstream that failed; Reset those Reset reset.
	Dialed, Live, DialFailed, Reset int64
	// Up is client to server, Down server to client.
	Up, Down DirectionStats
}

// DirectionStats is what one direction of every connection carried.
type DirectionStats struct {
	// Bytes and Chunks delivered (a chunk is what one Read returned, or one Write handed over).
	Bytes, Chunks int64
	// Hold is, per chunk, the time from its arrival (the kernel's receive time of the
	// server's bytes, the Write of the client's) to its delivery (Read's return, the end of
	// the socket write): the one-way delay the proxy added, its own cost included. Hold of Up
	// plus Hold of Down is the round trip it adds.
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
	return Stats{Dialed: p.dialed.Load(), Live: live, DialFailed: p.dialFailed.Load(),
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

// record counts n bytes delivered at done that arrived at at and were due at due.
func (d *direction) record(id, n int, done, at, due time.Time) {
	d.bytes.Add(int64(n))
	d.chunks.Add(1)
	d.hold.Record(id, done.Sub(at))
	if due.After(at) {
		d.late.Record(id, done.Sub(due))
	}
}

func (d *direction) stats() DirectionStats {
	return DirectionStats{Bytes: d.bytes.Load(), Chunks: d.chunks.Load(), Hold: d.hold.Merged(), Late: d.late.Merged()}
}

func (p *Proxy) forget(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}
