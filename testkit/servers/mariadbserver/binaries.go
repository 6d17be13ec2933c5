package mariadbserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// BinDirEnv names the environment variable that gives the installation to run when the caller
// names none (FindBinaries).
const BinDirEnv = "HOTSPOTKIT_MARIADB_BIN_DIR"

// Binaries is a located MariaDB installation.
type Binaries struct {
	// Server is mariadbd.
	Server string
	// InstallDB is mariadb-install-db, which initialises a data directory with Server.
	InstallDB string
	// Version is what Server says it is, e.g. "10.11.19-MariaDB-0+deb12u1".
	Version string
	// Source says how they were found: "flag", "env" or "PATH" (PATH, then Debian's places).
	Source string
}

// The programs' names: MariaDB's own since 10.5 (mysqld and mysql_install_db are links to them
// there, and Oracle's different programs elsewhere).
const (
	serverName    = "mariadbd"
	installDBName = "mariadb-install-db"
)

// ErrNotInstalled means no MariaDB installation was found.
var ErrNotInstalled = errors.New("MariaDB is not installed: no mariadbd and mariadb-install-db found (PATH, /usr/sbin, /usr/bin); install it (Debian: apt-get install mariadb-server) or set $" + BinDirEnv + " to its bin directory")

// FindBinaries locates mariadbd and mariadb-install-db: in dir when it is given (a flag), else
// in the directory $HOTSPOTKIT_MARIADB_BIN_DIR names, else on PATH and then where Debian's
// mariadb-server puts them (/usr/sbin/mariadbd, /usr/bin/mariadb-install-db). A directory is
// an installation's bin or sbin directory or its root (a tarball's: bin/, scripts/): each
// program is looked for in it, in its bin, sbin and scripts, and beside it (../bin, ../sbin).
// A directory that was given but holds neither is an error, never silently skipped; nothing
// found is ErrNotInstalled.
func FindBinaries(dir string) (Binaries, error) {
	source, what := "flag", "MariaDB directory"
	if dir == "" {
		dir, source, what = os.Getenv(BinDirEnv), "env", "$"+BinDirEnv
	}
	var b Binaries
	if dir != "" {
		places := []string{dir, filepath.Join(dir, "bin"), filepath.Join(dir, "sbin"), filepath.Join(dir, "scripts"),
			filepath.Join(dir, "..", "bin"), filepath.Join(dir, "..", "sbin")}
		b = Binaries{Server: firstExecutable(serverName, places), InstallDB: firstExecutable(installDBName, places), Source: source}
		for _, p := range []struct{ name, path string }{{serverName, b.Server}, {installDBName, b.InstallDB}} {
			if p.path == "" {
				return Binaries{}, fmt.Errorf("%s %s: no %s in it, its bin, sbin or scripts, or beside it", what, dir, p.name)
			}
		}
	} else {
		server, err := serverproc.FindBinary("", "", serverName, ErrNotInstalled, "/usr/sbin/"+serverName, "/usr/local/sbin/"+serverName)
		if err != nil {
			return Binaries{}, err
		}
		installDB, err := serverproc.FindBinary("", "", installDBName, ErrNotInstalled, "/usr/bin/"+installDBName, "/usr/local/bin/"+installDBName)
		if err != nil {
			return Binaries{}, err
		}
		b = Binaries{Server: server, InstallDB: installDB, Source: "PATH"}
	}
	var err error
	if b.Version, err = serverVersion(b.Server); err != nil {
		return Binaries{}, err
	}
	return b, nil
}

// firstExecutable is name in the first of dirs that holds it as an executable file ("" when
// none does).
func firstExecutable(name string, dirs []string) string {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			abs, _ := filepath.Abs(p)
			return filepath.Clean(abs)
		}
	}
	return ""
}

var versionRe = regexp.MustCompile(`\bVer (\S+)`)

// serverVersion is what `mariadbd --version` says: "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for
// debian-linux-gnu on x86_64 (Debian 12)" gives "10.11.19-MariaDB-0+deb12u1". A server that
// is not MariaDB's is refused here, before anything starts.
func serverVersion(server string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(server, "--no-defaults", "--version")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", server, err, strings.TrimSpace(out.String()))
	}
	m := versionRe.FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(m[1], "MariaDB") {
		return "", fmt.Errorf("%s is not MariaDB's server: it says %q", server, strings.TrimSpace(out.String()))
	}
	return m[1], nil
}
