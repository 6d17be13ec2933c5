package load

import (
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/term"
)

const progressEvery = 250 * time.Millisecond

// isTerminal decides whether progress is shown; a variable so tests can show it on a buffer.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress redraws one status line ("\r", clear to end of line) from the live counters and
// the latency shards, and ends it with a newline when the run is over.
type progress struct {
	w     io.Writer
	r     *runner
	stop  chan struct{}
	done  chan struct{}
	last  int64 // finished requests at the previous tick
	lastT time.Time
}

// startProgress returns a progress line that is running, or an inert one when progress is
// not wanted; finish is safe on both.
func startProgress(r *runner) *progress {
	if r.cfg.Progress == nil || !isTerminal(r.cfg.Progress) {
		return nil
	}
	p := &progress{w: r.cfg.Progress, r: r, stop: make(chan struct{}), done: make(chan struct{}), lastT: r.start}
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer close(p.done)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			io.WriteString(p.w, "\r\x1b[K"+p.line(now, false))
		case <-p.stop:
			io.WriteString(p.w, "\r\x1b[K"+p.line(time.Now(), true)+"\n")
			return
		}
	}
}

// finish draws the final line and waits until it is written.
func (p *progress) finish() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
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
		fmt.Fprintf(&b, "%d/%d", done, p.r.limit)
	} else {
		fmt.Fprintf(&b, "%d done", done)
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
	fmt.Fprintf(&b, "  %.0f req/s", rate)
	if now.Before(p.r.measureStart) {
		b.WriteString("  warm-up")
	} else if lat := p.r.latency.Merged(); lat.Count() > 0 {
		fmt.Fprintf(&b, "  p95 %.3fms", float64(lat.ValueAtQuantile(95).Microseconds())/1000)
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
