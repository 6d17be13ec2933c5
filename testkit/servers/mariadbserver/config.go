package mariadbserver

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The values of innodb_flush_log_at_trx_commit (Config.FlushLogAtTrxCommit).
const (
	// FlushAtCommit writes and flushes the redo log at every commit: durable (the default).
	FlushAtCommit = "1"
	// WriteAtCommit writes the redo log at every commit and flushes it once a second: a
	// commit survives mariadbd's crash, not the machine's.
	WriteAtCommit = "2"
	// FlushEverySecond writes and flushes the redo log once a second: a crash of mariadbd
	// loses up to a second of commits (Config.Unsafe).
	FlushEverySecond = "0"
)

// Config describes the server to start. The zero value is usable.
type Config struct {
	// Binaries to run; when empty, FindBinaries("") is used.
	Binaries Binaries
	// User runs the server when the process is root: default mysql if it exists, else
	// postgres, else nobody (serverproc.UnprivilegedUser).
	User string
	// TempDir is where the working directory is created (default os.TempDir()); as root it
	// must be reachable by User (CheckDir).
	TempDir string
	// Database to create (default "hotspot"): letters, digits and _.
	Database string
	// Port to try first; when it is taken (or 0) a free loopback port is picked instead.
	Port int
	// MaxConnections is max_connections (default 151, MariaDB's). Start fails when mariadbd
	// cannot have that many (it lowers it itself when its open files limit is too low).
	MaxConnections int
	// BufferPoolMiB is innodb_buffer_pool_size in MiB (default 128, MariaDB's).
	BufferPoolMiB int
	// FlushLogAtTrxCommit is innodb_flush_log_at_trx_commit: FlushAtCommit (the default),
	// WriteAtCommit or FlushEverySecond.
	FlushLogAtTrxCommit string
	// Unsafe flushes the redo log once a second (FlushEverySecond) and turns the doublewrite
	// buffer off: fast, not durable.
	Unsafe bool
	// DeadlockDetectOff turns innodb_deadlock_detect off: a transaction waiting for a lock is
	// then never checked for a deadlock, and waits until innodb_lock_wait_timeout (error 1205).
	DeadlockDetectOff bool
	// LockWaitTimeout is innodb_lock_wait_timeout, in whole seconds (default 0: the server's
	// own, 50s; 0 itself, no wait, through Settings).
	LockWaitTimeout time.Duration
	// Settings are other server variables (name, with _ or -, to value), passed as
	// --name=value. They may not name what the fields above or the package itself set
	// (ManagedSettings).
	Settings map[string]string
	// StartTimeout bounds each set-up step and each start (default 30s).
	StartTimeout time.Duration
}

// ManagedSettings are the server variables that Start sets from Config's fields or for itself
// (its directory, its port, its socket, its files): Config.Settings may not name them.
var ManagedSettings = []string{
	"basedir", "bind_address", "datadir", "innodb_buffer_pool_size", "innodb_deadlock_detect",
	"innodb_doublewrite", "innodb_flush_log_at_trx_commit", "innodb_lock_wait_timeout",
	"log_bin", "log_error", "max_connections", "pid_file", "port", "skip_networking", "socket",
	"tmpdir", "user",
}

// simpleName is what the database's name may be; settingNameRe what a setting's may be.
var (
	simpleName    = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	settingNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// setDefaults fills in the defaults and checks the rest.
func (c *Config) setDefaults() error {
	if c.Database == "" {
		c.Database = "hotspot"
	}
	if !simpleName.MatchString(c.Database) {
		return fmt.Errorf("mariadb: database name %q: want letters, digits and _", c.Database)
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = 151
	}
	if c.BufferPoolMiB == 0 {
		c.BufferPoolMiB = 128
	}
	if c.MaxConnections < 1 || c.BufferPoolMiB < 1 || c.Port < 0 {
		return fmt.Errorf("mariadb: max connections %d, buffer pool %d MiB, port %d: want positive numbers", c.MaxConnections, c.BufferPoolMiB, c.Port)
	}
	switch {
	case c.Unsafe && c.FlushLogAtTrxCommit != "" && c.FlushLogAtTrxCommit != FlushEverySecond:
		return fmt.Errorf("mariadb: unsafe flushes the redo log once a second (innodb_flush_log_at_trx_commit=%s), not %s", FlushEverySecond, c.FlushLogAtTrxCommit)
	case c.Unsafe:
		c.FlushLogAtTrxCommit = FlushEverySecond
	case c.FlushLogAtTrxCommit == "":
		c.FlushLogAtTrxCommit = FlushAtCommit
	}
	if !slices.Contains([]string{FlushAtCommit, WriteAtCommit, FlushEverySecond}, c.FlushLogAtTrxCommit) {
		return fmt.Errorf("mariadb: innodb_flush_log_at_trx_commit %q: want 0, 1 or 2", c.FlushLogAtTrxCommit)
	}
	if c.LockWaitTimeout < 0 || c.LockWaitTimeout%time.Second != 0 {
		return fmt.Errorf("mariadb: lock wait timeout %s: want whole seconds (innodb_lock_wait_timeout)", c.LockWaitTimeout)
	}
	for name, value := range c.Settings {
		if slices.Contains(ManagedSettings, settingName(name)) {
			return fmt.Errorf("mariadb: setting %s is the temporary server's own (a field of its configuration, or its directory, port or files)", name)
		}
		if !settingNameRe.MatchString(name) || strings.ContainsAny(value, "\n\r\x00") {
			return fmt.Errorf("mariadb: setting %q=%q: want a variable's name and a value on one line", name, value)
		}
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 30 * time.Second
	}
	return nil
}

// settingName is a server variable's name as mariadbd reports it (with _, not -).
func settingName(name string) string { return strings.ReplaceAll(strings.ToLower(name), "-", "_") }

// serverSettings are the server variables mariadbd is started with (serverArgs adds its
// directory, port and files).
func (c *Config) serverSettings() map[string]string {
	onOff := func(on bool) string {
		if on {
			return "ON"
		}
		return "OFF"
	}
	s := map[string]string{
		"performance_schema":                  "ON",
		"character_set_server":                "utf8mb4",
		"collation_server":                    "utf8mb4_general_ci",
		"max_connections":                     strconv.Itoa(c.MaxConnections),
		"innodb_buffer_pool_size":             strconv.Itoa(c.BufferPoolMiB) + "M",
		"innodb_log_file_size":                redoLogSize,
		"innodb_flush_log_at_trx_commit":      c.FlushLogAtTrxCommit,
		"innodb_doublewrite":                  onOff(!c.Unsafe),
		"innodb_deadlock_detect":              onOff(!c.DeadlockDetectOff),
		"innodb_buffer_pool_dump_at_shutdown": "OFF", // a second of a stop for a cache nobody reloads
		"innodb_buffer_pool_load_at_startup":  "OFF",
		// The listen queue longer than the connections the server takes (MariaDB's own is
		// 80 + max_connections / 5, MySQL 8's max_connections): a pool that opens all its
		// connections at once (a service's after a restart) is not reset by the kernel for
		// an overflowing queue ("invalid connection" at the client).
		"back_log": strconv.Itoa(80 + c.MaxConnections),
	}
	if c.LockWaitTimeout > 0 {
		s["innodb_lock_wait_timeout"] = strconv.Itoa(int(c.LockWaitTimeout / time.Second))
	}
	for name, value := range c.Settings {
		s[settingName(name)] = value
	}
	return s
}
