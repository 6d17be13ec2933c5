package results

import (
	"io"
	"os"
	"path/filepath"
)

// NotAFile reports whether path names something that exists and is neither a regular file nor
// a directory: a device (/dev/null, /dev/stdout) or a named pipe. Output given such a path is
// written into it as it is (never renamed over it: as root that would replace /dev/null with
// a file), and no samples file is put beside it.
func NotAFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// WriteFile writes what write writes to path atomically: to a temporary file beside it, made
// readable (0644), then renamed over path, so a reader never sees half of it (a report, an
// A/B's JSON, a page of plots). Into a device or a pipe (NotAFile) it writes directly.
func WriteFile(path string, write func(io.Writer) error) error {
	if NotAFile(path) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // CreateTemp makes it private
		return err
	}
	return os.Rename(tmp.Name(), path)
}
