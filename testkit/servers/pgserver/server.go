// Package pgserver owns the temporary PostgreSQL server a run starts: finding binaries,
// starting a private server through embedded-postgres on a free loopback port with a random
// password, running it as an unprivileged user when we are root, restarting it in place, and
// making sure that after Stop (or StopAll, from a signal handler) no postgres process and no
// runtime directory is left; for test runs, starting servers from a copy of one initialised
// data directory instead of initdb (TemplateDirEnv). It knows nothing about schemas, suites or
// load.
//
// Running as root: initdb and postgres refuse to run as uid 0, and embedded-postgres execs
// <BinariesPath>/bin/initdb and <BinariesPath>/bin/pg_ctl with no hook for credentials. So
// BinariesPath points at a directory of two generated shell wrappers. Each wrapper hands the
// runtime directory (which embedded-postgres creates as root, with the initdb password file
// in it) to the unprivileged user, then execs the real program through `setsid -w` (its own
// session, so a terminal's Ctrl-C reaches us and not the server; we stop it in order) and,
// as root, `setpriv --reuid --regid --clear-groups` (drop to the user). pg_ctl finds the real
// postgres next to itself, so the server runs as that user too. The whole working directory
// is owned by that user. When we are not root the wrappers only add setsid.
package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
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

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// Config describes the server to start. The zero value is usable.
type Config struct {
	// Binaries to run; when empty, FindBinaries("") is used.
	Binaries Binaries
	// User runs the server when the process is root: default "postgres" if it exists, else "nobody".
	User string
	// MaxConnections sets max_connections (default 100).
	MaxConnections int
	// Unsafe turns fsync, synchronous_commit and full_page_writes off (fast, not durable).
	Unsafe bool
	// TempDir is where the working directory is created (default os.TempDir()); as root it
	// must be reachable by User.
	TempDir string
	// Database to create (default "hotspot").
	Database string
	// Settings are extra server settings (-c name=value).
	Settings map[string]string
	// StartTimeout bounds each start (default 30s).
	StartTimeout time.Duration
	// Port to try first; when it is taken (or 0) a free loopback port is picked instead.
	Port int
	// TLS starts the server with TLS on, with a self-signed certificate it makes (CAFile):
	// clients may connect with sslmode=require or verify-full. DSN still says sslmode=disable.
	TLS bool

	noTemplate bool // initialise the server even when TemplateDirEnv is set (the template's own)
}

// Server is a running temporary PostgreSQL.
type Server struct {
	cfg      Config
	bins     Binaries
	dir      string
	dataDir  string
	port     int
	password string
	uid, gid int
	asUser   string
	ep       *embeddedpostgres.EmbeddedPostgres
	epConfig embeddedpostgres.Config
	started  time.Duration
	settings map[string]string

	watchdog *serverproc.Watchdog
	caFile   string // Config.TLS's certificate (tls.go)

	mu      sync.Mutex
	running bool
	removed bool
}

const startAttempts = 3

// live holds the servers StopAll stops.
var live serverproc.Registry[*Server]

// Start initialises and starts a server. On any error nothing is left running or on disk.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Binaries.BinDir == "" {
		b, err := FindBinaries("")
		if err != nil {
			return nil, err
		}
		cfg.Binaries = b
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 100
	}
	if cfg.Database == "" {
		cfg.Database = "hotspot"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, bins: cfg.Binaries, uid: -1, gid: -1}
	if os.Geteuid() == 0 {
		if err := s.resolveUser(); err != nil {
			return nil, err
		}
	}
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	live.Add(s)
	fail := func(err error) (*Server, error) { return nil, errors.Join(err, s.Stop()) }
	t0 := time.Now()
	if dir := os.Getenv(TemplateDirEnv); dir != "" && !cfg.noTemplate {
		if err := s.fromTemplate(ctx, dir); err != nil {
			return fail(fmt.Errorf("starting PostgreSQL from the template in %s (%s): %w", dir, TemplateDirEnv, err))
		}
	}
	if err := s.startWithRetry(ctx, true); err != nil {
		return fail(err)
	}
	s.started = time.Since(t0)
	if err := s.startWatchdog(); err != nil {
		return fail(err)
	}
	return s, nil
}

// startWatchdog arms a watchdog that, should this process die without stopping the server,
// stops it and removes its directory.
func (s *Server) startWatchdog() error {
	w, err := serverproc.StartWatchdog(fmt.Sprintf("%s stop -m immediate -w -D %s >/dev/null 2>&1\nrm -rf %s",
		serverproc.ShellQuote(filepath.Join(s.dir, "wrap", "bin", "pg_ctl")), serverproc.ShellQuote(s.dataDir), serverproc.ShellQuote(s.dir)))
	if err != nil {
		return fmt.Errorf("starting the server's watchdog: %w", err)
	}
	s.watchdog = w
	return nil
}

func (s *Server) resolveUser() error {
	name, uid, gid, err := serverUser(s.cfg.User)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		return fmt.Errorf("running as root: setpriv (util-linux) is needed to start PostgreSQL as %q: %w", name, err)
	}
	s.uid, s.gid, s.asUser = uid, gid, name
	return nil
}

// serverUser is the unprivileged user a server started by root runs as: name (--pg-user), or
// postgres, or nobody.
func serverUser(name string) (string, int, int, error) {
	name, uid, gid, err := serverproc.UnprivilegedUser(name)
	switch {
	case errors.Is(err, serverproc.ErrRootUser):
		return name, 0, 0, fmt.Errorf("running as root: --pg-user %q is root; PostgreSQL refuses to run as root", name)
	case err != nil:
		return name, 0, 0, fmt.Errorf("running as root: the server must run as an unprivileged user, and user %q does not exist (choose one with --pg-user)", name)
	}
	return name, uid, gid, nil
}

// CheckDir says, before anything starts, whether a server could be made in dir (Config.TempDir;
// "": os.TempDir()) by this process for pgUser (Config.User): as root, the server's user must
// exist and reach dir. Not as root it checks nothing: the server runs as this process's user.
func CheckDir(dir, pgUser string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	name, uid, _, err := serverUser(pgUser)
	if err != nil {
		return err
	}
	return checkReachable(parentDir(dir), uid, name)
}

// parentDir is the directory a server's working directory is made in: dir (Config.TempDir),
// or os.TempDir() when it is empty. CheckDir checks the one prepareDir uses.
func parentDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

func (s *Server) prepareDir() error {
	if _, err := exec.LookPath("setsid"); err != nil {
		return fmt.Errorf("setsid (util-linux) is needed to start PostgreSQL in its own session: %w", err)
	}
	parent := parentDir(s.cfg.TempDir)
	dir, err := os.MkdirTemp(parent, "hotspotkit-pg-")
	if err != nil {
		return fmt.Errorf("creating the server's working directory: %w", err)
	}
	s.dir = dir
	s.dataDir = filepath.Join(dir, "data")
	fail := func(err error) error {
		os.RemoveAll(dir)
		return err
	}
	if s.uid >= 0 {
		if err := os.Chown(dir, s.uid, s.gid); err != nil {
			return fail(err)
		}
		if err := checkReachable(parent, s.uid, s.asUser); err != nil {
			return fail(err)
		}
	}
	wrapDir := filepath.Join(dir, "wrap", "bin")
	if err := os.MkdirAll(wrapDir, 0o755); err != nil {
		return fail(err)
	}
	for _, prog := range []string{"initdb", "pg_ctl"} {
		if err := os.WriteFile(filepath.Join(wrapDir, prog), []byte(s.wrapper(prog)), 0o755); err != nil {
			return fail(err)
		}
	}
	if s.uid >= 0 {
		if err := filepath.Walk(filepath.Join(dir, "wrap"), func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, s.uid, s.gid)
		}); err != nil {
			return fail(err)
		}
	}
	if s.cfg.TLS {
		settings, err := s.makeCertificate(dir)
		if err != nil {
			return fail(err)
		}
		s.cfg.Settings = maps.Clone(s.cfg.Settings)
		if s.cfg.Settings == nil {
			s.cfg.Settings = map[string]string{}
		}
		maps.Copy(s.cfg.Settings, settings)
	}
	s.password = serverproc.RandomHex(16)
	return nil
}

// checkReachable is serverproc.CheckReachable with the flag that picks another directory.
func checkReachable(dir string, uid int, user string) error {
	if err := serverproc.CheckReachable(dir, uid, user); err != nil {
		return fmt.Errorf("%w (give --pg-dir a directory it can reach, e.g. /tmp)", err)
	}
	return nil
}

// wrapper is the shell script placed where embedded-postgres expects prog.
func (s *Server) wrapper(prog string) string {
	real := serverproc.ShellQuote(filepath.Join(s.bins.BinDir, prog))
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# Generated by hotspotkit (testkit/pgserver): run " + prog + " in its own session")
	if s.uid < 0 {
		b.WriteString(".\nexec setsid -w " + real + " \"$@\"\n")
		return b.String()
	}
	fmt.Fprintf(&b, " as %s.\n", s.asUser)
	// embedded-postgres recreates its runtime directory as root before each start and writes
	// the initdb password file there; give both to the server's user.
	fmt.Fprintf(&b, "chown -R %d:%d %s 2>/dev/null\n", s.uid, s.gid, serverproc.ShellQuote(filepath.Join(s.dir, "run")))
	fmt.Fprintf(&b, "exec setsid -w setpriv --reuid=%d --regid=%d --clear-groups -- %s \"$@\"\n", s.uid, s.gid, real)
	return b.String()
}

func (s *Server) startWithRetry(ctx context.Context, fresh bool) error {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if fresh || s.port == 0 {
			p, err := serverproc.FreePort()
			if err != nil {
				return err
			}
			s.port = p
			if attempt == 0 && s.cfg.Port != 0 {
				s.port = s.cfg.Port
			}
		}
		err := s.startOnce()
		if err == nil {
			return nil
		}
		lastErr = err
		if !fresh || !isPortCollision(err, s.logTail()) {
			return err
		}
		s.killPostmaster()
		// embedded-postgres reuses a data directory it finds initialised and then creates no
		// database: the next attempt would wait for one that never comes. Start it over.
		if err := os.RemoveAll(s.dataDir); err != nil {
			return err
		}
	}
	return fmt.Errorf("starting PostgreSQL: no free port after %d attempts: %w", startAttempts, lastErr)
}

func (s *Server) startOnce() error {
	params := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": "",
		"max_connections":         strconv.Itoa(s.cfg.MaxConnections),
	}
	if s.hasPgStatStatements() {
		params["shared_preload_libraries"] = "pg_stat_statements"
	}
	if s.cfg.Unsafe {
		params["fsync"] = "off"
		params["synchronous_commit"] = "off"
		params["full_page_writes"] = "off"
	}
	for k, v := range s.cfg.Settings {
		params[k] = v
	}
	s.settings = params
	s.epConfig = embeddedpostgres.DefaultConfig().
		Version(embeddedVersion(s.bins.Major)).
		Port(uint32(s.port)).
		Username("postgres").
		Password(s.password).
		Database(s.cfg.Database).
		RuntimePath(filepath.Join(s.dir, "run")).
		DataPath(s.dataDir).
		BinariesPath(filepath.Join(s.dir, "wrap")).
		Locale("C").
		Encoding("UTF8").
		StartParameters(params).
		StartTimeout(s.cfg.StartTimeout).
		Logger(io.Discard)
	s.ep = embeddedpostgres.NewDatabase(s.epConfig)
	if err := withTempDir(s.dir, s.ep.Start); err != nil {
		return fmt.Errorf("starting PostgreSQL %s from %s: %v%s", s.bins.Version, s.bins.BinDir, firstLine(err), s.logTailForError())
	}
	s.mu.Lock()
	s.running = true
	s.mu.Unlock()
	return nil
}

// tempDirMu serialises the TMPDIR override below.
var tempDirMu sync.Mutex

// StableTempDir returns tb's TempDir made while no server start has TMPDIR pointed into its
// own directory (withTempDir). A test that makes one while a server of its process starts
// would get it inside that server's directory, and lose it with the server (a run of the job
// queue's tests lost its report so). Tests that run beside server starts make theirs with it.
func StableTempDir(tb interface{ TempDir() string }) string {
	tempDirMu.Lock()
	defer tempDirMu.Unlock()
	return tb.TempDir()
}

// logPattern names embedded-postgres's log files (os.CreateTemp's pattern).
const logPattern = "embedded_postgres_log*"

// withTempDir runs start (an embedded-postgres Start) with TMPDIR pointing into dir for as long
// as start takes to create its log file, no longer: embedded-postgres writes its log (the
// postmaster's own output, which logs reads) with os.CreateTemp("") as the first thing it
// does, and never removes it; this keeps it inside our working directory. The rest of the
// process sees TMPDIR changed only for that moment (a few ms, not the seconds of initdb and
// pg_ctl start), so a temporary file or directory made elsewhere in the process meanwhile
// (a test's TempDir beside a server start) rarely lands in dir; StableTempDir makes sure.
func withTempDir(dir string, start func() error) error {
	tempDirMu.Lock()
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	before := countLogs(dir)
	done := make(chan error, 1)
	go func() { done <- start() }()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var err error
	finished := false
	for !finished && countLogs(dir) == before {
		select {
		case err = <-done:
			finished = true
		case <-tick.C:
		}
	}
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	tempDirMu.Unlock()
	if finished {
		return err
	}
	return <-done
}

// countLogs is how many of embedded-postgres's log files dir holds.
func countLogs(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, logPattern))
	return len(m)
}

// hasPgStatStatements says whether the server's installation has pg_stat_statements, asked
// of its pg_config once per process and bin directory (installationFact).
func (s *Server) hasPgStatStatements() bool { return pgStatStatements.of(s.bins.BinDir) }

var pgStatStatements = installationFact[bool]{find: findPgStatStatements}

func findPgStatStatements(binDir string) bool {
	pgConfig := filepath.Join(binDir, "pg_config")
	out, err := exec.Command(pgConfig, "--sharedir", "--pkglibdir").Output()
	if err != nil {
		return false
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return false
	}
	_, e1 := os.Stat(filepath.Join(lines[0], "extension", "pg_stat_statements.control"))
	_, e2 := os.Stat(filepath.Join(lines[1], "pg_stat_statements.so"))
	return e1 == nil && e2 == nil
}

// DSN is the connection string (with the password) for the run's database.
func (s *Server) DSN() string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", s.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + s.cfg.Database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the loopback TCP port.
func (s *Server) Port() int { return s.port }

// Dir is the working directory (data, logs, wrappers), removed by Stop.
func (s *Server) Dir() string { return s.dir }

// StartDuration is how long the first start (initdb included) took.
func (s *Server) StartDuration() time.Duration { return s.started }

// Binaries returns the installation the server runs.
func (s *Server) Binaries() Binaries { return s.bins }

// User is the OS user the server runs as ("" when not root).
func (s *Server) User() string { return s.asUser }

// Settings are the -c settings the server was started with.
func (s *Server) Settings() map[string]string { return s.settings }

// Unsafe reports whether durability was turned off.
func (s *Server) Unsafe() bool { return s.cfg.Unsafe }

// Restart stops the server and starts it again on the same port with the same data.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.stopProcess(); err != nil {
		return fmt.Errorf("restart: stopping: %w", err)
	}
	if err := s.startWithRetry(ctx, false); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// Crash stops the server without a shutdown checkpoint — an immediate shutdown (SIGQUIT to
// the postmaster, as pg_ctl stop -m immediate sends: every backend quits at once, nothing is
// flushed) — and starts it again on the same port and data, so that PostgreSQL goes through
// crash recovery, replaying the WAL from its last checkpoint. It returns once the server
// accepts connections again, and says whether the server log recorded the recovery.
func (s *Server) Crash(ctx context.Context) (recovered bool, err error) {
	const recovery = "automatic recovery in progress"
	before := s.logCount(recovery)
	s.mu.Lock()
	pid := s.postmasterPID()
	if !s.running || pid <= 0 || !serverproc.Alive(pid) {
		s.mu.Unlock()
		return false, errors.New("crash: the server is not running")
	}
	_ = syscall.Kill(pid, syscall.SIGQUIT)
	for i := 0; i < 500 && s.postmasterPID() == pid; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	s.running = false
	s.mu.Unlock()
	if s.postmasterPID() == pid {
		return false, fmt.Errorf("crash: postmaster %d did not quit on SIGQUIT", pid)
	}
	if err := s.startWithRetry(ctx, false); err != nil {
		return false, fmt.Errorf("crash: starting again: %w", err)
	}
	return s.logCount(recovery) > before, nil
}

// logCount counts the occurrences of sub in the server's logs.
func (s *Server) logCount(sub string) int { return bytes.Count(s.logs(), []byte(sub)) }

// logs are the server logs embedded-postgres wrote into our directory (one file per start),
// one after the other.
func (s *Server) logs() []byte {
	files, _ := filepath.Glob(filepath.Join(s.dir, logPattern))
	var all bytes.Buffer
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all.Write(b)
	}
	return all.Bytes()
}

// Stop stops the server and removes its working directory. It is idempotent and safe to
// call from several goroutines (a signal handler and a deferred call).
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return nil
	}
	s.watchdog.Disarm()
	err := s.stopLocked()
	if rmErr := os.RemoveAll(s.dir); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	s.removed = true
	live.Remove(s)
	return err
}

func (s *Server) stopProcess() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Server) stopLocked() error {
	var err error
	if s.running && s.ep != nil {
		err = s.ep.Stop() // it writes to the log file Start made, and makes none
		s.running = false
	}
	// Whatever pg_ctl said, make sure the postmaster is gone.
	if s.killPostmaster() && err == nil {
		err = errors.New("postgres did not stop with pg_ctl; it was killed")
	}
	return err
}

// killPostmaster SIGKILLs the postmaster recorded in postmaster.pid if it is still alive,
// and reports whether it had to.
func (s *Server) killPostmaster() bool {
	pid := s.postmasterPID()
	if pid <= 0 || !serverproc.Alive(pid) {
		return false
	}
	// Give a shutdown in progress a moment before forcing it.
	for i := 0; i < 50; i++ {
		if !serverproc.Alive(pid) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // the postmaster leads its own session and group
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 50 && serverproc.Alive(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func (s *Server) postmasterPID() int {
	b, err := os.ReadFile(filepath.Join(s.dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// PostmasterPID is the server's process id (0 when not running).
func (s *Server) PostmasterPID() int { return s.postmasterPID() }

// StopAll stops every server this process started and has not stopped yet. Signal handlers
// and panic paths call it.
func StopAll() error { return live.StopAll() }

// logTail returns the end of the server log embedded-postgres wrote into our directory.
func (s *Server) logTail() string {
	const keep = 4096
	b := s.logs()
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

func (s *Server) logTailForError() string {
	t := strings.TrimSpace(s.logTail())
	if t == "" {
		return ""
	}
	return "\n--- server log (tail) ---\n" + t
}

func isPortCollision(err error, log string) bool {
	msg := err.Error() + log
	return strings.Contains(msg, "already listening") || strings.Contains(msg, "Address already in use") ||
		strings.Contains(msg, "could not bind")
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
