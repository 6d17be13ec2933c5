package serverproc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's clock tick, the unit of /proc/PID/stat's times (USER_HZ, 100 on every
// architecture Go runs on).
const clockTick = 10 * time.Millisecond

// TreeCPUTime is the processor time, user and system, that process pid and its descendants
// have used so far: each live process's own, and that of the children each has waited for
// (/proc/PID/stat's utime, stime, cutime and cstime). A server's sessions that come and go
// are in it once each: while one lives in its own figures, once it has exited and been reaped
// in its parent's. ok is false when pid cannot be read.
func TreeCPUTime(pid int) (user, system time.Duration, ok bool) {
	if pid <= 0 {
		return 0, 0, false
	}
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		f, read := Stat(p)
		if !read || len(f) < 15 {
			if p == pid {
				return 0, 0, false
			}
			continue // exited since it was listed: its parent has it, or will
		}
		var t [4]int64
		for i := range t {
			t[i], _ = strconv.ParseInt(f[11+i], 10, 64)
		}
		user += time.Duration(t[0]+t[2]) * clockTick
		system += time.Duration(t[1]+t[3]) * clockTick
		queue = append(queue, children(p)...)
	}
	return user, system, true
}

// children lists pid's child processes: from each of its threads' children files where the
// kernel has them, else from a scan of every process's parent.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			return childrenByScan(pid)
		}
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// childrenByScan lists pid's children by reading every process's parent.
func childrenByScan(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := Stat(n); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// StartTime is when process pid started (/proc/PID/stat's starttime after the machine's boot
// time in /proc/stat), to the clock tick; ok is false when either cannot be read.
func StartTime(pid int) (time.Time, bool) {
	f, ok := Stat(pid)
	if !ok || len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for line := range bytes.Lines(b) {
		if rest, found := bytes.CutPrefix(line, []byte("btime ")); found {
			boot, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * clockTick), true
		}
	}
	return time.Time{}, false
}
