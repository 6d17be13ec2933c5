// Package redisserver owns the temporary redis-server a run starts with --redis managed:
// finding the binary, starting a private server on a free loopback port with a random
// password in a temporary directory, persistence off unless asked for, and making sure that
// after Stop (or StopAll, from a signal or panic path) — and even after this process was
// SIGKILLed, through a watchdog — no redis-server process and no directory is left. It knows
// nothing about streams, queues or suites.
//
// The server runs in its own session, so a terminal's Ctrl-C reaches us and not the server;
// we stop it in order. Its configuration (password included) is a file in the temporary
// directory, never a command-line argument that ps would show.
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/testkit/internal/serverproc"
)

// BinaryEnv names an environment variable that overrides the redis-server looked up in PATH.
const BinaryEnv = "HOTSPOTKIT_REDIS_SERVER"

// Config describes the server to start. The zero value is usable.
type Config struct {
	// Binary is the redis-server to run (default: $HOTSPOTKIT_REDIS_SERVER, else PATH).
	Binary string
	// Persist is the append-only file's setting: PersistOff (the default, "": no file, like
	// RDB snapshots, which are always off), PersistEverysec or PersistAlways (its appendfsync).
	Persist string
	// TempDir is where the working directory is created (default os.TempDir()).
	TempDir string
	// StartTimeout bounds each start (default 10s).
	StartTimeout time.Duration
}

// Server is a running temporary redis-server.
type Server struct {
	cfg      Config
	bin      string
	dir      string
	port     int
	password string
	version  string

	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has been reaped
	watchdog *serverproc.Watchdog

	node *nodeOptions // set for a node of a Cluster
	// busPort is a cluster node's cluster bus port (cluster-port).
	busPort int

	mu      sync.Mutex
	stopped bool
}

const startAttempts = 3

// The append-only file settings (Config.Persist).
const (
	PersistOff      = "off"
	PersistEverysec = "everysec"
	PersistAlways   = "always"
)

// PersistSettings are the values Config.Persist takes.
var PersistSettings = []string{PersistOff, PersistEverysec, PersistAlways}

// live holds the servers StopAll stops.
var live serverproc.Registry[*Server]

// FindBinary returns the redis-server to run: explicit, else $HOTSPOTKIT_REDIS_SERVER, else
// the one in PATH.
func FindBinary(explicit string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(BinaryEnv)
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("redis-server %s: %w", explicit, err)
		}
		return explicit, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("redis-server is not installed (Debian: apt-get install redis-server), or set $" + BinaryEnv + "; --redis embedded needs nothing")
	}
	return p, nil
}

// Start starts a server and waits until it answers PING. On any error nothing is left
// running or on disk.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	bin, err := FindBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	return start(ctx, bin, cfg, nil)
}

// nodeOptions make a server a node of a Cluster.
type nodeOptions struct {
	password    string // shared by every node, also their masterauth
	nodeTimeout time.Duration
	host        string // bind and announce this address ("": loopback)
}

// start starts bin as Start says; with node, as a cluster node.
func start(ctx context.Context, bin string, cfg Config, node *nodeOptions) (*Server, error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	parent := cfg.TempDir
	if parent == "" {
		parent = os.TempDir()
	}
	prefix, password := "hotspotkit-redis-", serverproc.RandomHex(16)
	if node != nil {
		prefix, password = "hotspotkit-redis-node-", node.password
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("creating the redis-server working directory: %w", err)
	}
	s := &Server{cfg: cfg, bin: bin, dir: dir, password: password, node: node}
	live.Add(s)
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			lastErr = err
			break
		}
		lastErr = s.startOnce(ctx)
		if lastErr == nil {
			break
		}
		s.kill()
		if !strings.Contains(lastErr.Error(), "Address already in use") {
			break
		}
	}
	if lastErr == nil {
		lastErr = s.startWatchdog()
	}
	if lastErr != nil {
		return nil, errors.Join(lastErr, s.Stop())
	}
	return s, nil
}

func (s *Server) startOnce(ctx context.Context) error {
	port, err := serverproc.FreePort()
	if err != nil {
		return err
	}
	s.port = port
	if s.node != nil {
		if s.busPort, err = serverproc.FreePort(); err != nil {
			return err
		}
	}
	return s.launch(ctx)
}

// launch starts redis-server on s.port with s.dir and waits until it answers.
func (s *Server) launch(ctx context.Context) error {
	port := s.port
	conf := filepath.Join(s.dir, "redis.conf")
	appendonly, fsync := "yes", s.cfg.Persist
	if !s.Persistent() {
		appendonly, fsync = "no", PersistEverysec
	}
	body := strings.Join([]string{
		"# Generated by hotspotkit (testkit/redisserver); removed when the server stops.",
		"port " + strconv.Itoa(port),
		"bind " + s.host(),
		"protected-mode yes",
		"requirepass " + s.password,
		"dir " + quoteConf(s.dir),
		"logfile " + quoteConf(filepath.Join(s.dir, "redis.log")),
		"daemonize no",
		`save ""`,
		"appendonly " + appendonly,
		"appendfsync " + fsync,
	}, "\n") + "\n" + s.clusterConf()
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(s.bin, conf)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	s.cmd = cmd
	s.exited = make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.exited)
	return s.waitReady(ctx)
}

// waitReady pings every 50ms until the server answers, exits, or StartTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), Password: s.password, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for {
		if err := c.Ping(ctx).Err(); err == nil {
			info, _ := c.InfoMap(ctx, "server").Result()
			s.version = info["Server"]["redis_version"]
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server exited during start-up%s", s.logTailForError())
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not answer within %s%s", s.cfg.StartTimeout, s.logTailForError())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startWatchdog arms a watchdog that, should this process die without stopping the server,
// kills it and removes its directory.
func (s *Server) startWatchdog() error {
	w, err := serverproc.StartWatchdog(fmt.Sprintf("kill -9 %d 2>/dev/null\nrm -rf %s", s.cmd.Process.Pid, serverproc.ShellQuote(s.dir)))
	if err != nil {
		return fmt.Errorf("starting the redis-server watchdog: %w", err)
	}
	s.watchdog = w
	return nil
}

// URL is the redis:// URL with the password; never print it (database.RedactURL).
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", User: url.UserPassword("", s.password), Host: s.Addr(), Path: "/0"}
	return u.String()
}

// Addr is host:port on the loopback interface.
func (s *Server) Addr() string { return net.JoinHostPort(s.host(), strconv.Itoa(s.port)) }

// host is the address the server listens on: loopback, or a cluster node's ClusterConfig.Host.
func (s *Server) host() string {
	if s.node != nil && s.node.host != "" {
		return s.node.host
	}
	return "127.0.0.1"
}

// Password is the server's random password.
func (s *Server) Password() string { return s.password }

// Version is the server's redis_version.
func (s *Server) Version() string { return s.version }

// Dir is the working directory (configuration, log, append-only file), removed by Stop.
func (s *Server) Dir() string { return s.dir }

// PID is the server's process id (0 once stopped).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.stopped {
		return 0
	}
	return s.cmd.Process.Pid
}

// Persistent reports whether the append-only file is on.
func (s *Server) Persistent() bool { return s.cfg.Persist != "" && s.cfg.Persist != PersistOff }

// Crash SIGKILLs the server — no shutdown, no final write of the append-only file — and
// starts it again after down on the same port, password and directory, so that it reloads
// whatever its append-only file holds (nothing with persistence off). It returns once the
// server answers again; ctx ending cuts the wait short, never the restart.
func (s *Server) Crash(ctx context.Context, down time.Duration) error {
	if err := s.killNow(); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
	}
	if err := s.restart(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("crash: %w", err)
	}
	return nil
}

// killNow SIGKILLs the running server and keeps its directory for restart.
func (s *Server) killNow() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.cmd == nil {
		return errors.New("the server is not running")
	}
	s.kill()
	return nil
}

// restart starts a killed server again on the same port, password and directory and waits
// until it answers.
func (s *Server) restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("the server was stopped")
	}
	s.watchdog.Disarm()
	if err := s.launch(ctx); err != nil {
		return fmt.Errorf("starting again on port %d: %w", s.port, err)
	}
	return s.startWatchdog()
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5s) and removes its directory. It is
// idempotent and safe to call from several goroutines.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.watchdog.Disarm()
	var err error
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			s.kill()
			err = errors.New("redis-server did not stop on SIGTERM; it was killed")
		}
	}
	if rmErr := os.RemoveAll(s.dir); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	s.stopped = true
	live.Remove(s)
	return err
}

// kill SIGKILLs the process (and its session) and waits until it is reaped.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
}

// StopAll stops every server this process started and has not stopped yet.
func StopAll() error { return stopAll() }

// clusterConf is a cluster node's part of redis.conf ("" for a lone server): cluster mode,
// its bus port, the shared password as masterauth, and a replica that may always take over
// (a test's cluster must fail over whatever its replica's lag).
func (s *Server) clusterConf() string {
	if s.node == nil {
		return ""
	}
	return strings.Join([]string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		"cluster-port " + strconv.Itoa(s.busPort),
		"cluster-announce-ip " + s.host(),
		"cluster-node-timeout " + strconv.FormatInt(s.node.nodeTimeout.Milliseconds(), 10),
		"cluster-replica-validity-factor 0",
		"cluster-allow-replica-migration no",
		"masterauth " + s.password,
		"repl-diskless-sync-delay 0", // a replica (re)joining syncs at once, not after 5s
		"",
	}, "\n")
}

func (s *Server) logTailForError() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	const keep = 4096
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return ""
	}
	return "\n--- redis-server log (tail) ---\n" + t
}

// quoteConf quotes a path for redis.conf.
func quoteConf(s string) string { return strconv.Quote(s) }
