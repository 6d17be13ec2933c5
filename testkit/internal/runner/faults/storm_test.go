package faults

import (
	"context"
	"os"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// stormTarget is a run whose only part a conn-storm uses is the service's path to a real
// PostgreSQL.
type stormTarget struct {
	Target // what a conn-storm does not call: nil
	db     *database.Postgres
}

func (t stormTarget) ConnectService(ctx context.Context, app string) (sqldb.Conn, error) {
	return t.db.Target().Connect(ctx, app)
}

// A conn-storm opens its sessions on the real server, each runs its statement, and all are
// closed: the event says how many opened, and the statements are counted as not the run's.
func TestConnStormOpensUsesAndClosesItsSessions(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	f, err := Parse("conn-storm@0s=8")
	if err != nil {
		t.Fatal(err)
	}
	in := &Injector{t: stormTarget{db: db}}
	in.inject(ctx, f)
	if len(in.events) != 1 {
		t.Fatalf("events: %+v", in.events)
	}
	ev := in.events[0]
	st := ev.Storm
	if ev.Error != "" || st == nil || st.Sessions != 8 || st.Opened != 8 || st.Failed != 0 {
		t.Fatalf("storm event %+v, storm %+v; want 8 of 8 opened, none failed", ev, st)
	}
	if st.OpenMaxMs < st.OpenMedianMs || st.OpenMedianMs <= 0 || st.TookMs < st.OpenMaxMs {
		t.Errorf("open times inconsistent: %+v", st)
	}
	if n := in.StormStatements(); n != 8 {
		t.Errorf("StormStatements = %d, want 8", n)
	}
	if got := len(db.TakeSessions()); got != 8 {
		t.Errorf("the target tracked %d sessions, want the storm's 8 (the run's figures wait for them to exit)", got)
	}
	// Opens that all fail (the run was over: its context cancelled): the event says so.
	over, cancel := context.WithCancel(ctx)
	cancel()
	in = &Injector{t: stormTarget{db: db}}
	in.inject(over, f)
	if ev := in.events[0]; ev.Error == "" || ev.Storm == nil || ev.Storm.Opened != 0 || ev.Storm.Failed != 8 {
		t.Errorf("a storm whose opens all failed: %+v %+v", ev, ev.Storm)
	}
	if n := in.StormStatements(); n != 0 {
		t.Errorf("StormStatements = %d after no session opened", n)
	}
}
