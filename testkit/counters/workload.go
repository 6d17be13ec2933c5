package counters

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Outbox is the outbox mode: the request writes its deltas to the outbox (InsertOutbox) and a
// flush loop applies them (OutboxWorkload).
var Outbox = testkit.FlushMode("outbox")

// Modes are the modes of a suite built on counters, in the order runs are reported.
var Modes = []testkit.Mode{testkit.Sync, Outbox, testkit.Async, testkit.AsyncCompact}

// OutboxWorkload is the outbox mode of a suite built on counters: op writes the request and
// its outbox rows (InsertOutbox) in one transaction, and the outbox flush loop, on its own
// connection, applies them to tables. Drain returns when the outbox is empty.
func OutboxWorkload(ctx context.Context, r *testkit.Run, tables []*Table, op testkit.Op) (*testkit.Workload, error) {
	connect := func(ctx context.Context) (sqldb.Conn, error) { return r.Connect(ctx, "hotspotkit-flush") }
	probe, err := connect(ctx) // fail before the load if the flusher cannot connect
	if err != nil {
		return nil, fmt.Errorf("outbox flusher connection: %w", err)
	}
	_ = probe.Close(ctx)
	o := NewOutbox(connect, tables, r.Config().FlushBatchSize, r.Config().FlushInterval)
	o.FlushTimeout = r.Config().RequestTimeout
	o.Start(r.Context())
	return &testkit.Workload{
		Op:         op,
		FlushLoop:  o,
		PendingSQL: OutboxPendingSQL,
		Drain:      o.Drain,
		Close: func() error {
			o.Stop()
			return o.Close(context.Background())
		},
	}, nil
}
