// Package hostenv describes the machine and build a report was measured on: CPU model and
// count, memory, OS, Go version, git revision, the machine class baselines are filed under,
// and the filesystem a directory is on (a temporary server's data: tmpfs or a disk). It
// probes the host (/proc, statfs, the build info, git) and knows nothing of databases or
// runs; the engine adds the database's side of the environment.
package hostenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/hotspotkit/hotspotkit/results"
)

// Host describes this machine and build (everything but the database).
func Host() results.Environment {
	host, _ := os.Hostname()
	mem := memoryBytes()
	env := results.Environment{
		GoVersion:   runtime.Version(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		NumCPU:      runtime.NumCPU(),
		CPUModel:    cpuModel(),
		MemoryBytes: mem,
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		Hostname:    host,
		PID:         os.Getpid(),
		GitRevision: gitRevision(),
	}
	env.MachineClass = MachineClass(env.OS, env.Arch, env.NumCPU, mem)
	return env
}

// MachineClass names a class of machines whose numbers are comparable, e.g.
// "linux-amd64-2cpu-24gib"; baselines are filed under it.
func MachineClass(goos, arch string, cpus int, memBytes uint64) string {
	gib := (memBytes + (1<<30)/2) >> 30
	return fmt.Sprintf("%s-%s-%dcpu-%dgib", goos, arch, cpus, gib)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memoryBytes() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// Revision is the source revision `make build` stamps into the binaries (-ldflags -X), so a
// binary run outside the checkout, on a machine whose go env sets -buildvcs=false, still
// names its revision.
var Revision string

// gitRevision is Revision when stamped, else the build's VCS stamp, else git in the working
// directory (go run builds with -buildvcs=false on some machines), else "unknown". It is
// found once per process: a process that runs many invocations (a test binary, which has no
// stamp) would otherwise run git twice for each, 32 ms of CPU a pair on a 2-core virtual
// machine, for the same answer.
var gitRevision = sync.OnceValue(findGitRevision)

func findGitRevision() string {
	if Revision != "" {
		return Revision
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "-dirty"
	}
	return rev
}
