package database

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5"
)

// sockets are the live TCP (or Unix) sockets of the connections the target opened for the
// service, so that a run whose server stopped answering can cut them (CutSockets): pgx's close
// of a connection waits for its goodbye to be written, which a peer that never reads holds for
// pgxpool's 15 s per connection.
type sockets struct {
	mu   sync.Mutex
	live map[*trackedConn]struct{}
	// cut: new dials fail (pgx dials a cancel request for every connection it closes after a
	// failed query, and would wait 15 s for each on the peer that does not answer).
	cut bool
}

type trackedConn struct {
	net.Conn
	s    *sockets
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.live, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

// dial wraps base (a config's DialFunc) so that what it opens is tracked.
func (s *sockets) dial(base DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		s.mu.Lock()
		cut := s.cut
		s.mu.Unlock()
		if cut {
			return nil, errCut
		}
		conn, err := base(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: conn, s: s}
		s.mu.Lock()
		if s.live == nil {
			s.live = make(map[*trackedConn]struct{})
		}
		s.live[tc] = struct{}{}
		s.mu.Unlock()
		if sc, ok := conn.(syscall.Conn); ok {
			return &trackedSysConn{tc, sc}, nil
		}
		return tc, nil
	}
}

// trackedSysConn is a trackedConn over a socket that offers its file descriptor, and hands it
// on: go-sql-driver/mysql peeks at an idle connection's socket before reusing it (a lost
// connection is then replaced, not failed), where it can.
type trackedSysConn struct {
	*trackedConn
	sc syscall.Conn
}

func (c *trackedSysConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }

// errCut is a dial after CutSockets.
var errCut = errors.New("the kit cut the connections to this server: it did not answer")

// cutAll closes every live socket, refuses new dials until restore, and returns how many it
// closed.
func (s *sockets) cutAll() int {
	s.mu.Lock()
	s.cut = true
	live := make([]*trackedConn, 0, len(s.live))
	for c := range s.live {
		live = append(live, c)
	}
	s.mu.Unlock()
	for _, c := range live {
		_ = c.Close()
	}
	return len(live)
}

// CutSockets closes, at the socket, every connection the target opened for the service or for
// its observers (pools, Connect, ConnectDirect; not the admin connection), as a load balancer
// that drops the flows would: what was waiting on them fails at once, and closing them no
// longer waits for a peer that does not answer. Until RestoreSockets, new connections of
// those kinds fail at once too. It returns how many it cut.
func (t *Postgres) CutSockets() int { return t.sockets.cutAll() }

// RestoreSockets lets connections be opened again after CutSockets.
func (t *Postgres) RestoreSockets() { t.sockets.restore() }

// restore lets new dials through again (RestoreSockets).
func (s *sockets) restore() {
	s.mu.Lock()
	s.cut = false
	s.mu.Unlock()
}

// routeConfig points cfg's connections at dial and keeps the fallbacks that reach the same
// server, so that sslmode=prefer (TLS, then plain text) and allow work through a route as
// they do directly; the route carries bytes, TLS is still the client's and the server's.
func routeConfig(cfg *pgx.ConnConfig, dial DialFunc) {
	cfg.DialFunc = dial
	kept := cfg.Fallbacks[:0]
	for _, fb := range cfg.Fallbacks {
		if fb.Host == cfg.Host && fb.Port == cfg.Port {
			kept = append(kept, fb)
		}
	}
	cfg.Fallbacks = kept
}
