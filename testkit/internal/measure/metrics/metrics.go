// Package metrics owns the live view of an invocation for Prometheus: an HTTP endpoint
// (--metrics-addr) serving the OpenMetrics / Prometheus text format, and a collector that
// turns the state of every run of the invocation into metrics when it is scraped.
//
// It costs the load nothing: no metric is incremented per request. At scrape time the
// collector reads what the engine keeps anyway — the load's live counters and histogram
// shards, the monitor's latest sample, the pool's statistics, the queue's counters and
// persist-lag histogram, the process's processor time — through the Source the engine hands
// it for each run. When a run ends, Finish reads its source one last time and keeps those
// values, so the endpoint shows every run of the invocation, final values for the finished
// ones, until it is closed.
//
// It must not change what it reads, and knows nothing of suites or SQL. Every metric name is
// listed (with its meaning) in Names and in the README.
package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// Labels identify a run; every metric carries them.
type Labels struct {
	Suite string
	Mode  string
	// Role is the process's --role: both, producer or consumer.
	Role  string
	Run   int // the run's index in the invocation, from 0
	Level int // the ladder's concurrency, 0 outside a ladder
	// Database is the kind of the run's database: postgres, mariadb or mysql (a ladder over
	// the kinds, --databases, has runs of each).
	Database string
}

func (l Labels) values() []string {
	return []string{l.Suite, l.Mode, l.Role, strconv.Itoa(l.Run), strconv.Itoa(l.Level), l.Database}
}

var labelNames = []string{"suite", "mode", "role", "run", "level", "database"}

// Pool is what the collector reads of a connection pool.
type Pool struct{ Acquired, Idle, Max int32 }

// Source is what the collector reads of one run at scrape time. Live is required; the
// other fields are nil when the run has no such part.
type Source struct {
	Labels Labels
	// Live has the requests completed, failed (by class) and in flight, and the latency and
	// connection-wait histograms.
	Live *load.Live
	// Monitor returns the monitor's latest sample: lock waiters by relation and by lock type,
	// outbox pending. The HotTables always have a lock-waiters series (0 when none wait).
	Monitor   func() results.Sample
	HotTables []string
	// Pool returns the load pool's connections now.
	Pool func() Pool
	// ClientCPU returns the processor time this process has used since the run began.
	ClientCPU func() time.Duration
	// Queue returns the async queue's counters; PersistLag its persist-lag histogram.
	Queue      func() results.QueueMetrics
	PersistLag func() *hist.Histogram
	// Stream returns the Redis stream's length and pending entries (Redis backend only).
	Stream func() *results.Stream
}

// Server serves the metrics of an invocation over HTTP.
type Server struct {
	ln        net.Listener
	srv       *http.Server
	collector *collector
	served    chan struct{}
}

// Listen binds addr (HOST:PORT; port 0 picks a free one) and serves /metrics on it until
// Close. Binding first means a bad address or a port in use is an error before anything else
// starts.
func Listen(addr string) (*Server, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--metrics-addr %q: want HOST:PORT (e.g. 127.0.0.1:9464, or port 0 for a free one)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	c := &collector{}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	s := &Server{ln: ln, collector: c, served: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the address the endpoint listens on (with the port picked for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the endpoint's address for a scraper.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops serving; a scrape in progress is cut off.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.served
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Watch starts showing a run; call Finish on the handle when the run is over (drained and
// counted), and the run's values stay as they were then.
func (s *Server) Watch(src Source) *Run {
	r := &Run{src: src}
	s.collector.mu.Lock()
	s.collector.runs = append(s.collector.runs, r)
	s.collector.mu.Unlock()
	return r
}

// Run is one run on the endpoint.
type Run struct {
	mu     sync.Mutex
	src    Source
	frozen []prometheus.Metric // set by Finish
}

// Finish reads the run's source one last time and keeps those values; the source is not read
// again. It is safe on a nil Run (metrics off).
func (r *Run) Finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen == nil {
		r.frozen = r.src.metrics(true)
	}
}

func (r *Run) metrics() []prometheus.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen != nil {
		return r.frozen
	}
	return r.src.metrics(false)
}

// collector is the prometheus.Collector of every run the server watches.
type collector struct {
	mu   sync.Mutex
	runs []*Run
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	runs := append([]*Run(nil), c.runs...)
	c.mu.Unlock()
	for _, r := range runs {
		for _, m := range r.metrics() {
			ch <- m
		}
	}
}
