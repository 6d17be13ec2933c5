// Package serverproc owns the process plumbing that the temporary servers of a run
// (testkit/servers/pgserver, testkit/servers/redisserver, testkit/servers/pgbouncer,
// testkit/servers/mariadbserver) share: a free loopback port, a random password, whether a
// process is alive, shell quoting, the unprivileged user a server started by root runs as and
// whether it can reach a directory, the watchdog that cleans up after an owner that died
// without stopping its server, the registry of live servers that StopAll stops from a signal
// or panic path, (process.go) a server process its package runs itself — launched in its own
// session, killed, launched again, stopped, its directory removed — and its log's tail for
// errors, and (template.go) the one initialised data directory that test runs copy for each
// server instead of initialising one each. It knows nothing about any particular server: how
// one is configured, started and found ready is its package's business, handed to this one
// as a command, a Stop method or a shell script.
package serverproc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another process may
// take it before the server binds it: callers retry on a collision.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RandomHex returns n random bytes as 2n hex digits (passwords, names).
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Alive reports whether pid is a running process (a zombie waiting to be reaped is not).
// A pid below 1 names no single process and is never alive.
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	f, ok := Stat(pid)
	return !ok || len(f) == 0 || f[0] != "Z"
}

// Stat is /proc/PID/stat's fields after the command name (state, ppid, …, utime is f[11],
// stime f[12]): the name, in parentheses, may itself hold ") ", so they are read after its
// last ')'. ok is false when the file cannot be read.
func Stat(pid int) (f []string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])), true
}

// CPUTime is the processor time, user and system, pid has used so far (/proc/PID/stat, in
// Linux's clock ticks of 10 ms); 0 when it cannot be read.
func CPUTime(pid int) time.Duration {
	f, ok := Stat(pid)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// ShellQuote quotes s as one word for /bin/sh.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Watchdog is a tiny shell, in its own session, that waits for this process to end and then
// runs a cleanup script. Disarm it when the server is stopped in order; it only acts when
// this process died without stopping the server (SIGKILL, a crash in another goroutine), so
// that even then nothing is left running or on disk.
//
// It learns of the end without polling: its standard input is a pipe whose only writer is
// this process, and the kernel closes that end when the process ends, however it ends; the
// shell's read then returns. (Asking every second whether the process is alive would fork and
// execute a sleep once a second for each server, about 4 ms of CPU each on a 2-core virtual
// machine, inside every measured window.)
type Watchdog struct {
	cmd *exec.Cmd
	w   *os.File // the pipe's write end, held open until Disarm
}

// StartWatchdog arms a watchdog that runs cleanup, a /bin/sh script, once this process has
// ended.
func StartWatchdog(cleanup string) (*Watchdog, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child of this process holds the write end
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", "read _ 2>/dev/null\n"+cleanup)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &Watchdog{cmd: cmd, w: w}, nil
}

// Disarm stops the watchdog without running its cleanup: the shell is killed before the
// pipe's write end is closed, which would set it off. It is idempotent; a nil Watchdog is
// already disarmed. It is not safe for concurrent use: the server's Stop holds its lock.
func (w *Watchdog) Disarm() {
	if w == nil || w.cmd == nil {
		return
	}
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
	_ = w.w.Close()
	w.cmd, w.w = nil, nil
}

// Stopper is a server that can be stopped (its pointer, usually); Stop must be idempotent.
type Stopper interface {
	comparable
	Stop() error
}

// Registry is the set of servers of one kind that this process started and has not stopped
// yet. The zero value is ready to use; it is safe for concurrent use.
type Registry[S Stopper] struct {
	mu   sync.Mutex
	live map[S]struct{}
}

// Add records a server that is starting.
func (r *Registry[S]) Add(s S) {
	r.mu.Lock()
	if r.live == nil {
		r.live = map[S]struct{}{}
	}
	r.live[s] = struct{}{}
	r.mu.Unlock()
}

// Remove forgets a server that has stopped.
func (r *Registry[S]) Remove(s S) {
	r.mu.Lock()
	delete(r.live, s)
	r.mu.Unlock()
}

// StopAll stops every server still recorded and returns their errors joined. Stop is
// expected to Remove its server; StopAll does not hold the lock while it runs.
func (r *Registry[S]) StopAll() error {
	r.mu.Lock()
	servers := make([]S, 0, len(r.live))
	for s := range r.live {
		servers = append(servers, s)
	}
	r.mu.Unlock()
	var err error
	for _, s := range servers {
		err = errors.Join(err, s.Stop())
	}
	return err
}
