package load

import (
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results/units"
)

const progressEvery = 250 * time.Millisecond

// isTerminal decides whether progress is shown; a variable so tests can show it on a buffer.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// statusLine shows progress from draw: on a terminal, one line redrawn ("\r", clear to end of
// line) every progressEvery; elsewhere (a CI log, a pipe), pgbench -P style, one line of its
// own every interval. Either ends with the final line once finished.
type statusLine struct {
	w      io.Writer
	draw   func(now time.Time, final bool) string
	every  time.Duration
	redraw string // "\r\x1b[K" on a terminal, "" elsewhere
	end    string // what ends each tick's line: "" on a terminal (it is redrawn), "\n" elsewhere
	stop   chan struct{}
	done   chan struct{}
}

// startLine returns a status line that is running on w, or nil (inert) when w is nil, or not
// a terminal and interval is 0; finish is safe on both.
func startLine(w io.Writer, interval time.Duration, draw func(now time.Time, final bool) string) *statusLine {
	if w == nil {
		return nil
	}
	l := &statusLine{w: w, draw: draw, every: progressEvery, redraw: "\r\x1b[K", stop: make(chan struct{}), done: make(chan struct{})}
	if !isTerminal(w) {
		if interval <= 0 {
			return nil
		}
		l.every, l.redraw, l.end = interval, "", "\n"
	}
	go l.loop()
	return l
}

func (l *statusLine) loop() {
	defer close(l.done)
	tick := time.NewTicker(l.every)
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			io.WriteString(l.w, l.redraw+l.draw(now, false)+l.end)
		case <-l.stop:
			io.WriteString(l.w, l.redraw+l.draw(time.Now(), true)+"\n")
			return
		}
	}
}

// finish draws the final line and waits until it is written.
func (l *statusLine) finish() {
	if l == nil {
		return
	}
	close(l.stop)
	<-l.done
}

// progress is the load's status line, drawn from the live counters and the latency shards.
type progress struct {
	r     *runner
	last  int64 // finished requests at the previous tick
	lastT time.Time
}

// startProgress returns the load's status line, running when progress is wanted.
func startProgress(r *runner) *statusLine {
	p := &progress{r: r, lastT: r.start}
	return startLine(r.cfg.Progress, r.cfg.ProgressInterval, p.line)
}

// line is e.g. "transfer  1200/6000  3456 req/s  p95 12.345ms  failed 3  4.1s/30s"; the rate is
// over the last tick, or over the whole run on the final line.
func (p *progress) line(now time.Time, final bool) string {
	live := p.r.live
	done := live.Completed() + live.Failed()
	elapsed := now.Sub(p.r.start)
	var b strings.Builder
	if p.r.cfg.ProgressLabel != "" {
		b.WriteString(p.r.cfg.ProgressLabel + "  ")
	}
	if p.r.limit > 0 {
		b.WriteString(units.Count(float64(done)) + "/" + units.Count(float64(p.r.limit)))
	} else {
		b.WriteString(units.Count(float64(done)) + " done")
	}
	rate := 0.0
	if final {
		if s := elapsed.Seconds(); s > 0 {
			rate = float64(done) / s
		}
	} else if s := now.Sub(p.lastT).Seconds(); s > 0 {
		rate = float64(done-p.last) / s
	}
	p.last, p.lastT = done, now
	fmt.Fprintf(&b, "  %s req/s", units.RPS(rate))
	if now.Before(p.r.measureStart) {
		b.WriteString("  warm-up")
	} else if lat := p.r.latency.Merged(); lat.Count() > 0 {
		fmt.Fprintf(&b, "  p95 %s", units.Duration(float64(lat.ValueAtQuantile(95).Microseconds())/1000))
	}
	if failed := live.Failed(); failed > 0 {
		fmt.Fprintf(&b, "  failed %d", failed)
	}
	fmt.Fprintf(&b, "  %s", elapsed.Round(100*time.Millisecond))
	if p.r.cfg.Duration > 0 {
		fmt.Fprintf(&b, "/%s", p.r.cfg.Duration)
	}
	return b.String()
}

// DrainStatus is what the drain's status line shows.
type DrainStatus struct {
	// Persisted and Accepted count records written so far and records the run accepted
	// (Accepted 0: unknown here, e.g. a consumer whose producers run elsewhere).
	Persisted, Accepted int64
	// Waiting counts records accepted and not yet written.
	Waiting int64
	// Lag reads the persist-lag histogram so far (nil: not measured, e.g. the outbox). It is
	// read only where the line is drawn: an in-memory queue's is a merge of every worker's,
	// which the drain's stall watch, reading Persisted ten times a second, does not need.
	Lag func() *hist.Histogram
}

// ShowDrain shows a status line that follows a drain from status until the returned stop is
// called, as the load's progress is shown (on a terminal; elsewhere every interval, none when
// 0): e.g. "async-compact  drain  persisted 120000/200000  waiting 65536  lag p99 1.234s
// 2.1s", where the lag is that of the records written in the last tick (the whole drain's on
// the final line).
func ShowDrain(w io.Writer, interval time.Duration, label string, status func() DrainStatus) (stop func()) {
	start := time.Now()
	var prev *hist.Histogram
	var lastLag string
	l := startLine(w, interval, func(now time.Time, final bool) string {
		st := status()
		var b strings.Builder
		if label != "" {
			b.WriteString(label + "  ")
		}
		b.WriteString("drain  persisted " + units.Count(float64(st.Persisted)))
		if st.Accepted > 0 {
			b.WriteString("/" + units.Count(float64(st.Accepted)))
		}
		b.WriteString("  waiting " + units.Count(float64(st.Waiting)))
		if st.Lag != nil {
			lag := st.Lag()
			recent := lag
			if !final {
				recent = lag.Since(prev)
			}
			prev = lag
			if recent.Count() > 0 {
				lastLag = "  lag p99 " + units.Duration(float64(recent.ValueAtQuantile(99).Microseconds())/1000)
			}
			b.WriteString(lastLag)
		}
		fmt.Fprintf(&b, "  %s", now.Sub(start).Round(100*time.Millisecond))
		return b.String()
	})
	return l.finish
}
