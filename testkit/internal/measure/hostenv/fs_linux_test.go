package hostenv

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// FSType names the filesystem of every tmpfs and ext4 mount this process can see as the
// kernel's mount table does, and nothing for a path that does not exist.
func TestFSTypeAgreesWithTheMountTable(t *testing.T) {
	if got := FSType("/nonexistent-hotspotkit-dir"); got != "" {
		t.Errorf("FSType of a missing path = %q, want empty", got)
	}
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		dir, kind := fields[1], fields[2]
		if kind != "tmpfs" && kind != "ext4" || strings.Contains(dir, `\`) {
			continue // only the kinds named here; a mount point with an escaped space is skipped
		}
		got := FSType(dir)
		if got == "" {
			continue // not reachable from here (another mount namespace's, or no permission)
		}
		if got != kind {
			t.Errorf("FSType(%s) = %q, the mount table says %s", dir, got, kind)
		}
		seen[kind]++
	}
	if seen["tmpfs"] == 0 {
		t.Skip("no tmpfs mount visible")
	}
}
