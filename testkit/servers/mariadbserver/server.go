// Package mariadbserver owns the temporary MariaDB server a run starts: finding mariadbd and
// mariadb-install-db, initialising a data directory in a working directory of its own (or, for
// test runs, copying one initialised once: TemplateDirEnv), starting mariadbd on a free
// loopback port (and a Unix socket in its directory) with every setting on the command line
// and none read from the machine's option files, running it as an unprivileged user when we
// are root, crashing and restarting it in place for faults, and making sure that after Stop
// (or StopAll, from a signal or panic path) — and even after this process was SIGKILLed,
// through a watchdog (testkit/servers/serverproc) — no mariadbd and no directory is left. It
// knows nothing about schemas, suites or load.
//
// The server is durable by default: InnoDB writes and flushes its redo log at every commit
// (innodb_flush_log_at_trx_commit=1), keeps its doublewrite buffer, and no binary log is
// written (the server is nobody's primary); on a tmpfs (the tests') that holds against
// mariadbd's crash, not the machine's. Config.Unsafe trades it for speed as the temporary
// PostgreSQL's does. The hot-row settings a run varies — innodb_deadlock_detect,
// innodb_lock_wait_timeout, innodb_flush_log_at_trx_commit — are Config fields;
// performance_schema is on, for the lock and statement views a monitor reads.
//
// Clients connect with github.com/go-sql-driver/mysql (DriverConfig, DSN) as root, whose
// password is random (made with the data directory) and never on a command line. The driver
// sends a statement with parameters as three commands — COM_STMT_PREPARE and
// COM_STMT_EXECUTE, each a round trip, then COM_STMT_CLOSE — unless it interpolates the
// parameters into the text itself (interpolateParams=true): then it is one COM_QUERY, one round
// trip, as pgx's default is on PostgreSQL. DriverConfig turns it on; the tests count the
// commands on the server. Interpolation is safe with the server's utf8mb4 (the driver refuses
// it with the multibyte character sets whose bytes can hide a backslash). Programs built on
// MariaDB's C client (sysbench, the mariadb client) reach the same root through Socket() or
// Addr(), the password in the environment (MYSQL_PWD), not on their command line.
//
// mariadbd and its set-up steps (mariadb-install-db, the template's copy) run in a session of
// their own, so that a terminal's Ctrl-C reaches us and not them; we stop them in order.
// mariadbd refuses to run as root: started by root, mariadb-install-db and mariadbd run as the
// server's user (mysql where it exists, as Debian's package makes it), and the working
// directory is that user's.
package mariadbserver

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// Server is a running temporary MariaDB.
type Server struct {
	cfg      Config
	bins     Binaries
	dir      string
	dataDir  string
	socket   string // "" when the directory's path is too long for one
	port     int
	password string
	uid, gid int    // the server's user's when root, else -1
	asUser   string // "" when not root
	version  string
	settings map[string]string

	initialised time.Duration // the data directory's set-up: mariadb-install-db or the template's copy
	started     time.Duration // mariadbd's first start, until it answered

	inst *serverproc.Instance // the directory, the set-up steps and mariadbd, the watchdog

	mu      sync.Mutex // guards inst and stopped
	stopped bool
	pid     atomic.Int64 // mariadbd's, read without mu: a monitor's reading never waits for a restart
}

// live holds the servers StopAll stops.
var live serverproc.Registry[*Server]

// Files in the working directory.
const (
	dataName   = "data"
	logName    = "mariadbd.log" // mariadbd's error log, and what it says before opening it
	pidName    = "mariadbd.pid"
	socketName = "mariadbd.sock"
	tmpName    = "tmp"
)

// redoLogSize is innodb_log_file_size: InnoDB's redo log is one file of that size, made at
// initialisation, which a template's every copy copies (MariaDB's 96 MiB would be most of it),
// and enough that a minute of hot-row updates does not wait for checkpoints.
const redoLogSize = "32M"

// maxSocketPath is the longest path a Unix socket may have (sun_path, less its NUL).
const maxSocketPath = 107

// Start initialises and starts a server. On any error nothing is left running or on disk.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if cfg.Binaries.Server == "" {
		b, err := FindBinaries("")
		if err != nil {
			return nil, err
		}
		cfg.Binaries = b
	}
	s := &Server{cfg: cfg, bins: cfg.Binaries, uid: -1, gid: -1, settings: cfg.serverSettings()}
	if os.Geteuid() == 0 {
		var err error
		if s.asUser, s.uid, s.gid, err = serverUser(cfg.User); err != nil {
			return nil, err
		}
	}
	parent := parentDir(cfg.TempDir)
	dir, err := os.MkdirTemp(parent, "hotspotkit-mariadb-")
	if err != nil {
		return nil, fmt.Errorf("creating the MariaDB working directory: %w", err)
	}
	s.dir, s.dataDir = dir, filepath.Join(dir, dataName)
	if p := filepath.Join(dir, socketName); len(p) <= maxSocketPath {
		s.socket = p
	}
	s.inst = serverproc.NewInstance(dir)
	live.Add(s)
	fail := func(err error) (*Server, error) { return nil, errors.Join(err, s.Stop()) }
	if err := s.prepareDir(parent); err != nil {
		return fail(err)
	}
	t0 := time.Now()
	if tpl := os.Getenv(TemplateDirEnv); tpl != "" {
		if err := s.fromTemplate(ctx, tpl); err != nil {
			return fail(fmt.Errorf("starting MariaDB from the template in %s (%s): %w", tpl, TemplateDirEnv, err))
		}
	} else if err := s.install(ctx); err != nil {
		return fail(err)
	}
	t1 := time.Now()
	s.initialised = t1.Sub(t0)
	if err := s.startFirst(ctx); err != nil {
		return fail(err)
	}
	s.started = time.Since(t1)
	return s, nil
}

// serverUser is the unprivileged user a server started by root runs as: name, or mysql if that
// user exists, else serverproc.UnprivilegedUser's.
func serverUser(name string) (string, int, int, error) {
	if name == "" {
		if _, err := user.Lookup("mysql"); err == nil {
			name = "mysql"
		}
	}
	name, uid, gid, err := serverproc.UnprivilegedUser(name)
	if err != nil {
		return name, 0, 0, fmt.Errorf("running as root: mariadbd refuses to run as root and must run as another user: %w", err)
	}
	return name, uid, gid, nil
}

// CheckDir says, before anything starts, whether a server could be made in dir (Config.TempDir;
// "": os.TempDir()) by this process for user (Config.User): as root, the server's user must
// exist and reach dir. Not as root it checks nothing: the server runs as this process's user.
func CheckDir(dir, user string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	name, uid, _, err := serverUser(user)
	if err != nil {
		return err
	}
	return serverproc.CheckReachable(parentDir(dir), uid, name)
}

// parentDir is the directory a server's working directory is made in: dir (Config.TempDir),
// or os.TempDir() when it is empty.
func parentDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// prepareDir makes the working directory's tmp directory and, as root, gives the directory to
// the server's user once it is sure that user can reach it.
func (s *Server) prepareDir(parent string) error {
	tmp := filepath.Join(s.dir, tmpName)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	if s.uid < 0 {
		return nil
	}
	if err := serverproc.CheckReachable(parent, s.uid, s.asUser); err != nil {
		return err
	}
	for _, p := range []string{s.dir, tmp} {
		if err := os.Chown(p, s.uid, s.gid); err != nil {
			return err
		}
	}
	return nil
}

// asServerUser makes cmd run as the server's user when we are root.
func (s *Server) asServerUser(cmd *exec.Cmd) {
	if s.uid < 0 {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid), Groups: []uint32{}}
}

var errStopped = errors.New("the server was stopped")

// runStep runs a set-up step (mariadb-install-db, a copy of the template) as the instance's
// process — in a session of its own, under the watchdog, so that an owner killed meanwhile
// leaves neither it nor the directory — and waits until it ends (StartTimeout at most).
func (s *Server) runStep(ctx context.Context, cmd *exec.Cmd, what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errStopped
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.inst.Launch(cmd); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := s.inst.Arm(); err != nil {
		s.inst.Kill()
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	select {
	case <-s.inst.Exited():
	case <-ctx.Done():
		s.inst.Kill()
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if !cmd.ProcessState.Success() {
		return fmt.Errorf("%s: %s\n%s", what, cmd.ProcessState, tail(out.Bytes()))
	}
	return nil
}

// tail is the end of a program's output (4 KiB) for an error message.
func tail(b []byte) string {
	const keep = 4096
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return strings.TrimSpace(string(b))
}

// install initialises the data directory with mariadb-install-db, run by the server's user:
// MariaDB's system tables, root at localhost (the socket) and 127.0.0.1 with a new random
// password, and no other account. The password goes to the bootstrap server in a file (mode
// 0600), never on a command line.
func (s *Server) install(ctx context.Context) error {
	s.password = serverproc.RandomHex(16)
	script := filepath.Join(s.dir, "bootstrap.sql")
	defer os.Remove(script)
	// In bootstrap mode the grant tables are not loaded until FLUSH PRIVILEGES, and ALTER USER
	// needs them. root@<hostname> and root@::1 would let root in without a password.
	sqlText := "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host NOT IN ('localhost', '127.0.0.1');\n" +
		"DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost', '127.0.0.1');\n" +
		"FLUSH PRIVILEGES;\n" +
		"ALTER USER 'root'@'localhost' IDENTIFIED BY '" + s.password + "';\n" +
		"ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '" + s.password + "';\n"
	if err := os.WriteFile(script, []byte(sqlText), 0o600); err != nil {
		return err
	}
	if s.uid >= 0 {
		if err := os.Chown(script, s.uid, s.gid); err != nil {
			return err
		}
	}
	cmd := exec.Command(s.bins.InstallDB, "--no-defaults", "--datadir="+s.dataDir,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
		"--extra-file="+script, "--tmpdir="+filepath.Join(s.dir, tmpName), "--innodb-log-file-size="+redoLogSize)
	// The bootstrap runs the mariadbd found, not the one mariadb-install-db would look for.
	cmd.Env = append(os.Environ(), "MYSQLD_BOOTSTRAP="+s.bins.Server)
	cmd.Dir = s.dir
	s.asServerUser(cmd)
	return s.runStep(ctx, cmd, "initialising MariaDB's data directory ("+s.bins.InstallDB+")")
}

// startFirst starts mariadbd for the first time: on Config.Port, or a free port when it is
// taken or 0, and again on another if one taken meanwhile collides.
func (s *Server) startFirst(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errStopped
	}
	attempt := 0
	return s.inst.LaunchOnFreePort(ctx, func() error {
		attempt++
		if attempt == 1 && s.cfg.Port != 0 {
			s.port = s.cfg.Port
		} else {
			p, err := serverproc.FreePort()
			if err != nil {
				return err
			}
			s.port = p
		}
		return s.launch(ctx)
	})
}

// serverArgs is mariadbd's command line: no option file read (--no-defaults must come first),
// the working directory's files, the port, then the settings.
func (s *Server) serverArgs() []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + s.dataDir,
		"--port=" + strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--socket=" + s.socket, // "": none
		"--pid-file=" + filepath.Join(s.dir, pidName),
		"--log-error=" + s.logPath(),
		"--tmpdir=" + filepath.Join(s.dir, tmpName),
		"--skip-name-resolve", // users by address, and no DNS on a connection's way in
		"--skip-log-bin",
	}
	names := make([]string, 0, len(s.settings))
	for name := range s.settings {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		args = append(args, "--"+name+"="+s.settings[name])
	}
	return args
}

// launch starts mariadbd on s.port with s.dataDir and waits until it answers. s.mu is held.
func (s *Server) launch(ctx context.Context) error {
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	if s.uid >= 0 {
		if err := log.Chown(s.uid, s.gid); err != nil {
			return err
		}
	}
	cmd := exec.Command(s.bins.Server, s.serverArgs()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log // what it says before it opens its log (--log-error)
	s.asServerUser(cmd)
	if err := s.inst.Launch(cmd); err != nil {
		return fmt.Errorf("starting %s: %w", s.bins.Server, err)
	}
	s.pid.Store(int64(cmd.Process.Pid))
	return s.waitReady(ctx)
}

// waitReady connects every 25ms until the server answers, exits, or StartTimeout passes; then
// reads its version, checks that it took max_connections as asked, and creates the database.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	db, err := s.admin()
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		err = db.PingContext(attempt)
		cancelAttempt()
		if err == nil {
			break
		}
		select {
		case <-s.inst.Exited():
			return fmt.Errorf("mariadbd exited during start-up%s", s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("mariadbd did not answer within %s (%v)%s", s.cfg.StartTimeout, err, s.logTail())
		case <-time.After(25 * time.Millisecond):
		}
	}
	var version string
	var maxConnections int
	if err := db.QueryRowContext(ctx, "SELECT @@version, @@max_connections").Scan(&version, &maxConnections); err != nil {
		return fmt.Errorf("reading mariadbd's version: %w", err)
	}
	if s.version == "" { // the first start's, before Start returns; a restart's is the same
		s.version = version
	}
	if maxConnections != s.cfg.MaxConnections {
		return fmt.Errorf("mariadbd lowered max_connections to %d (asked for %d): its open files limit is too low (raise ulimit -n, or ask for fewer)%s",
			maxConnections, s.cfg.MaxConnections, s.logTail())
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+s.cfg.Database+"`"); err != nil {
		return fmt.Errorf("creating database %s: %w", s.cfg.Database, err)
	}
	return nil
}

// admin is a pool of one connection to the server as root, through TCP, on no database, whose
// driver logs nothing (a server starting or stopping breaks connections as a matter of course).
func (s *Server) admin() (*sql.DB, error) {
	cfg := s.DriverConfig()
	cfg.DBName = ""
	cfg.Timeout = time.Second
	cfg.Logger = quiet{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

// quiet is a driver Logger that drops what it is given.
type quiet struct{}

func (quiet) Print(...any) {}

// Kill SIGKILLs mariadbd — a crash: no shutdown, nothing written that InnoDB had not — and
// leaves the server down, with its directory and port, until Restart.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || !s.inst.Running() {
		return errors.New("mariadb kill: the server is not running")
	}
	s.inst.Kill()
	return nil
}

// crashRecovery is what mariadbd's log says when InnoDB starts from a redo log that was not
// shut down cleanly.
const crashRecovery = "InnoDB: Starting crash recovery"

// shutdownTimeout bounds Restart's wait for a clean shutdown (InnoDB flushes its dirty pages).
const shutdownTimeout = time.Minute

// Restart starts mariadbd again on the same port with the same data directory and returns
// once it answers. A running server is shut down cleanly first (SIGTERM); after Kill (or a
// mariadbd that died) InnoDB recovers from its redo log on the way: recovered says whether the
// log recorded a crash recovery on this start.
func (s *Server) Restart(ctx context.Context) (recovered bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || !s.inst.Running() {
		return false, errors.New("mariadb restart: the server is not running")
	}
	select {
	case <-s.inst.Exited():
	default:
		_ = syscall.Kill(s.inst.PID(), syscall.SIGTERM)
		select {
		case <-s.inst.Exited():
		case <-time.After(shutdownTimeout):
			s.inst.Kill()
			return false, fmt.Errorf("mariadb restart: mariadbd did not shut down within %s; it was killed", shutdownTimeout)
		}
	}
	before := s.logCount(crashRecovery)
	if err := s.launch(ctx); err != nil {
		s.inst.Kill()
		return false, fmt.Errorf("mariadb restart: starting again on port %d: %w", s.port, err)
	}
	if err := s.inst.Arm(); err != nil {
		return false, err
	}
	return s.logCount(crashRecovery) > before, nil
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5s) and removes its directory. It is
// idempotent and safe to call from several goroutines.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer live.Remove(s)
	s.stopped = true
	s.pid.Store(0)
	return s.inst.Stop("mariadbd")
}

// StopAll stops every server this process started and has not stopped yet. Signal handlers
// and panic paths call it.
func StopAll() error { return live.StopAll() }

// DriverConfig is go-sql-driver/mysql's configuration for the run's database, as root over
// TCP, with interpolateParams on (one round trip a statement). Each call returns a new one,
// for the caller to change (DialFunc, timeouts). Never print its password (RedactDSN).
func (s *Server) DriverConfig() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Passwd = "root", s.password
	c.Net, c.Addr = "tcp", s.Addr()
	c.DBName = s.cfg.Database
	c.InterpolateParams = true
	return c
}

// DSN is DriverConfig's data source name, for sql.Open("mysql", …). Never print it (RedactDSN).
func (s *Server) DSN() string { return s.DriverConfig().FormatDSN() }

// Addr is host:port on the loopback interface.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the loopback TCP port.
func (s *Server) Port() int { return s.port }

// Socket is the Unix socket's path in the working directory, root's way in as well (as
// 'root'@'localhost', the same password); "" when the directory's path is too long for one.
func (s *Server) Socket() string { return s.socket }

// Database is the run's database.
func (s *Server) Database() string { return s.cfg.Database }

// Dir is the working directory (data, log, socket), removed by Stop.
func (s *Server) Dir() string { return s.dir }

// Version is the server's own (@@version), e.g. "10.11.19-MariaDB-0+deb12u1".
func (s *Server) Version() string { return s.version }

// Binaries returns the installation the server runs.
func (s *Server) Binaries() Binaries { return s.bins }

// User is the OS user the server runs as ("" when not root).
func (s *Server) User() string { return s.asUser }

// Settings are the server variables mariadbd was started with (besides its directory, port
// and files), by their names as @@variables.
func (s *Server) Settings() map[string]string {
	out := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		out[k] = v
	}
	return out
}

// Unsafe reports whether durability was traded for speed (Config.Unsafe).
func (s *Server) Unsafe() bool { return s.cfg.Unsafe }

// InitDuration is how long the data directory's set-up took: mariadb-install-db, or the copy
// of a template.
func (s *Server) InitDuration() time.Duration { return s.initialised }

// StartDuration is how long mariadbd's first start took, until it answered.
func (s *Server) StartDuration() time.Duration { return s.started }

// PID is mariadbd's process id (0 before its first start and once stopped; a killed one's
// until Restart). mariadbd is one process: its threads' processor time is the process's.
func (s *Server) PID() int { return int(s.pid.Load()) }

// CPUTime is the processor time mariadbd has used so far (serverproc.CPUTime; 0 once stopped,
// or where /proc cannot say). A restart starts it again from 0.
func (s *Server) CPUTime() time.Duration { return serverproc.CPUTime(s.PID()) }

func (s *Server) logPath() string { return filepath.Join(s.dir, logName) }

func (s *Server) logTail() string { return serverproc.LogTail(s.logPath(), "mariadbd") }

// logCount counts the occurrences of sub in mariadbd's log.
func (s *Server) logCount(sub string) int {
	b, _ := os.ReadFile(s.logPath())
	return bytes.Count(b, []byte(sub))
}
