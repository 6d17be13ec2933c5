package script

import (
	"hash/maphash"
	"slices"
	"sync/atomic"

	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
)

// deltaMemo remembers a request's deltas by the values bound to its UPDATEs: the deltas are a
// function of them alone, and a hot-row script binds few distinct ones (the usage counter's
// hot set and response time: 100 tuples in all), so most requests share deltas already
// worked out (they are never changed: Delta.Merge copies before it folds, the core stamps a
// copy) instead of evaluating the SET lists again and allocating their own. It is
// direct-mapped (a newer tuple replaces the one in its place) and switches itself off when
// its first lookups mostly miss, as for TPC-B's random account and amount, where it would
// only add a hash and an allocation per request.
type deltaMemo struct {
	seed    maphash.Seed
	entries [memoSize]atomic.Pointer[memoEntry]
	lookups atomic.Int64 // the first memoTrial lookups
	hits    atomic.Int64 // of those, the hits
	off     atomic.Bool
}

type memoEntry struct {
	args   []pgscript.Value
	deltas []counters.Delta
	keys   []counters.Key // the request's record key (prepared.recordKeys)
}

const (
	memoSize = 1024
	// memoTrial lookups decide whether the memo pays: it stays on when at least a quarter of
	// them hit.
	memoTrial = 4096
)

func newDeltaMemo() *deltaMemo { return &deltaMemo{seed: maphash.MakeSeed()} }

func (m *deltaMemo) slot(args []pgscript.Value) *atomic.Pointer[memoEntry] {
	var h maphash.Hash
	h.SetSeed(m.seed)
	for _, a := range args {
		maphash.WriteComparable(&h, a)
	}
	return &m.entries[h.Sum64()&(memoSize-1)]
}

// get is what is remembered for args, if anything; slot is where put keeps it (nil when the
// memo is off).
func (m *deltaMemo) get(args []pgscript.Value) (e *memoEntry, slot *atomic.Pointer[memoEntry]) {
	if m.off.Load() {
		return nil, nil
	}
	slot = m.slot(args)
	trial := m.lookups.Load() < memoTrial // counted only until the memo is judged
	if trial {
		if n := m.lookups.Add(1); n == memoTrial && m.hits.Load() < memoTrial/4 {
			m.off.Store(true)
		}
	}
	if e := slot.Load(); e != nil && slices.Equal(e.args, args) {
		if trial {
			m.hits.Add(1)
		}
		return e, slot
	}
	return nil, slot
}

// put remembers e for args in slot (get's).
func (m *deltaMemo) put(slot *atomic.Pointer[memoEntry], args []pgscript.Value, e *memoEntry) {
	if slot != nil {
		e.args = slices.Clone(args)
		slot.Store(e)
	}
}
