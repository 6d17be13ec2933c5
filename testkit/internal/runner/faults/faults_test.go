package faults

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
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
		{"conn-storm@5s", Fault{Kind: ConnStorm, At: 5 * time.Second, Sessions: DefaultStormSessions}},
		{"conn-storm@1s=16", Fault{Kind: ConnStorm, At: time.Second, Sessions: 16}},
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
		"restart-postgres@1s+1": "only pause-flush, pooler-pause and crash-redis take +D",
		"crash-postgres@1s+1s":  "only pause-flush, pooler-pause and crash-redis take +D",
		"crash-redis@1s+0s":     "not a positive duration",
		"lock-timeout=0":        "positive number of milliseconds",
		"pause-flush=5":         "only statement-timeout and lock-timeout take =MS",
		"conn-storm@1s=0":       "must be a number from 1 to 1000",
		"conn-storm@1s=-3":      "must be a number from 1 to 1000",
		"conn-storm@1s=many":    "must be a number from 1 to 1000",
		"conn-storm@soon":       "not a duration",
		"conn-storm=16":         "only statement-timeout and lock-timeout take =MS",
	}
	for in, want := range bad {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}

func TestRotation(t *testing.T) {
	got := Rotation([]string{TerminateBackends, PauseFlush, CrashRedis, ConnStorm}, 30*time.Second, 150*time.Second)
	want := []string{"terminate-backends@30s", "pause-flush@1m0s+2s", "crash-redis@1m30s+1s", "conn-storm@2m0s"}
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

// pathTarget is a run whose only part the network faults use is its path.
type pathTarget struct {
	Target // what network faults do not call: nil
	path   *recordingPath
}

func (t pathTarget) Path(string) (Path, error) { return t.path, nil }
func (t pathTarget) Mode() string              { return "sync" }

// recordingPath counts what the faults did to it.
type recordingPath struct {
	mu                           sync.Mutex
	delays, holes, resets, heals int
}

func (p *recordingPath) count(n *int) {
	p.mu.Lock()
	*n++
	p.mu.Unlock()
}
func (p *recordingPath) Delay(time.Duration, time.Duration) error { p.count(&p.delays); return nil }
func (p *recordingPath) Blackhole(time.Duration) error            { p.count(&p.holes); return nil }
func (p *recordingPath) Reset() int                               { p.count(&p.resets); return 0 }
func (p *recordingPath) Heal()                                    { p.count(&p.heals) }

// TestStopEndsTheNetworkFaultsInForce: a run's network faults end with it. Stop heals every
// path a windowed fault struck (an hour's blackhole and delay here), so that neither the
// closing of the run's connections nor the next run waits it out; a reset has no window.
func TestStopEndsTheNetworkFaultsInForce(t *testing.T) {
	var faults []Fault
	for _, s := range []string{"net-blackhole:pg@0s+1h", "net-delay:pg@0s+1h", "net-reset:pg@0s"} {
		f, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	p := &recordingPath{}
	in := Start(context.Background(), pathTarget{path: p}, faults)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		struck := p.holes + p.delays + p.resets
		p.mu.Unlock()
		if struck == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if p.heals != 0 {
		t.Fatalf("healed %d times before Stop", p.heals)
	}
	events := in.Stop()
	if len(events) != 3 || p.holes != 1 || p.delays != 1 || p.resets != 1 || p.heals != 2 {
		t.Errorf("after Stop: %+v, events %+v; want each fault struck once and the two windows healed", p, events)
	}
}

// The *-timeout faults' session settings in each dialect: PostgreSQL's in milliseconds;
// MariaDB's max_statement_time in seconds and InnoDB's lock wait timeout in whole seconds.
func TestSessionSettingsPerDialect(t *testing.T) {
	var fs []Fault
	for _, s := range []string{"statement-timeout=250", "lock-timeout=2000"} {
		f, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if got := SessionSettings(fs, sqldb.Postgres); !maps.Equal(got, map[string]string{"statement_timeout": "250", "lock_timeout": "2000"}) {
		t.Errorf("PostgreSQL: %v", got)
	}
	if got := SessionSettings(fs, sqldb.MySQL); !maps.Equal(got, map[string]string{"max_statement_time": "0.25", "innodb_lock_wait_timeout": "2"}) {
		t.Errorf("MySQL: %v", got)
	}
}
