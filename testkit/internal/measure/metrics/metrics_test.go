package metrics

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/metricstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// finishedLoad runs a load of n instant requests, one in a hundred failing.
func finishedLoad(t testing.TB, n int64) *load.Live {
	live := &load.Live{}
	_, err := load.Run(context.Background(), load.Config{Concurrency: 64, Requests: n, Live: live},
		func(_ context.Context, r *load.Request) error {
			if r.Index%100 == 0 {
				return io.EOF
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

func lagOf(n int) *hist.Histogram {
	h := hist.New()
	for i := range n {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	return h
}

func TestServerShowsRunsAndKeepsFinalValues(t *testing.T) {
	srv, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	live := finishedLoad(t, 1000)
	depth, serverWaits, cpu := int64(5), int64(7), 1500*time.Millisecond
	run := srv.Watch(Source{
		Labels: Labels{Suite: "s", Mode: "async", Role: "both", Run: 2, Level: 8, Database: "mariadb"},
		Live:   live,
		Monitor: func() results.Sample {
			return results.Sample{WaitersByLockType: map[string]int64{"tuple": 3}, ServerSessions: 16, ClientCPUShare: 0.375,
				ServerLockWaits: &serverWaits,
				Pooler:          &results.PoolerSample{ClientsActive: 40, ClientsWaiting: 24, ServersActive: 16, MaxWaitMs: 1500}}
		},
		HotTables:  []string{"api_keys"},
		Queue:      func() results.QueueMetrics { return results.QueueMetrics{Depth: depth, FlushedTotal: 7} },
		PersistLag: func() *hist.Histogram { return lagOf(100) },
		ClientCPU:  func() time.Duration { return cpu },
	})
	labels := []string{"suite=s", "mode=async", "role=both", "run=2", "level=8", "database=mariadb"}
	get := func() metricstest.Scrape {
		s, err := metricstest.Get(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := get()
	for name, want := range map[string]float64{
		RequestsCompleted: 990, RequestsFailed: 10, RequestDuration: 990, QueueDepth: 5, QueueFlushed: 7,
		PersistLag: 100, RunFinished: 0, ServerSessions: 16, PoolerClientsWaiting: 24, PoolerServersActive: 16, PoolerMaxWait: 1.5,
		ServerLockWaits: 7,
		ClientCPU:       1.5, ClientCPUShare: 0.375,
	} {
		if got, ok := s[metricstest.Series(name, labels...)]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, key := range []string{
		metricstest.Series(RequestErrors, append(labels, "class=conn_closed")...),
		metricstest.Series(LockWaitersByLockType, append(labels, "lock_type=tuple")...),
		metricstest.Series(LockWaitersByRelation, append(labels, "relation=api_keys")...),
	} {
		if _, ok := s[key]; !ok {
			t.Errorf("%s missing", key)
		}
	}
	run.Finish()
	depth, cpu = 99, time.Hour // read no more once finished
	s = get()
	if got := s[metricstest.Series(QueueDepth, labels...)]; got != 5 {
		t.Errorf("a finished run's depth changed to %v", got)
	}
	if got := s[metricstest.Series(ClientCPU, labels...)]; got != 1.5 {
		t.Errorf("a finished run's client CPU changed to %v", got)
	}
	if got := s[metricstest.Series(RunFinished, labels...)]; got != 1 {
		t.Errorf("run_finished = %v after Finish", got)
	}
}

func TestListenRefusesBadAddresses(t *testing.T) {
	if _, err := Listen("nonsense"); err == nil {
		t.Error("an address without a port was accepted")
	}
	busy, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if s, err := Listen(busy.Addr()); err == nil {
		s.Close()
		t.Error("a port in use was accepted")
	}
}

// BenchmarkScrape is the cost of one scrape of a run with full histograms: what
// --metrics-addr adds per scrape (nothing is added per request).
func BenchmarkScrape(b *testing.B) {
	srv, err := Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	lag := lagOf(100_000)
	srv.Watch(Source{Labels: Labels{Suite: "s", Mode: "async-compact", Role: "both"}, Live: finishedLoad(b, 200_000),
		Monitor: func() results.Sample { return results.Sample{} }, HotTables: []string{"a", "b", "c", "d"},
		Queue: func() results.QueueMetrics { return results.QueueMetrics{} }, PersistLag: func() *hist.Histogram { return lag.Clone() }})
	b.ResetTimer()
	for b.Loop() {
		resp, err := http.Get(srv.URL())
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
