package netdelay

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Listen serves the proxy on a loopback TCP port for a client in another process (a pooler's
// hop to its server, which cannot take a dial function): each connection accepted is carried,
// both ways, over a connection of DialContext's, so it has the proxy's round trip and faults.
// It returns the address to connect to; the listener and every connection it accepted end
// with Close. The copy is one more loopback hop, in this process: the round trip it adds is
// not delayed, and the probes, which dial the proxy directly, do not see it.
func (p *Proxy) Listen() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return "", net.ErrClosed
	}
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		<-p.ctx.Done()
		ln.Close()
	}()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.carry(in)
			}()
		}
	}()
	return ln.Addr().String(), nil
}

// carry copies in both ways over a connection of the proxy's until either side ends (or the
// proxy closes).
func (p *Proxy) carry(in net.Conn) {
	defer in.Close()
	out, err := p.DialContext(p.ctx, "tcp", p.cfg.Upstream)
	if err != nil {
		return
	}
	defer out.Close()
	stop := make(chan struct{})
	var once sync.Once
	end := func() { once.Do(func() { close(stop) }) }
	go func() { _, _ = io.Copy(out, in); end() }()
	go func() { _, _ = io.Copy(in, out); end() }()
	select {
	case <-stop:
	case <-p.ctx.Done():
	}
	in.Close()
	out.Close()
}
