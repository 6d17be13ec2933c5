package pgserver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	embeddedpostgres "github.com/fergusstrange/embedded-postgres"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// BinDirEnv names the environment variable that plays the role of --pg-bin-dir.
const BinDirEnv = "HOTSPOTKIT_PG_BIN_DIR"

// Binaries is a located PostgreSQL installation.
type Binaries struct {
	// BinDir holds initdb, pg_ctl and postgres.
	BinDir string
	// Version is what `postgres --version` printed, e.g. "15.18".
	Version string
	// Major is the major version, e.g. 15.
	Major int
	// Source says how BinDir was found: "flag", "env", "pg_config", "PATH", "/usr/lib/postgresql" or "download".
	Source string
}

var requiredPrograms = []string{"initdb", "pg_ctl", "postgres"}

// FindBinaries locates PostgreSQL binaries in this order: dir (from --pg-bin-dir), the
// HOTSPOTKIT_PG_BIN_DIR environment variable, `pg_config --bindir`, initdb on PATH, the newest
// /usr/lib/postgresql/<major>/bin. A dir that was given explicitly but holds no binaries is
// an error, never silently skipped. It returns ErrNoLocalBinaries when nothing was found.
func FindBinaries(dir string) (Binaries, error) {
	if dir != "" {
		return checkBinDir(dir, "flag", "--pg-bin-dir")
	}
	if env := os.Getenv(BinDirEnv); env != "" {
		return checkBinDir(env, "env", BinDirEnv)
	}
	for _, c := range localCandidates() {
		if b, err := checkBinDir(c.dir, c.source, c.source); err == nil {
			return b, nil
		}
	}
	return Binaries{}, ErrNoLocalBinaries
}

// ErrNoLocalBinaries means no local PostgreSQL installation was found.
var ErrNoLocalBinaries = errors.New("no local PostgreSQL binaries found (tried pg_config --bindir, PATH and /usr/lib/postgresql/*/bin); install PostgreSQL or pass --pg-bin-dir")

type candidate struct{ dir, source string }

func localCandidates() []candidate {
	var out []candidate
	if pgConfig, err := exec.LookPath("pg_config"); err == nil {
		if b, err := exec.Command(pgConfig, "--bindir").Output(); err == nil {
			out = append(out, candidate{strings.TrimSpace(string(b)), "pg_config"})
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		out = append(out, candidate{filepath.Dir(initdb), "PATH"})
	}
	majors, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(majors, func(i, j int) bool { return versionOfDir(majors[i]) > versionOfDir(majors[j]) })
	for _, m := range majors {
		out = append(out, candidate{m, "/usr/lib/postgresql"})
	}
	return out
}

func versionOfDir(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// checkBinDir accepts either the bin directory itself or the installation root above it.
func checkBinDir(dir, source, what string) (Binaries, error) {
	dirs := []string{dir, filepath.Join(dir, "bin")}
	var missing string
	for _, d := range dirs {
		missing = ""
		for _, p := range requiredPrograms {
			if !isExecutable(filepath.Join(d, p)) {
				missing = p
				break
			}
		}
		if missing == "" {
			version, major, err := postgresVersion(filepath.Join(d, "postgres"))
			if err != nil {
				return Binaries{}, fmt.Errorf("%s %s: %w", what, dir, err)
			}
			abs, _ := filepath.Abs(d)
			return Binaries{BinDir: abs, Version: version, Major: major, Source: source}, nil
		}
	}
	return Binaries{}, fmt.Errorf("%s %s: no PostgreSQL binaries there (%s not found in it or in its bin/)", what, dir, missing)
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

var versionRe = regexp.MustCompile(`\(PostgreSQL\) (\d+)(\.\d+)?`)

// postgresVersion is what the postgres program says its version is, asked once per process
// and program (installationFact): a process finds its binaries more than once (the plan's
// check, then the engine's server).
func postgresVersion(postgres string) (string, int, error) {
	v := versions.of(postgres)
	return v.version, v.major, v.err
}

type versionAnswer struct {
	version string
	major   int
	err     error
}

var versions = installationFact[versionAnswer]{find: func(postgres string) versionAnswer {
	version, major, err := askVersion(postgres)
	return versionAnswer{version, major, err}
}}

// installationFact is a fact of a PostgreSQL installation found by running one of its
// programs, kept by path for the rest of the process: an exec costs 10 ms of CPU and more on a
// 2-core virtual machine, a test binary starts dozens of servers from one installation, and
// the installation does not change under a running process.
type installationFact[T any] struct {
	find    func(path string) T
	answers sync.Map // path → T
}

func (f *installationFact[T]) of(path string) T {
	if v, ok := f.answers.Load(path); ok {
		return v.(T)
	}
	v := f.find(path)
	f.answers.Store(path, v)
	return v
}

func askVersion(postgres string) (string, int, error) {
	var out bytes.Buffer
	cmd := exec.Command(postgres, "--version")
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("%s --version: %v: %s", postgres, err, strings.TrimSpace(out.String()))
	}
	m := versionRe.FindStringSubmatch(out.String())
	if m == nil {
		return "", 0, fmt.Errorf("cannot read the version from %q", strings.TrimSpace(out.String()))
	}
	major, _ := strconv.Atoi(m[1])
	return m[1] + m[2], major, nil
}

// embeddedVersion maps a major version onto embedded-postgres's version constant; the data
// directory check of embedded-postgres compares PG_VERSION with its prefix.
func embeddedVersion(major int) embeddedpostgres.PostgresVersion {
	switch major {
	case 18:
		return embeddedpostgres.V18
	case 17:
		return embeddedpostgres.V17
	case 16:
		return embeddedpostgres.V16
	case 15:
		return embeddedpostgres.V15
	case 14:
		return embeddedpostgres.V14
	case 13:
		return embeddedpostgres.V13
	case 12:
		return embeddedpostgres.V12
	default:
		return embeddedpostgres.PostgresVersion(fmt.Sprintf("%d.0.0", major))
	}
}

// DownloadConfig configures the last-resort download of binaries by embedded-postgres.
type DownloadConfig struct {
	// Version is the major version to download (default 16).
	Major int
	// CachePath holds downloaded archives (default ~/.embedded-postgres-go).
	CachePath string
	// RepositoryURL is the Maven repository (default embedded-postgres's, repo1.maven.org).
	RepositoryURL string
}

// Download fetches and extracts binaries through embedded-postgres's own mechanism into
// CachePath/hotspotkit-<version>/ and returns them. embedded-postgres only downloads as part
// of Start, so a throwaway server is started (or, as root, fails at initdb after extracting);
// either way the extracted bin directory is what is kept.
func Download(cfg DownloadConfig, tempParent string) (Binaries, error) {
	if cfg.Major == 0 {
		cfg.Major = 16
	}
	version := embeddedVersion(cfg.Major)
	cache := cfg.CachePath
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Binaries{}, err
		}
		cache = filepath.Join(home, ".embedded-postgres-go")
	}
	extract := filepath.Join(cache, "hotspotkit-"+string(version))
	if b, err := checkBinDir(extract, "download", "download"); err == nil {
		return b, nil
	}
	scratch, err := os.MkdirTemp(tempParent, "hotspotkit-pgfetch-")
	if err != nil {
		return Binaries{}, err
	}
	defer os.RemoveAll(scratch)
	port, err := serverproc.FreePort()
	if err != nil {
		return Binaries{}, err
	}
	c := embeddedpostgres.DefaultConfig().Version(version).Port(uint32(port)).
		CachePath(cache).BinariesPath(extract).RuntimePath(filepath.Join(scratch, "rt")).
		Logger(&bytes.Buffer{})
	if cfg.RepositoryURL != "" {
		c = c.BinaryRepositoryURL(cfg.RepositoryURL)
	}
	ep := embeddedpostgres.NewDatabase(c)
	startErr := withTempDir(scratch, ep.Start)
	if startErr == nil {
		_ = ep.Stop()
	}
	b, err := checkBinDir(extract, "download", "download")
	if err != nil {
		if startErr != nil {
			return Binaries{}, fmt.Errorf("downloading PostgreSQL %s: %w", version, startErr)
		}
		return Binaries{}, err
	}
	return b, nil
}
