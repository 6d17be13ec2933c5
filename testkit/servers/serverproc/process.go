package serverproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Instance is one server that its package runs itself (redis-server, pgbouncer, mariadbd; not
// PostgreSQL, which pg_ctl runs): its working directory, its process — started in a session of
// its own, so that a terminal's Ctrl-C reaches its owner and not it, and reaped as soon as it
// ends — and the watchdog that kills the process and removes the directory should the owner
// die without stopping it. It may be killed and launched again (a crash, a restart) until it
// is stopped. It is not safe for concurrent use: its server's lock guards it.
type Instance struct {
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed once cmd has ended and been reaped
	watchdog *Watchdog
	stopped  bool
}

// NewInstance is an instance working in dir, which Stop removes; nothing runs yet.
func NewInstance(dir string) *Instance { return &Instance{dir: dir} }

// Launch starts cmd in a session of its own as the instance's process. The watchdog is armed
// separately (Arm), once the process answers.
func (in *Instance) Launch(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	in.cmd, in.exited = cmd, exited
	return nil
}

// Exited is closed once the process last launched has ended and been reaped.
func (in *Instance) Exited() <-chan struct{} { return in.exited }

// Arm arms a watchdog (StartWatchdog) that SIGKILLs the process last launched, and the
// processes of its session (a script's children: a set-up step such as mariadb-install-db),
// and removes the directory, in place of the one armed before.
func (in *Instance) Arm() error {
	in.watchdog.Disarm()
	pid := in.cmd.Process.Pid
	w, err := StartWatchdog(fmt.Sprintf("kill -9 -%d %d 2>/dev/null\nrm -rf %s", pid, pid, ShellQuote(in.dir)))
	if err != nil {
		return fmt.Errorf("starting the watchdog of %s: %w", in.cmd.Path, err)
	}
	in.watchdog = w
	return nil
}

// startAttempts bounds LaunchOnFreePort's attempts.
const startAttempts = 3

// LaunchOnFreePort runs launch — which picks a port (FreePort), launches the process and waits
// until it answers — again while it fails with "Address already in use" (another process took
// the port between FreePort and the bind), 3 times at most, killing the process after each
// failure; then it arms the watchdog. ctx ending stops the attempts.
func (in *Instance) LaunchOnFreePort(ctx context.Context, launch func() error) error {
	var err error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if err = ctx.Err(); err != nil {
			return err
		}
		if err = launch(); err == nil {
			return in.Arm()
		}
		in.Kill()
		if !strings.Contains(err.Error(), "Address already in use") {
			return err
		}
	}
	return err
}

// PID is the process id (0 before the first launch and once stopped).
func (in *Instance) PID() int {
	if in.cmd == nil || in.stopped {
		return 0
	}
	return in.cmd.Process.Pid
}

// Running reports whether a process was launched and the instance is not stopped (the
// process may have been killed since).
func (in *Instance) Running() bool { return in.cmd != nil && !in.stopped }

// reapWait bounds how long Kill waits for the process to be reaped, and Stop for it to end.
const reapWait = 5 * time.Second

// Kill SIGKILLs the process and its session and waits until it is reaped (5s at most). The
// directory stays, for a launch again, and so does the watchdog, until Arm replaces it.
func (in *Instance) Kill() {
	if in.cmd == nil {
		return
	}
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	_ = in.cmd.Process.Kill()
	select {
	case <-in.exited:
	case <-time.After(reapWait):
	}
}

// Stop disarms the watchdog, asks the process to end (SIGTERM) and kills it when it has not
// within 5s (the error then says so, what naming it), and removes the directory. It is
// idempotent.
func (in *Instance) Stop(what string) error {
	if in.stopped {
		return nil
	}
	in.watchdog.Disarm()
	var err error
	if in.cmd != nil {
		_ = in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.exited:
		case <-time.After(reapWait):
			in.Kill()
			err = fmt.Errorf("%s did not stop on SIGTERM; it was killed", what)
		}
	}
	if rmErr := os.RemoveAll(in.dir); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	in.stopped = true
	return err
}

// LogTail is the end (4 KiB) of the log file at path for an error message: a line break, a
// line naming what's log, then the tail; "" when the file is empty or unreadable.
func LogTail(path, what string) string {
	b, _ := os.ReadFile(path)
	const keep = 4096
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return ""
	}
	return "\n--- " + what + " log (tail) ---\n" + t
}

// FindBinary returns the program to run: explicit, else the one $env names, else name in
// PATH, else the first of elsewhere that exists; notInstalled is the error when there is none.
func FindBinary(explicit, env, name string, notInstalled error, elsewhere ...string) (string, error) {
	if explicit == "" {
		explicit = os.Getenv(env)
	}
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("%s %s: %w", name, explicit, err)
		}
		return explicit, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range elsewhere {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", notInstalled
}

// ErrRootUser says that the user UnprivilegedUser was asked for is root.
var ErrRootUser = errors.New("is root")

// UnprivilegedUser is the user a server started by root runs as: name, or postgres if that
// user exists, else nobody. It returns the name it looked up, also with an error: one that
// says the user does not exist, or ErrRootUser.
func UnprivilegedUser(name string) (string, int, int, error) {
	if name == "" {
		name = "postgres"
		if _, err := user.Lookup(name); err != nil {
			name = "nobody"
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return name, 0, 0, fmt.Errorf("user %q does not exist", name)
	}
	if u.Uid == "0" {
		return name, 0, 0, fmt.Errorf("user %q %w", name, ErrRootUser)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return name, uid, gid, nil
}
