package netdelay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, testdb.Main)) }

// startProxy starts a proxy closed when the test ends.
func startProxy(t testing.TB, cfg Config) *Proxy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("closing the proxy: %v", err)
		}
	})
	return p
}

// checkNoProxyLeft makes the test fail if, once its proxies are closed, a goroutine of one is
// still running. Call it first: its cleanup then runs last.
func checkNoProxyLeft(t testing.TB) {
	t.Cleanup(func() { waitGoroutines(t) })
}

// pgPool opens a pool on the test server through p (nil: direct), its dial function in the
// parsed configuration, as the engine does.
func pgPool(t testing.TB, p *Proxy, conns int32, tune ...func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testdb.Server(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		cfg.ConnConfig.DialFunc = p.DialContext
	}
	cfg.MaxConns, cfg.MinConns = conns, 0
	// No liveness ping on acquire: a test sees what a reset did to a pooled connection.
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	for _, f := range tune {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func pgUpstream(t testing.TB) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testdb.Server(t).Port()))
}

func redisClient(t testing.TB, srv *redisserver.Server, p *Proxy) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		opts.Dialer = p.DialContext
	}
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// dial opens a connection through p, closed when the test ends.
func dial(t testing.TB, p *Proxy) net.Conn {
	t.Helper()
	c, err := p.DialContext(context.Background(), "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echoServer accepts connections and echoes what each sends until it closes; it is closed
// when the test ends.
func echoServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// waitGoroutines fails the test when goroutines of the proxy (its connections' writers) are
// still running after Close.
func waitGoroutines(t testing.TB) {
	t.Helper()
	var left []string
	for range 300 {
		if left = proxyGoroutines(); len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines of the proxy left over:\n%s", len(left), strings.Join(left, "\n\n"))
}

func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		for _, fn := range []string{"netdelay.(*Proxy).", "netdelay.(*conn)."} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no upstream"},
		{Config{Upstream: "localhost"}, "missing port"},
		{Config{Upstream: "127.0.0.1:1", RTT: -time.Millisecond}, "must not be negative"},
		{Config{Upstream: "127.0.0.1:1", RTT: time.Millisecond, Jitter: 2 * time.Millisecond}, "must not exceed"},
		{Config{Upstream: "127.0.0.1:1", RTT: 2 * time.Second}, "at most"},
	} {
		p, err := New(tc.cfg)
		if err == nil {
			p.Close()
			t.Errorf("%+v: no error", tc.cfg)
			continue
		}
		if !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%+v: %v, want it to say %q", tc.cfg, err, tc.want)
		}
	}
}

func TestControlErrors(t *testing.T) {
	checkNoProxyLeft(t)
	p := startProxy(t, Config{Upstream: echoServer(t)})
	for name, err := range map[string]error{
		"negative delay":  p.Delay(-time.Millisecond, time.Second),
		"delay above cap": p.Delay(2*MaxRTT, time.Second),
		"negative window": p.Delay(time.Millisecond, -time.Second),
		"negative hole":   p.Blackhole(-time.Second),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestJitterKeepsOrder sends numbered lines through a jittered proxy to an echo server, as
// fast as they go and from several connections at once: every byte comes back, in order.
func TestJitterKeepsOrder(t *testing.T) {
	checkNoProxyLeft(t)
	p := startProxy(t, Config{Upstream: echoServer(t), RTT: 2 * time.Millisecond, Jitter: 2 * time.Millisecond})
	var wg sync.WaitGroup
	for c := range 8 {
		conn := dial(t, p)
		wg.Go(func() {
			var lines [][]byte
			var sent bytes.Buffer
			for i := range 2000 {
				lines = append(lines, fmt.Appendf(nil, "conn %d line %d\n", c, i))
				sent.Write(lines[i])
			}
			got := make(chan []byte, 1)
			go func() {
				b := make([]byte, sent.Len())
				n, _ := io.ReadFull(conn, b)
				got <- b[:n]
			}()
			for _, line := range lines {
				if _, err := conn.Write(line); err != nil {
					t.Error(err)
					return
				}
			}
			if b := <-got; !bytes.Equal(b, sent.Bytes()) {
				t.Errorf("conn %d: %d bytes back of %d, or out of order", c, len(b), sent.Len())
			}
		})
	}
	wg.Wait()
	st := p.Stats()
	if st.Dialed != 8 || st.Up.Bytes != st.Down.Bytes || st.Up.Bytes == 0 {
		t.Errorf("stats: %+v", st)
	}
}

// TestCarryingAllocatesNothing: once a connection is up, a round trip through the proxy,
// delayed or not, allocates nothing (the echo server and this client allocate nothing either),
// under the race detector too: a delayed write reuses its connection's own buffers.
func TestCarryingAllocatesNothing(t *testing.T) {
	checkNoProxyLeft(t)
	echo := echoServer(t)
	for _, rtt := range []time.Duration{0, 200 * time.Microsecond} {
		p := startProxy(t, Config{Upstream: echo, RTT: rtt})
		c := dial(t, p)
		b := []byte{'x'}
		trip := func() {
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, b); err != nil {
				t.Fatal(err)
			}
		}
		for range 10 {
			trip()
		}
		// A buffer a trip would be hundreds; the runtime's own odd allocation is let be.
		if n := mallocs(1000, trip); n > 10 {
			t.Errorf("RTT %s: 1,000 round trips allocated %d times", rtt, n)
		}
	}
}

// mallocs counts the heap allocations of n calls of f, as testing.AllocsPerRun measures them
// (one P), but in all: AllocsPerRun's average rounds down, so a buffer allocated every other
// call (as when the race detector empties a sync.Pool) would read as none.
func mallocs(n int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestDelayNeverEarly: through a proxy of round trip D (jitter J) no SELECT 1 or PING comes
// back sooner than D−J, and a Delay adds its extra for its window only.
func TestDelayNeverEarly(t *testing.T) {
	checkNoProxyLeft(t)
	const rtt, jitter = 3 * time.Millisecond, time.Millisecond
	ctx := context.Background()
	pgp := startProxy(t, Config{Upstream: pgUpstream(t), RTT: rtt, Jitter: jitter})
	pool := pgPool(t, pgp, 2)
	srv := redistest.Shared(t)
	rp := startProxy(t, Config{Upstream: srv.Addr(), RTT: rtt, Jitter: jitter})
	rdb := redisClient(t, srv, rp)
	trips := map[string]func() error{
		"SELECT 1": func() error { _, err := pool.Exec(ctx, "SELECT 1"); return err },
		"PING":     func() error { return rdb.Ping(ctx).Err() },
	}
	for name, trip := range trips {
		if err := trip(); err != nil { // connect first: the handshake is not what is measured
			t.Fatal(err)
		}
		for range 20 {
			start := time.Now()
			if err := trip(); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < rtt-jitter {
				t.Fatalf("%s took %s through a proxy of %s ± %s", name, took, rtt, jitter)
			}
		}
	}
	if err := pgp.Delay(50*time.Millisecond, time.Hour); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := trips["SELECT 1"](); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < rtt-jitter+50*time.Millisecond {
		t.Fatalf("SELECT 1 took %s with 50ms added", took)
	}
	if err := pgp.Delay(50*time.Millisecond, 0); err != nil { // the window over
		t.Fatal(err)
	}
	if st := pgp.Stats(); st.Up.Late.Count() == 0 || st.Down.Hold.ValueAtQuantile(50) < (rtt-jitter)/2 {
		t.Errorf("stats: %d late records, down hold p50 %s", st.Up.Late.Count(), st.Down.Hold.ValueAtQuantile(50))
	}
}

// TestBlackholeHoldsThenDelivers: during a blackhole a request gets no answer and the
// connection is not reset; after it, the request is answered (delivered late, not lost),
// on PostgreSQL and on Redis.
func TestBlackholeHoldsThenDelivers(t *testing.T) {
	checkNoProxyLeft(t)
	const window = 700 * time.Millisecond
	ctx := context.Background()
	pgp := startProxy(t, Config{Upstream: pgUpstream(t)})
	pool := pgPool(t, pgp, 1)
	srv := redistest.Shared(t)
	rp := startProxy(t, Config{Upstream: srv.Addr(), RTT: 200 * time.Microsecond})
	rdb := redisClient(t, srv, rp)
	for name, tc := range map[string]struct {
		p    *Proxy
		trip func() (string, error)
	}{
		"postgres": {pgp, func() (string, error) {
			var s string
			err := pool.QueryRow(ctx, "SELECT 'answered'").Scan(&s)
			return s, err
		}},
		"redis": {p: rp, trip: func() (string, error) { return rdb.Echo(ctx, "answered").Result() }},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := tc.trip(); err != nil { // a connection in place before the fault
				t.Fatal(err)
			}
			if err := tc.p.Blackhole(window); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			answer := make(chan error, 1)
			go func() {
				s, err := tc.trip()
				if err == nil && s != "answered" {
					err = fmt.Errorf("answer %q", s)
				}
				answer <- err
			}()
			select {
			case err := <-answer:
				t.Fatalf("answered after %s of a %s blackhole: %v", time.Since(start), window, err)
			case <-time.After(window / 3):
			}
			if err := <-answer; err != nil {
				t.Fatalf("after the blackhole: %v", err)
			}
			if took := time.Since(start); took < window*9/10 {
				t.Fatalf("answered after %s of a %s blackhole", took, window)
			}
			if st := tc.p.Stats(); st.Reset != 0 || st.Live == 0 {
				t.Errorf("stats after a blackhole: %+v", st)
			}
		})
	}
}

// TestHealEndsTheFaultsAtOnce: Heal ends an hour's blackhole (what it held is delivered, in
// order) and an hour's extra delay, and a pool whose query a blackhole cut off closes at once
// after it: pgx closes a connection whose query's context ended by dialling a cancel request
// and waiting up to 15 s for it, through the proxy (the fault injector heals the run's paths
// before its pools close).
func TestHealEndsTheFaultsAtOnce(t *testing.T) {
	checkNoProxyLeft(t)
	p := startProxy(t, Config{Upstream: echoServer(t), RTT: time.Millisecond})
	c := dial(t, p)
	trip := func(msg string) (string, time.Duration, error) {
		start := time.Now()
		if _, err := c.Write([]byte(msg)); err != nil {
			return "", 0, err
		}
		b := make([]byte, len(msg))
		_, err := io.ReadFull(c, b)
		return string(b), time.Since(start), err
	}
	if err := p.Blackhole(time.Hour); err != nil {
		t.Fatal(err)
	}
	answer := make(chan error, 1)
	go func() {
		got, _, err := trip("held")
		if err == nil && got != "held" {
			err = fmt.Errorf("answer %q", got)
		}
		answer <- err
	}()
	select {
	case err := <-answer:
		t.Fatalf("answered during the blackhole: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	p.Heal()
	select {
	case err := <-answer:
		if err != nil {
			t.Fatalf("after Heal: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer 10 s after Heal ended an hour's blackhole")
	}
	if err := p.Delay(MaxRTT, time.Hour); err != nil {
		t.Fatal(err)
	}
	p.Heal()
	if got, took, err := trip("quick"); err != nil || got != "quick" || took >= MaxRTT {
		t.Errorf("after Heal ended a delay of %s: %q in %s, %v", MaxRTT, got, took, err)
	}

	pgp := startProxy(t, Config{Upstream: pgUpstream(t)})
	pool := pgPool(t, pgp, 1)
	if err := pool.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := pgp.Blackhole(time.Hour); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := pool.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a query answered during the blackhole")
	}
	pgp.Heal()
	start := time.Now()
	pool.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the pool took %s to close after Heal (pgx waits up to 15 s for a cancel request)", took)
	}
}

// TestResetClosesEveryConnection: Reset sends an RST on every live connection (the client
// reads ECONNRESET, pooled PostgreSQL and Redis connections fail their next use), and new
// connections work after it.
func TestResetClosesEveryConnection(t *testing.T) {
	checkNoProxyLeft(t)
	ctx := context.Background()
	p := startProxy(t, Config{Upstream: echoServer(t), RTT: time.Millisecond})
	var raw []net.Conn
	for range 5 {
		c := dial(t, p)
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, c)
	}
	if n := p.Reset(); n != 5 {
		t.Fatalf("Reset reset %d connections, want 5", n)
	}
	for i, c := range raw {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("connection %d after Reset: read %v, want ECONNRESET", i, err)
		}
	}
	if st := p.Stats(); st.Live != 0 || st.Reset != 5 {
		t.Errorf("stats after Reset: %+v", st)
	}

	pgp := startProxy(t, Config{Upstream: pgUpstream(t)})
	pool := pgPool(t, pgp, 4)
	var wg sync.WaitGroup
	for range 4 { // four connections in the pool
		wg.Go(func() {
			if _, err := pool.Exec(ctx, "SELECT pg_sleep(0.05)"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	srv := redistest.Shared(t)
	rp := startProxy(t, Config{Upstream: srv.Addr()})
	rdb := redisClient(t, srv, rp)
	idBefore, err := rdb.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := pgp.Reset(); n != 4 {
		t.Errorf("PostgreSQL: Reset reset %d connections, want 4", n)
	}
	if n := rp.Reset(); n != 1 {
		t.Errorf("Redis: Reset reset %d connections, want 1", n)
	}
	for range 4 {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
			t.Error("a pooled connection worked after Reset")
		}
		conn.Release()
	}
	// Dead connections are dropped (go-redis notices the reset when it takes the connection
	// from its pool and dials anew); new ones go through the proxy as before.
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("PostgreSQL after Reset: %v", err)
	}
	idAfter, err := rdb.ClientID(ctx).Result()
	if err != nil {
		t.Errorf("Redis after Reset: %v", err)
	}
	if idAfter == idBefore || rp.Stats().Dialed != 2 {
		t.Errorf("Redis after Reset: client id %d (was %d), %d connections dialled; want a new one", idAfter, idBefore, rp.Stats().Dialed)
	}
}

// TestCloseEndsEverything: Close with connections open and bytes held (a blackhole) ends
// every connection and goroutine (startProxy's cleanup counts them).
func TestCloseEndsEverything(t *testing.T) {
	p, err := New(Config{Upstream: echoServer(t), RTT: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 10 {
		conns = append(conns, dial(t, p))
	}
	p.Blackhole(time.Hour)
	for _, c := range conns {
		if _, err := c.Write([]byte("held")); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 8)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection %d after Close: read %d bytes, %v", i, n, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if c, err := p.DialContext(context.Background(), "tcp", ""); err == nil {
		c.Close()
		t.Error("the proxy still dials after Close")
	}
	waitGoroutines(t)
}

// TestUnreachableUpstreamFailsTheDial: a dial through a proxy whose server is gone fails as
// a direct one would (refused), and is counted.
func TestUnreachableUpstreamFailsTheDial(t *testing.T) {
	checkNoProxyLeft(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	p := startProxy(t, Config{Upstream: gone})
	c, err := p.DialContext(context.Background(), "tcp", "")
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("got %v, want ECONNREFUSED", err)
	}
	if st := p.Stats(); st.DialFailed != 1 || st.Live != 0 {
		t.Errorf("stats: %+v", st)
	}
}

// TestDeadlinesEndHeldWaits: a read deadline ends a Read that holds the server's bytes (a
// timeout, as a socket's), and the bytes are still there for the next Read, on time; a
// Write returns at once whatever the delay; pgx's context ends a query that a blackhole
// holds within its timeout, not at the end of the window.
func TestDeadlinesEndHeldWaits(t *testing.T) {
	checkNoProxyLeft(t)
	const rtt = 400 * time.Millisecond
	p := startProxy(t, Config{Upstream: echoServer(t), RTT: rtt})
	c := dial(t, p)
	start := time.Now()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > rtt/4 {
		t.Errorf("a Write took %s: it should hand its bytes over and return", took)
	}
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	b := make([]byte, 1)
	if _, err := c.Read(b); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a Read past its deadline: %v, want a timeout", err)
	}
	if took := time.Since(start); took > rtt*3/4 {
		t.Errorf("the deadline ended the Read after %s", took)
	}
	_ = c.SetReadDeadline(time.Time{})
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 'x' {
		t.Fatalf("the Read after: %q, %v", b, err)
	}
	if took := time.Since(start); took < rtt {
		t.Errorf("the echo came back after %s through a round trip of %s", took, rtt)
	}

	pgp := startProxy(t, Config{Upstream: pgUpstream(t)})
	pool := pgPool(t, pgp, 1)
	if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if err := pgp.Blackhole(time.Hour); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := pool.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a query answered in a blackhole")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a query with a 200ms timeout hung %s in a blackhole", took)
	}
}

// TestCloseDeliversWhatIsHeld: bytes a connection holds when the client closes it still
// reach the server, then the end of the stream, as from a socket's buffer.
func TestCloseDeliversWhatIsHeld(t *testing.T) {
	checkNoProxyLeft(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer s.Close()
		b, _ := io.ReadAll(s)
		got <- b
	}()
	p := startProxy(t, Config{Upstream: ln.Addr().String(), RTT: 100 * time.Millisecond})
	c, err := p.DialContext(context.Background(), "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"held ", "then ", "closed"} {
		if _, err := c.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a Write after Close: %v", err)
	}
	select {
	case b := <-got:
		if string(b) != "held then closed" {
			t.Errorf("the server got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server got no end of stream")
	}
}
