package engine

import (
	"context"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Standalone is a run outside an invocation, on target: for what seeds or writes through a
// suite without running its load (package pgbench seeds its server through one; suitetest
// hands one to a suite's own tests). It has no queue: its backend is Inline.
type Standalone struct {
	Mode     testkit.Mode
	Config   testkit.Config
	Slots    int
	Requests int64
	// Pool, when set, is the run's load pool (Run.Pool, what Run.SyncTx writes through): for a
	// benchmark of a suite's request path. Nil: the run has none.
	Pool sqldb.Pool
}

// Run is s's run on target.
func (s Standalone) Run(ctx context.Context, target database.Target) *testkit.Run {
	env := &runenv.Env{Mode: s.Mode.String(), Slots: s.Slots, Requests: s.Requests, Target: target, Pool: s.Pool, Context: ctx, Opener: backend.Inline{}}
	return testkit.NewRun(env, s.Mode, s.Config)
}
