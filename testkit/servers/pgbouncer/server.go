// Package pgbouncer owns the temporary PgBouncer a run puts between the service and PostgreSQL
// (--pooler pgbouncer, baseline pgbouncer) and PgBouncer's admin console (console.go), which
// also reads a PgBouncer this process did not start (--pooler-url). For the temporary one it
// owns finding the binary, starting a private pooler on a free port with random passwords in
// a temporary directory, in front of one upstream database, restarting it in place (a fault),
// and making sure that after Stop (or StopAll, from a signal or panic path) — and even after
// this process was SIGKILLed, through a watchdog (testkit/servers/serverproc) — no pgbouncer
// process and no directory is left. UpstreamConfig and CheckPoolSize (upstream.go) read the
// upstream from a PostgreSQL URL and check that a pool fits it. It knows nothing about
// schemas, suites or load: what a new server connection sets is the caller's ConnectQuery.
//
// The pooler runs in its own session, so a terminal's Ctrl-C reaches us and not it; we stop
// it in order. Its configuration and passwords are files (mode 0600) in the temporary
// directory, never command-line arguments that ps would show. PgBouncer refuses to run as
// root: started by root, it drops to an unprivileged user itself (its `user` setting), as the
// temporary PostgreSQL does (postgres if it exists, else nobody), and the directory is that
// user's.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// BinaryEnv names an environment variable that overrides the pgbouncer looked up in PATH.
const BinaryEnv = "HOTSPOTKIT_PGBOUNCER"

// debianBinary is where Debian's package installs pgbouncer (/usr/sbin: not in every PATH).
var debianBinary = "/usr/sbin/pgbouncer"

// The pool modes (Config.Mode): a server connection is a client's for one transaction, or for
// its whole session.
const (
	ModeTransaction = "transaction"
	ModeSession     = "session"
)

// Modes are the values Config.Mode takes.
var Modes = []string{ModeTransaction, ModeSession}

// AdminUser is the console's user (ConsoleURL), in PgBouncer's admin_users.
const AdminUser = "hotspotkit_admin"

// Defaults of Config.
const (
	DefaultPoolSize      = 16
	DefaultMaxClientConn = 10000
)

// Config describes the pooler to start.
type Config struct {
	// Binary is the pgbouncer to run (default: FindBinary's search).
	Binary string
	// Upstream is PostgreSQL: host (may be a Unix socket directory) and port, the database
	// name, and the user/password pgbouncer logs in with. The clients (ClientURL) see the
	// same database name and user, with a password of the pooler's own. Password may be
	// empty for a server that trusts the user.
	UpstreamHost string
	UpstreamPort int
	DBName, User string
	Password     string
	Mode         string // ModeTransaction (default) or ModeSession
	// PoolSize is the server connections of the (database, user) pool: default_pool_size,
	// and also max_db_connections and max_user_connections, so that PostgreSQL never sees
	// more than PoolSize from the pooler (default DefaultPoolSize). No reserve pool.
	PoolSize int
	// MaxClientConn is max_client_conn (default DefaultMaxClientConn). The pooler's file
	// descriptor limit is raised to fit it; Start fails when it cannot be.
	MaxClientConn int
	// ConnectQuery runs on each new server connection (PgBouncer 1.18 refuses search_path and
	// most settings as a client's startup parameters): "SET search_path TO s; SET ...". In
	// session mode it also runs after each client's reset (see resetQuery).
	ConnectQuery string
	// QueryWaitTimeout is how long a client may wait for a server connection before the
	// pooler fails its query (query_wait_timeout; default 120s, PgBouncer's). A pause of the
	// pooler (PAUSE … RESUME) longer than this fails the clients it held.
	QueryWaitTimeout time.Duration
	// Host is the listen address (default 127.0.0.1); ClientURL and ConsoleURL name it.
	Host string
	// RunAs is the OS user the pooler runs as when this process is root (default postgres if
	// it exists, else nobody); otherwise it runs as this process's user.
	RunAs string
	// TempDir is where the working directory is created (default os.TempDir()). PgBouncer
	// reads its files there before it drops to RunAs, so RunAs need not reach it.
	TempDir string
	// StartTimeout bounds each start (default 10s).
	StartTimeout time.Duration
}

// Server is a running temporary PgBouncer.
type Server struct {
	cfg           Config
	bin           string
	dir           string
	port          int
	password      string // the clients'
	adminPassword string
	version       string
	uid, gid      int    // RunAs's when root, else -1
	runAs         string // "" when not root
	nofile        uint64 // the pooler's RLIMIT_NOFILE

	inst *serverproc.Instance // the directory, the process and its watchdog

	mu sync.Mutex // guards inst
}

// live holds the servers StopAll stops.
var live serverproc.Registry[*Server]

// FindBinary returns the pgbouncer to run: explicit, else $HOTSPOTKIT_PGBOUNCER, else the one
// in PATH, else Debian's /usr/sbin/pgbouncer.
func FindBinary(explicit string) (string, error) {
	return serverproc.FindBinary(explicit, BinaryEnv, "pgbouncer",
		errors.New("pgbouncer is not installed (Debian: apt-get install pgbouncer), or set $"+BinaryEnv), debianBinary)
}

// Start starts a pooler and waits until its console answers. On any error nothing is left
// running or on disk.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	bin, err := FindBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, bin: bin, uid: -1, gid: -1,
		password: serverproc.RandomHex(16), adminPassword: serverproc.RandomHex(16)}
	if os.Geteuid() == 0 {
		if s.runAs, s.uid, s.gid, err = serverproc.UnprivilegedUser(cfg.RunAs); err != nil {
			return nil, fmt.Errorf("running as root: pgbouncer refuses to run as root and must drop to another user: %w", err)
		}
	}
	if s.nofile, err = fileLimit(cfg.MaxClientConn, cfg.PoolSize); err != nil {
		return nil, err
	}
	parent := cfg.TempDir
	if parent == "" {
		parent = os.TempDir()
	}
	if s.dir, err = os.MkdirTemp(parent, "hotspotkit-pgbouncer-"); err != nil {
		return nil, fmt.Errorf("creating the pgbouncer working directory: %w", err)
	}
	s.inst = serverproc.NewInstance(s.dir)
	live.Add(s)
	fail := func(err error) (*Server, error) { return nil, errors.Join(err, s.Stop()) }
	if err := s.writeFiles(); err != nil {
		return fail(err)
	}
	err = s.inst.LaunchOnFreePort(ctx, func() (err error) {
		if s.port, err = serverproc.FreePort(); err != nil {
			return err
		}
		if err := s.writeConfig(); err != nil {
			return err
		}
		return s.launch(ctx)
	})
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// simpleName is what a database or user name may be here: it goes unquoted into PgBouncer's
// configuration.
var simpleName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// setDefaults fills in the defaults and checks the rest.
func (c *Config) setDefaults() error {
	if c.Mode == "" {
		c.Mode = ModeTransaction
	}
	if c.Mode != ModeTransaction && c.Mode != ModeSession {
		return fmt.Errorf("pgbouncer: pool mode %q: want one of %s", c.Mode, strings.Join(Modes, ", "))
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MaxClientConn == 0 {
		c.MaxClientConn = DefaultMaxClientConn
	}
	if c.PoolSize < 0 || c.MaxClientConn < 0 {
		return fmt.Errorf("pgbouncer: pool size %d, max client connections %d: want positive numbers", c.PoolSize, c.MaxClientConn)
	}
	if c.QueryWaitTimeout == 0 {
		c.QueryWaitTimeout = 120 * time.Second
	}
	if c.QueryWaitTimeout < time.Second {
		return fmt.Errorf("pgbouncer: query wait timeout %s: want at least 1s (PgBouncer counts it in seconds)", c.QueryWaitTimeout)
	}
	if c.UpstreamHost == "" {
		c.UpstreamHost = "127.0.0.1"
	}
	if c.UpstreamPort == 0 {
		c.UpstreamPort = 5432
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 10 * time.Second
	}
	for what, name := range map[string]string{"database": c.DBName, "user": c.User} {
		if !simpleName.MatchString(name) {
			return fmt.Errorf("pgbouncer: %s name %q: want letters, digits, _ . - (and not empty)", what, name)
		}
	}
	if c.User == AdminUser || c.DBName == "pgbouncer" {
		return fmt.Errorf("pgbouncer: user %q or database %q is the console's own", c.User, c.DBName)
	}
	if strings.ContainsAny(c.UpstreamHost+c.ConnectQuery+c.Password, "\n\r") {
		return errors.New("pgbouncer: a line break in the upstream host, password or connect query")
	}
	return nil
}

// fdReserve is what the pooler needs beside its clients and server connections: its
// listening sockets, log, DNS resolver, console sessions (PgBouncer's own estimate adds 32).
const fdReserve = 64

// fileLimit is the RLIMIT_NOFILE the pooler gets: enough for maxClients clients and poolSize
// server connections. Beyond this process's hard limit it asks a shell whether the limit can
// be raised (root with CAP_SYS_RESOURCE: not in every container) and says clearly when not.
func fileLimit(maxClients, poolSize int) (uint64, error) {
	need := uint64(maxClients + poolSize + fdReserve)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the file descriptor limit: %w", err)
	}
	if need <= rl.Max {
		return min(rl.Max, max(need, 1<<16)), nil
	}
	if exec.Command("/bin/sh", "-c", `ulimit -n "$1"`, "sh", strconv.FormatUint(need, 10)).Run() != nil {
		return 0, fmt.Errorf("pgbouncer: %d client connections need %d file descriptors, and this process may open at most %d and cannot raise it (ulimit -Hn as root with CAP_SYS_RESOURCE; or allow fewer clients)", maxClients, need, rl.Max)
	}
	return need, nil
}

// writeFiles writes the password file and hands the directory to the pooler's user.
func (s *Server) writeFiles() error {
	users := quoteAuth(s.cfg.User) + " " + quoteAuth(s.password) + "\n" +
		quoteAuth(AdminUser) + " " + quoteAuth(s.adminPassword) + "\n"
	if err := os.WriteFile(filepath.Join(s.dir, "userlist.txt"), []byte(users), 0o600); err != nil {
		return err
	}
	if s.uid >= 0 {
		for _, p := range []string{s.dir, filepath.Join(s.dir, "userlist.txt")} {
			if err := os.Chown(p, s.uid, s.gid); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeConfig writes pgbouncer.ini for s.port.
func (s *Server) writeConfig() error {
	c := s.cfg
	conn := []string{
		"host=" + quoteConnValue(c.UpstreamHost),
		"port=" + strconv.Itoa(c.UpstreamPort),
		"dbname=" + c.DBName,
		"user=" + c.User,
	}
	if c.Password != "" {
		conn = append(conn, "password="+quoteConnValue(c.Password))
	}
	if c.ConnectQuery != "" {
		conn = append(conn, "connect_query="+quoteConnValue(c.ConnectQuery))
	}
	lines := []string{
		"; Generated by hotspotkit (testkit/servers/pgbouncer); removed when the pooler stops.",
		"[databases]",
		c.DBName + " = " + strings.Join(conn, " "),
		"[pgbouncer]",
		"listen_addr = " + c.Host,
		"listen_port = " + strconv.Itoa(s.port),
		// Thousands of clients connect at once (one per worker): the kernel's own limit
		// (somaxconn) caps it, and a full queue would make a client retry its SYN after 1s.
		"listen_backlog = 4096",
		"unix_socket_dir =",
		// md5, not scram-sha-256: SCRAM's 4096 PBKDF2 rounds on both sides of every login made
		// 300 logins through the pooler take 1.56 s (0.59 CPU-s of the client's) against
		// 0.29 s (0.14) with md5 here, and a run opens thousands at once (one per worker, a
		// connection storm). The password is random, for one run, on loopback by default.
		"auth_type = md5",
		"auth_file = " + filepath.Join(s.dir, "userlist.txt"),
		"admin_users = " + AdminUser,
		"pool_mode = " + c.Mode,
		"default_pool_size = " + strconv.Itoa(c.PoolSize),
		"min_pool_size = 0",
		"reserve_pool_size = 0",
		"max_db_connections = " + strconv.Itoa(c.PoolSize),
		"max_user_connections = " + strconv.Itoa(c.PoolSize),
		"max_client_conn = " + strconv.Itoa(c.MaxClientConn),
		"server_reset_query = " + resetQuery(c.Mode, c.ConnectQuery),
		// A restarted PostgreSQL is reached again within a second, not PgBouncer's 15.
		"server_login_retry = 1",
		"query_wait_timeout = " + strconv.Itoa(int(c.QueryWaitTimeout/time.Second)),
		// Clients of other drivers send it (libpq's psql, JDBC); pgx sends only user and
		// database (and application_name, options, timezone when $PGAPPNAME, $PGOPTIONS, $PGTZ
		// are set).
		"ignore_startup_parameters = extra_float_digits",
		// SHOW STATS's averages every second, for a sampler; totals are always current.
		"stats_period = 1",
		"log_stats = 0",
		"log_connections = 0",
		"log_disconnections = 0",
	}
	if s.runAs != "" {
		lines = append(lines, "user = "+s.runAs)
	}
	p := filepath.Join(s.dir, "pgbouncer.ini")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	if s.uid >= 0 {
		return os.Chown(p, s.uid, s.gid)
	}
	return nil
}

// resetQuery is server_reset_query: nothing in transaction mode (PgBouncer does not run it
// there); in session mode what DISCARD ALL does, then connectQuery again, since DISCARD ALL's
// RESET ALL would drop the search_path connectQuery set for the next client. (DISCARD ALL
// itself cannot run in a multi-statement query.)
func resetQuery(mode, connectQuery string) string {
	if mode != ModeSession {
		return ""
	}
	q := "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL; UNLISTEN *; " +
		"SELECT pg_advisory_unlock_all(); DISCARD PLANS; DISCARD TEMP; DISCARD SEQUENCES"
	if connectQuery != "" {
		q += "; " + connectQuery
	}
	return q
}

// launch starts pgbouncer on s.port and waits until its console answers.
func (s *Server) launch(ctx context.Context) error {
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	// The shell raises the file descriptor limit (as root, beyond the hard one) and becomes
	// pgbouncer.
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n "$1" || exit 1; shift; exec "$@"`, "sh",
		strconv.FormatUint(s.nofile, 10), s.bin, filepath.Join(s.dir, "pgbouncer.ini"))
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := s.inst.Launch(cmd); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	return s.waitReady(ctx)
}

// waitReady opens the console every 50ms until it answers, the process exits, or
// StartTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		c, err := OpenConsole(attempt, s.ConsoleURL())
		cancelAttempt()
		if err == nil {
			s.version = c.Version()
			return c.Close()
		}
		select {
		case <-s.inst.Exited():
			return fmt.Errorf("pgbouncer exited during start-up%s", s.logTailForError())
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer did not answer within %s (%v)%s", s.cfg.StartTimeout, err, s.logTailForError())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ClientURL is what the service's clients connect to: the upstream's database name and user,
// the pooler's own password. Never print it (database.RedactURL).
func (s *Server) ClientURL() string { return s.url(s.cfg.User, s.password, s.cfg.DBName) }

// ConsoleURL is the admin console's URL (AdminUser, database pgbouncer). Never print it.
func (s *Server) ConsoleURL() string { return s.url(AdminUser, s.adminPassword, "pgbouncer") }

func (s *Server) url(user, password, db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password),
		Host: net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Host is the listen address.
func (s *Server) Host() string { return s.cfg.Host }

// Port is the listen port.
func (s *Server) Port() int { return s.port }

// Version is the pooler's version as its console says it (SHOW VERSION), e.g. "1.18.0".
func (s *Server) Version() string { return s.version }

// Mode is the pool mode the pooler runs in.
func (s *Server) Mode() string { return s.cfg.Mode }

// PoolSize is the server connections of its pool.
func (s *Server) PoolSize() int { return s.cfg.PoolSize }

// Dir is the working directory (configuration, password file, log), removed by Stop.
func (s *Server) Dir() string { return s.dir }

// PID is the pooler's process id (0 once stopped).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inst.PID()
}

// CPUTime is the processor time the pooler's process has used so far (0 once stopped, or
// where /proc cannot say): PgBouncer runs on one thread, so its share of a core is its limit.
func (s *Server) CPUTime() time.Duration { return serverproc.CPUTime(s.PID()) }

// Restart SIGKILLs the pooler — every client and server connection drops at once — and
// starts it again on the same port with the same configuration and passwords. It returns once
// the console answers again; ctx ending cuts the wait short.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inst.Running() {
		return errors.New("pgbouncer restart: the pooler is not running")
	}
	s.inst.Kill()
	if err := s.launch(ctx); err != nil {
		s.inst.Kill()
		return fmt.Errorf("pgbouncer restart: starting again on port %d: %w", s.port, err)
	}
	return s.inst.Arm()
}

// Stop shuts the pooler down (SIGTERM, then SIGKILL after 5s) and removes its directory. It
// is idempotent and safe to call from several goroutines.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer live.Remove(s)
	return s.inst.Stop("pgbouncer")
}

// StopAll stops every pooler this process started and has not stopped yet. Signal handlers
// and panic paths call it.
func StopAll() error { return live.StopAll() }

func (s *Server) logPath() string { return filepath.Join(s.dir, "pgbouncer.log") }

func (s *Server) logTailForError() string { return serverproc.LogTail(s.logPath(), "pgbouncer") }

// quoteAuth quotes a name or password for PgBouncer's auth_file.
func quoteAuth(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteConnValue quotes a value of a [databases] connection string.
func quoteConnValue(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
