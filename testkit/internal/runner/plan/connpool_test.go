package plan

import (
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// The pool's minimum and churn settings: typed, recorded, checked against --max-connections;
// a conn-storm's sessions bound and counted for the temporary server's room.
func TestPoolChurnSettings(t *testing.T) {
	p := parse(t, usagecounter.New(), "--max-connections 16 --min-connections 16 --conn-max-lifetime 300ms --conn-max-idle 2s")
	if p.ConnMaxLifetime != 300*time.Millisecond || p.ConnMaxIdle != 2*time.Second || p.MinConnections != 16 {
		t.Errorf("views: lifetime %s, idle %s, min %d", p.ConnMaxLifetime, p.ConnMaxIdle, p.MinConnections)
	}
	if rc := p.RunConfig(nil, 2000); rc.ConnMaxLifetimeMs != 300 || rc.ConnMaxIdleMs != 2000 || rc.MinConnections != 16 {
		t.Errorf("recorded: %+v", rc)
	}
	if p := parse(t, usagecounter.New(), ""); p.ConnMaxLifetime != 0 || p.ConnMaxIdle != 0 || p.MinConnections != 0 || p.StormSessions() != 0 {
		t.Errorf("defaults: lifetime %s, idle %s, min %d, storm %d; want all off", p.ConnMaxLifetime, p.ConnMaxIdle, p.MinConnections, p.StormSessions())
	}
	if n := parse(t, usagecounter.New(), "--fault conn-storm@1s=16 --fault conn-storm@2s").StormSessions(); n != 64 {
		t.Errorf("StormSessions of =16 and the default = %d, want 64 (the larger: they strike one at a time)", n)
	}
	if n := parse(t, usagecounter.New(), "--duration 10s --fault-every 2s").StormSessions(); n != 64 {
		t.Errorf("a soak's StormSessions = %d, want the rotation's 64", n)
	}
	refused(t, usagecounter.New(), "--max-connections 8 --min-connections 9", "--min-connections 9 is above --max-connections 8")
	refused(t, usagecounter.New(), "--min-connections -1", "--min-connections must not be negative")
	refused(t, usagecounter.New(), "--conn-max-lifetime -1s", "--conn-max-lifetime and --conn-max-idle must not be negative")
	refused(t, usagecounter.New(), "--fault conn-storm@1s=0", "must be a number from 1 to 1000")
	refused(t, usagecounter.New(), "--fault conn-storm@1s=1001", "must be a number from 1 to 1000")
	refused(t, usagecounter.New(), "--fault conn-storm@1s+2s", "is not a duration")
}
