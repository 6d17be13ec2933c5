package engine

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
)

// TestSignalName: the signal goroutine records the first signal while the invocation reads it
// (a signal that arrives as the runs end, read for the report): run under -race, a name kept
// in a plain field fails it. The first signal stops new requests without aborting; a second
// aborts.
func TestSignalName(t *testing.T) {
	hardCtx, hard := context.WithCancel(context.Background())
	defer hard()
	e := &engine{info: testkit.Info{Name: "suite"}, cfg: &plan.Plan{}, stderr: io.Discard, hardCtx: hardCtx}
	e.cfg.ShutdownTimeout = time.Hour
	sigs := make(chan os.Signal)
	stopped := make(chan struct{})
	handled := make(chan struct{})
	go func() {
		e.handleSignals(sigs, func() { close(stopped) }, hard)
		close(handled)
	}()
	read := make(chan string)
	go func() {
		name := ""
		for name == "" {
			name = e.signalName()
		}
		read <- name
	}()
	sigs <- syscall.SIGTERM
	if name := <-read; name != "SIGTERM" {
		t.Errorf("signal name %q, want SIGTERM", name)
	}
	<-stopped
	if hardCtx.Err() != nil {
		t.Error("the first signal aborted what was in flight")
	}
	sigs <- syscall.SIGINT
	close(sigs)
	<-handled
	if hardCtx.Err() == nil {
		t.Error("a second signal did not abort")
	}
	if name := e.signalName(); name != "SIGTERM" {
		t.Errorf("after a second signal the name is %q, want the first's", name)
	}
}
