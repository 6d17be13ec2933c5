package testkit

// Mode is a write strategy a suite offers (--modes): a value that knows how its writes reach
// the database, so that the engine reads from it what a fault or a backend needs instead of
// keeping lists of mode names. A suite lists its modes in Info.Modes and switches on Run.Mode.
type Mode struct {
	name                     string
	async, compacts, flushes bool
}

// The modes every suite can offer; package counters adds its outbox (counters.Outbox).
var (
	// Sync writes everything in the request's own transaction (Run.SyncTx).
	Sync = Mode{name: "sync"}
	// Async enqueues the request's records; the queue's workers write them in batches,
	// uncompacted (AsyncWorkload).
	Async = Mode{name: "async", async: true, flushes: true}
	// AsyncCompact is Async with the records of one slot merged before the flush.
	AsyncCompact = Mode{name: "async-compact", async: true, compacts: true, flushes: true}
)

// FlushMode is a mode of a suite's own in which the request writes what a flush loop of its
// workload applies afterwards (Workload.FlushLoop, which a pause-flush fault pauses), as package
// counters' outbox does.
func FlushMode(name string) Mode { return Mode{name: name, flushes: true} }

// OwnMode is a mode of a suite's own whose work neither the async queue nor a Flusher of the
// workload does: the suite does it itself, typically through a client it does not own (package
// jobqueue's river mode runs River's client). The engine treats it as it treats Sync: no queue
// to report, nothing for pause-flush to pause.
func OwnMode(name string) Mode { return Mode{name: name} }

// String is the mode's name, as --modes and the report spell it.
func (m Mode) String() string { return m.name }

// Async reports whether the mode goes through the async queue (AsyncWorkload).
func (m Mode) Async() bool { return m.async }

// Compacts reports whether the queue merges the records of one slot before it flushes them.
func (m Mode) Compacts() bool { return m.compacts }

// Flushes reports whether the mode's writes are applied after the request by flushers (the
// queue's workers, or the workload's Flusher), which a pause-flush fault can stop.
func (m Mode) Flushes() bool { return m.flushes }

// ModeNames are the names of modes, in order.
func ModeNames(modes []Mode) []string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.name
	}
	return names
}
