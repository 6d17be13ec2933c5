package database

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// socketPair is a TCP connection on loopback: the client end read and written by raw system
// calls (newRawSocket), and the server's end as it is.
func socketPair(t *testing.T) (client net.Conn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	client = newRawSocket(c)
	if _, ok := client.(*rawSocket); !ok {
		t.Fatalf("a TCP connection is not read raw: %T", client)
	}
	t.Cleanup(func() { client.Close(); s.Close() })
	return client, s
}

// TestRawSocketCarriesTheBytes: what goes in one end comes out of the other, both ways, also
// when a write is far larger than the socket's buffers (it waits for the peer to read, as a
// net.Conn's does) and when several goroutines write at once (each write whole).
func TestRawSocketCarriesTheBytes(t *testing.T) {
	client, server := socketPair(t)

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	go func() {
		if n, err := client.Write(big); err != nil || n != len(big) {
			t.Errorf("write: %d of %d bytes, %v", n, len(big), err)
		}
	}()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the large write came out changed")
	}

	if _, err := server.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := io.ReadAtLeast(client, buf, 5); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}

	const writers, each = 8, 64 << 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			if _, err := client.Write(bytes.Repeat([]byte{byte('a' + w)}, each)); err != nil {
				t.Error(err)
			}
		})
	}
	all := make([]byte, writers*each)
	if _, err := io.ReadFull(server, all); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for k := 0; k < len(all); k += each { // each write arrived whole: one byte value a block
		if block := all[k : k+each]; !bytes.Equal(block, bytes.Repeat(block[:1], each)) {
			t.Fatalf("writes interleaved at byte %d", k)
		}
	}
}

// TestRawSocketErrorsAsNetConn: the end of the stream is io.EOF; a read waiting past its
// deadline (how pgx ends a statement whose context was cancelled) returns a timeout, and one
// on a closed connection net.ErrClosed, each a *net.OpError as net.Conn's are.
func TestRawSocketErrorsAsNetConn(t *testing.T) {
	client, server := socketPair(t)

	waiting := make(chan error, 1)
	go func() {
		_, err := client.Read(make([]byte, 8))
		waiting <- err
	}()
	time.Sleep(20 * time.Millisecond) // parked on the poller
	if err := client.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	err := <-waiting
	var ne net.Error
	var oe *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() || !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("a read past its deadline: %v (%T)", err, err)
	}
	if _, err := client.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read after the deadline passed: %v", err)
	}
	if err := client.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	server.Close()
	if n, err := client.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("a read at the end of the stream: %d, %v", n, err)
	}
	client.Close()
	if _, err := client.Write([]byte("x")); !errors.Is(err, net.ErrClosed) || !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("a write on a closed connection: %v", err)
	}
	if _, err := client.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a read on a closed connection: %v", err)
	}
}

// TestRawSocketOnlyPlainSockets: a connection that reads and writes through code of its own (a
// route's proxy, TLS) is left as it is: raw system calls on its socket would bypass that code.
func TestRawSocketOnlyPlainSockets(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := newRawSocket(a); got != a {
		t.Fatalf("a pipe became %T", got)
	}
	type wrapped struct{ net.Conn }
	client, _ := socketPair(t)
	w := wrapped{client.(*rawSocket).Conn}
	if got := newRawSocket(w); got != net.Conn(w) {
		t.Fatalf("a wrapped TCP connection became %T", got)
	}
}
