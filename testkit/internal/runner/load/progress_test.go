package load

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
)

func showProgressOnAnyWriter(t *testing.T) {
	saved := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { isTerminal = saved })
}

func TestProgressOnATerminal(t *testing.T) {
	showProgressOnAnyWriter(t)
	out := &firstWrite{drawn: make(chan struct{})}
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: 400, Progress: out, ProgressLabel: "transfer"}, func(_ context.Context, r *Request) error {
		if r.Index == 0 {
			<-out.drawn // the run lasts until a tick has drawn a line before the final one
		}
		return nil
	})
	text := out.String()
	if n := strings.Count(text, "\r\x1b[K"); n < 2 {
		t.Errorf("progress output %q: %d lines drawn, want a tick's and the final one", text, n)
	}
	if !strings.HasPrefix(text, "\r\x1b[Ktransfer  ") || !strings.HasSuffix(text, "\n") {
		t.Fatalf("progress output %q: want redrawn lines ending in a newline", text)
	}
	final := text[strings.LastIndex(text, "\r\x1b[K")+len("\r\x1b[K"):]
	for _, want := range []string{"transfer  400/400", "req/s", "p95 "} {
		if !strings.Contains(final, want) {
			t.Errorf("final line %q lacks %q", final, want)
		}
	}
	if strings.Contains(final, "failed") {
		t.Errorf("final line %q shows failures of a clean run", final)
	}
	if res.Completed != 400 {
		t.Errorf("completed %d", res.Completed)
	}
}

func TestProgressDurationRunShowsWarmupAndFailures(t *testing.T) {
	showProgressOnAnyWriter(t)
	out := &signallingWriter{written: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The run is cancelled once a tick has been drawn, long before its warm-up is over.
	res := run(t, ctx, Config{Concurrency: 2, Duration: time.Hour, Warmup: 59 * time.Minute, Progress: out}, func(context.Context, *Request) error {
		select {
		case <-out.written:
			cancel()
		case <-time.After(time.Millisecond):
		}
		return io.EOF
	})
	text := out.String()
	for _, want := range []string{" done", "failed ", "/1h0m0s", "warm-up"} {
		if !strings.Contains(text, want) {
			t.Errorf("progress output %q lacks %q", text, want)
		}
	}
	if !res.Stopped {
		t.Error("not Stopped")
	}
}

// signallingWriter closes written on the first write.
type signallingWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{}
}

func (w *signallingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		close(w.written)
	}
	return w.buf.Write(p)
}

func (w *signallingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestNoProgressUnlessATerminal(t *testing.T) {
	var out bytes.Buffer
	run(t, context.Background(), Config{Concurrency: 2, Requests: 50, Progress: &out}, noop)
	if out.Len() != 0 {
		t.Errorf("wrote %q to a writer that is not a terminal", out.String())
	}
}

// Not on a terminal (a CI log, a pipe), progress comes as lines of their own every
// --progress-interval, pgbench -P style: no carriage returns, each line ended.
func TestProgressLinesWhereThereIsNoTerminal(t *testing.T) {
	out := &firstWrite{drawn: make(chan struct{})}
	run(t, context.Background(), Config{Concurrency: 2, Requests: 100, Progress: out, ProgressLabel: "sync", ProgressInterval: time.Millisecond},
		func(_ context.Context, r *Request) error {
			if r.Index == 0 {
				<-out.drawn // a tick's line is written before the final one
			}
			return nil
		})
	text := out.String()
	lines := strings.SplitAfter(text, "\n")
	if strings.Contains(text, "\r") || !strings.HasSuffix(text, "\n") || len(lines) < 3 {
		t.Fatalf("progress %q: want at least a tick's line and the final one, each its own line", text)
	}
	if final := lines[len(lines)-2]; !strings.HasPrefix(final, "sync  100/100  ") {
		t.Errorf("final line %q", final)
	}
}

// firstWrite is a buffer that closes drawn on its first write (no WriteString: io.WriteString
// must come through Write).
type firstWrite struct {
	buf   bytes.Buffer
	drawn chan struct{}
	once  sync.Once
}

func (w *firstWrite) Write(p []byte) (int, error) {
	defer w.once.Do(func() { close(w.drawn) })
	return w.buf.Write(p)
}

func (w *firstWrite) String() string { return w.buf.String() }

func TestDrainLineFollowsTheWrites(t *testing.T) {
	showProgressOnAnyWriter(t)
	out := &signallingWriter{written: make(chan struct{})}
	var mu sync.Mutex
	lag := hist.New()
	st := DrainStatus{Persisted: 100, Accepted: 1000, Waiting: 900}
	stop := ShowDrain(out, 0, "async-compact", func() DrainStatus {
		mu.Lock()
		defer mu.Unlock()
		s := st
		s.Lag = func() *hist.Histogram {
			mu.Lock()
			defer mu.Unlock()
			return lag.Clone()
		}
		return s
	})
	<-out.written // a tick drew the line
	mu.Lock()
	lag.Record(2 * time.Second)
	st.Persisted, st.Waiting = 1000, 0
	mu.Unlock()
	stop()
	text := out.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\r\x1b[K")
	first, final := lines[1], lines[len(lines)-1]
	if !strings.HasPrefix(first, "async-compact  drain  persisted 100/1,000  waiting 900") || strings.Contains(first, "lag") {
		t.Errorf("first line %q: want persisted 100/1,000, waiting 900 and no lag yet", first)
	}
	if !strings.HasPrefix(final, "async-compact  drain  persisted 1,000/1,000  waiting 0  lag p99 2.00 s") || !strings.HasSuffix(text, "\n") {
		t.Errorf("final line %q: want everything persisted and the lag of the records written", final)
	}
}
