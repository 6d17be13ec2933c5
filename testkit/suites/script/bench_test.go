package script

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hotspotkit/hotspotkit/examples/scripts"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// BenchmarkEvaluate is what recomputing one request of the usage-counter example costs: what
// every queued request costs the queue modes once or twice (when it is queued; when its batch
// is written and claimed, unless it is still cached).
func BenchmarkEvaluate(b *testing.B) {
	p := preparedExample(b, "usage-counter.sql", "usage-counter-init.sql", "hot_keys=1")
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		i += cacheSize // a miss every time
		if _, err := p.evaluate(i); err != nil {
			b.Fatal(err)
		}
	}
}

func preparedExample(b testing.TB, script, init string, sets ...string) *prepared {
	s := exampleOf(b, script, init, sets...)
	cfg := testkit.Config{Seed: 1, Concurrency: 8, Modes: []testkit.Mode{testkit.AsyncCompact}}
	if err := s.Validate(cfg); err != nil {
		b.Fatal(err)
	}
	target := testdb.New(b)
	p, err := prepare(context.Background(), s, testkit.PrepareEnv{Admin: sqldb.PgxConn(target.Admin()), Schema: target.Schema(), Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// exampleOf is the suite of a shipped example's script and init file (Of), written out.
func exampleOf(b testing.TB, script, init string, sets ...string) *Suite {
	dir := b.TempDir()
	for _, f := range []string{script, init} {
		data, err := scripts.Files.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return Of(filepath.Join(dir, script), filepath.Join(dir, init), sets...)
}

// BenchmarkSyncTx is one sync request of pgbench's TPC-B at scale 1 as a run drives it
// (suitetest.BenchRequests): the pool's acquire, BEGIN, the script's five statements, COMMIT;
// claimed, with the kit's claim sent beside the first statement, or as written (--as-written).
// Its allocs/op and cpu-µs/op are the client's cost of a transaction (ns/op is mostly the
// server's).
func BenchmarkSyncTx(b *testing.B) {
	for _, asWritten := range []bool{false, true} {
		for _, workers := range []int{1, 16} {
			b.Run(fmt.Sprintf("as-written=%t/workers=%d", asWritten, workers), func(b *testing.B) {
				s := exampleOf(b, "tpcb-like.sql", "tpcb-init.sql", "scale=1")
				s.asWritten = asWritten
				cfg := testkit.Config{Seed: 1, Concurrency: workers, Modes: []testkit.Mode{testkit.Sync}}
				suitetest.BenchRequests(b, s, testkit.Sync, cfg, workers)
			})
		}
	}
}

// TestDeltaMemo: deltas taken from the memo are the deltas evaluated afresh (the usage counter,
// whose UPDATEs bind 100 distinct tuples, hits it), and the memo switches itself off for
// TPC-B's UPDATE of a random account by a random amount.
func TestDeltaMemo(t *testing.T) {
	p := preparedExample(t, "usage-counter.sql", "usage-counter-init.sql", "hot_keys=1")
	const n = 3000
	memoized := make([]*evaluated, n)
	for i := range int64(n) {
		e, err := p.evaluate(i)
		if err != nil {
			t.Fatal(err)
		}
		memoized[i] = e
	}
	if h := p.memo.hits.Load(); h < n/2 {
		t.Errorf("%d memo hits in %d requests", h, n)
	}
	p.memo.off.Store(true)
	p.cache = [cacheSize]atomic.Pointer[evaluated]{}
	for i := range int64(n) {
		e, err := p.evaluate(i)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e.deltas, memoized[i].deltas) || !reflect.DeepEqual(e.keys, memoized[i].keys) {
			t.Fatalf("request %d: memoized %+v, evaluated %+v", i, memoized[i].deltas, e.deltas)
		}
	}

	tpcb := preparedExample(t, "tpcb-like.sql", "tpcb-init.sql", "scale=1")
	for i := range int64(memoTrial + 10) {
		if _, err := tpcb.evaluate(i); err != nil {
			t.Fatal(err)
		}
	}
	if !tpcb.memo.off.Load() {
		t.Errorf("the memo is still on for TPC-B")
	}
}

// TestArrayLiteral: an appended column's values, sent as one array literal, come back from the
// server as they were, whatever their text (quotes, backslashes, commas, braces, spaces, the
// word NULL, the empty string) and with NULLs where they were.
func TestArrayLiteral(t *testing.T) {
	target := testdb.New(t)
	values := []*string{ptr(`plain`), ptr(`a "quoted" word`), ptr(`back\slash\\`), ptr(`{braces},commas`), nil,
		ptr(` spaced `), ptr(`NULL`), ptr(``), ptr(`ünïcødé`)}
	b := []byte{'{'}
	for k, v := range values {
		if k > 0 {
			b = append(b, ',')
		}
		if v == nil {
			b = appendElement(b, "", true)
		} else {
			b = appendElement(b, *v, false)
		}
	}
	b = append(b, '}')
	var got []*string
	if err := target.Admin().QueryRow(context.Background(), `SELECT $1::text::text[]`, string(b)).Scan(&got); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !reflect.DeepEqual(got, values) {
		t.Errorf("%s came back as %s", b, texts(got))
	}
}

func ptr(s string) *string { return &s }

func texts(vs []*string) []string {
	out := make([]string, len(vs))
	for k, v := range vs {
		out[k] = "NULL"
		if v != nil {
			out[k] = strconv.Quote(*v)
		}
	}
	return out
}
