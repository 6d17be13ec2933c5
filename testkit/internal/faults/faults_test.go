package faults

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want Fault
	}{
		{"terminate-backends@1s", Fault{Kind: TerminateBackends, At: time.Second}},
		{"pause-flush@2s+3s", Fault{Kind: PauseFlush, At: 2 * time.Second, For: 3 * time.Second}},
		{"lock-timeout=50", Fault{Kind: LockTimeout, Setting: 50}},
		{"crash-redis@1s", Fault{Kind: CrashRedis, At: time.Second, For: DefaultRedisDown}},
		{"crash-redis@1s+3s", Fault{Kind: CrashRedis, At: time.Second, For: 3 * time.Second}},
		{"crash-postgres@500ms", Fault{Kind: CrashPostgres, At: 500 * time.Millisecond}},
		{"kill-flusher@0s", Fault{Kind: KillFlusher}},
	}
	for _, c := range good {
		f, err := Parse(c.in)
		c.want.raw = c.in
		if err != nil || f != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, f, err, c.want)
		}
	}
	bad := map[string]string{
		"explode@1s":            `unknown fault "explode"`,
		"terminate-backends@x":  "not a duration",
		"pause-flush@1s":        "wants @T+D",
		"restart-postgres@1s+1": "only pause-flush and crash-redis take +D",
		"crash-postgres@1s+1s":  "only pause-flush and crash-redis take +D",
		"crash-redis@1s+0s":     "not a positive duration",
		"lock-timeout=0":        "positive number of milliseconds",
		"pause-flush=5":         "only statement-timeout and lock-timeout take =MS",
	}
	for in, want := range bad {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

func TestRotation(t *testing.T) {
	got := Rotation([]string{TerminateBackends, PauseFlush, CrashRedis}, 30*time.Second, 2*time.Minute)
	want := []string{"terminate-backends@30s", "pause-flush@1m0s+2s", "crash-redis@1m30s+1s"}
	if len(got) != len(want) {
		t.Fatalf("Rotation = %v, want %v", got, want)
	}
	for i, f := range got {
		if f.String() != want[i] {
			t.Errorf("fault %d = %s, want %s", i, f, want[i])
		}
		if p, err := Parse(f.String()); err != nil || p != f {
			t.Errorf("%s does not parse back to itself: %+v, %v", f, p, err)
		}
	}
	if Rotation(nil, time.Second, time.Minute) != nil || Rotation([]string{TerminateBackends}, 0, time.Minute) != nil {
		t.Error("Rotation without kinds or interval is not empty")
	}
}
