package serverproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true; it names no single process", pid)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for Alive(pid) && time.Now().Before(deadline) { // exited, not reaped yet: a zombie
		time.Sleep(10 * time.Millisecond)
	}
	if Alive(pid) {
		t.Errorf("zombie %d counted alive", pid)
	}
	_ = cmd.Wait()
}

func TestShellQuoteIsOneWord(t *testing.T) {
	for _, s := range []string{"", "plain", "two words", "it's", `'"$HOME" \ ;`} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q): sh printed %q (%v)", s, out, err)
		}
	}
}

func TestFreePortAndRandomHex(t *testing.T) {
	if p, err := FreePort(); err != nil || p <= 0 {
		t.Errorf("FreePort() = %d, %v", p, err)
	}
	if a, b := RandomHex(16), RandomHex(16); len(a) != 32 || a == b {
		t.Errorf("RandomHex(16) gave %q then %q", a, b)
	}
}

type fakeServer struct {
	reg     *Registry[*fakeServer]
	stopped int
	err     error
}

func (f *fakeServer) Stop() error {
	f.stopped++
	f.reg.Remove(f)
	return f.err
}

func TestRegistryStopsWhatIsLive(t *testing.T) {
	var reg Registry[*fakeServer]
	boom := errors.New("boom")
	a, b, c := &fakeServer{reg: &reg}, &fakeServer{reg: &reg, err: boom}, &fakeServer{reg: &reg}
	reg.Add(a)
	reg.Add(b)
	reg.Add(c)
	_ = c.Stop()
	if err := reg.StopAll(); !errors.Is(err, boom) {
		t.Errorf("StopAll: %v, want the failing server's error", err)
	}
	if a.stopped != 1 || b.stopped != 1 || c.stopped != 1 {
		t.Errorf("stops: a %d, b %d, c %d; want one each", a.stopped, b.stopped, c.stopped)
	}
	if err := reg.StopAll(); err != nil {
		t.Errorf("second StopAll: %v", err)
	}
}

// The watchdog waits while its owner lives, Disarm ends it without its cleanup, and the end
// of the owner's hold on the pipe (here closed by hand; the kernel closes it when the owner
// dies, which the watchdog tests of pgserver and redisserver do with a real owner) sets the
// cleanup off at once.
func TestWatchdogFiresOnlyWhenTheOwnerEnds(t *testing.T) {
	dir := t.TempDir()
	start := func(name string) (*Watchdog, string) {
		mark := filepath.Join(dir, name)
		w, err := StartWatchdog("touch " + ShellQuote(mark))
		if err != nil {
			t.Fatal(err)
		}
		if !Alive(w.cmd.Process.Pid) {
			t.Fatalf("watchdog %d not running", w.cmd.Process.Pid)
		}
		return w, mark
	}
	disarmed, mark := start("disarmed")
	time.Sleep(200 * time.Millisecond)
	pid := disarmed.cmd.Process.Pid
	disarmed.Disarm()
	if Alive(pid) {
		t.Errorf("watchdog %d still running after Disarm", pid)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the watchdog ran its cleanup while its owner lived, or on Disarm")
	}
	(*Watchdog)(nil).Disarm()

	fired, mark := start("fired")
	_ = fired.w.Close()
	if err := fired.cmd.Wait(); err != nil {
		t.Fatalf("watchdog: %v", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the pipe's end did not set the cleanup off: %v", err)
	}
}

func TestUnprivilegedUser(t *testing.T) {
	if _, _, _, err := UnprivilegedUser("root"); !errors.Is(err, ErrRootUser) {
		t.Errorf("root: %v; want ErrRootUser", err)
	}
	if name, _, _, err := UnprivilegedUser("no-such-user-hotspotkit"); err == nil || name != "no-such-user-hotspotkit" {
		t.Errorf("a user that does not exist: %q, %v", name, err)
	}
	if name, uid, _, err := UnprivilegedUser(""); err == nil && (uid == 0 || (name != "postgres" && name != "nobody")) {
		t.Errorf("the default: %q uid %d", name, uid)
	}
}

func TestLogTailKeepsTheEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.log")
	if got := LogTail(p, "x"); got != "" {
		t.Errorf("no file: %q", got)
	}
	body := strings.Repeat("a", 5000) + "\nthe last line\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got := LogTail(p, "x")
	if !strings.HasPrefix(got, "\n--- x log (tail) ---\n") || !strings.HasSuffix(got, "the last line") || len(got) > 4096+40 {
		t.Errorf("LogTail = %q…", got[:60])
	}
}
