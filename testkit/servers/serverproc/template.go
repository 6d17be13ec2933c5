package serverproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WithTemplate keeps one initialised data directory of a server (a template: a data directory
// and what goes with it, such as its password) at base, made once under a lock file
// (base.lock) that every process sharing base takes in turn, so that servers started for
// tests copy it instead of each initialising its own. When base does not exist yet, make fills
// a fresh, empty directory (base.new, on base's filesystem), which becomes base once make
// returns without error; then use reads base (copies it). Both run while the lock is held.
func WithTemplate(base string, make, use func(dir string) error) error {
	lock, err := os.OpenFile(base+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close() // and with it the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if _, err := os.Stat(base); errors.Is(err, fs.ErrNotExist) {
		next := base + ".new"
		if err := os.RemoveAll(next); err != nil {
			return err
		}
		if err := os.Mkdir(next, 0o700); err != nil {
			return err
		}
		if err := make(next); err != nil {
			return fmt.Errorf("making the template: %w", err)
		}
		if err := os.Rename(next, base); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return use(base)
}

// CheckReachable fails when some directory on the way to dir is not searchable by others, so
// that user (uid), who runs a server started by root, cannot reach it (a cheap check for the
// common /root/tmp case; group permissions are not considered).
func CheckReachable(dir string, uid int, user string) error {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != uid && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("directory %s is not searchable by others: user %s, who runs the server, cannot reach %s", d, user, dir)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
