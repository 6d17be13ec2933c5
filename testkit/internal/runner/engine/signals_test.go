package engine

import (
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
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

// TestUnreachableReasonSaysWhatEndedTheWait: after the load, the wait for a PostgreSQL that no
// longer answers (a real one, stopped) ends at --reconcile-timeout, and the run's unverified
// reason names that bound; a SIGTERM that cuts the wait short is named instead, with how long
// the wait lasted, not the bound it never reached.
func TestUnreachableReasonSaysWhatEndedTheWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := pgserver.Start(ctx, pgserver.Config{Unsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	target, err := database.Open(ctx, database.Options{URL: srv.DSN(), KeepSchema: true})
	if err != nil {
		_ = srv.Stop()
		t.Fatal(err)
	}
	defer target.CloseWithin(time.Second)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r := &run{backend: backend.Inline{}}
	newEngine := func() (*engine, context.CancelFunc) {
		hardCtx, hard := context.WithCancel(context.Background())
		e := &engine{info: testkit.Info{Name: "suite"}, cfg: &plan.Plan{}, stderr: io.Discard, hardCtx: hardCtx, target: target.Target(), db: postgres{target: target}}
		e.cfg.ShutdownTimeout = 100 * time.Millisecond
		return e, hard
	}
	reason := func(err error) string {
		t.Helper()
		var u *unreachableError
		if !errors.As(err, &u) {
			t.Fatalf("awaitPaths: %v, want an unreachable server", err)
		}
		return u.reason()
	}

	t.Run("the bound ends it", func(t *testing.T) {
		e, hard := newEngine()
		defer hard()
		post, cancelPost := e.postLoad()
		defer cancelPost()
		got := reason(e.awaitPaths(post, r, 2*time.Second))
		if want := "PostgreSQL did not answer for 2s after the run (--reconcile-timeout): "; !strings.HasPrefix(got, want) {
			t.Errorf("reason %q, want it to begin %q", got, want)
		}
	})

	t.Run("SIGTERM ends it", func(t *testing.T) {
		e, hard := newEngine()
		sigs := make(chan os.Signal, 1)
		handled := make(chan struct{})
		go func() { e.handleSignals(sigs, func() {}, hard); close(handled) }()
		defer func() { close(sigs); <-handled; hard() }()
		post, cancelPost := e.postLoad()
		defer cancelPost()
		time.AfterFunc(time.Second, func() { sigs <- syscall.SIGTERM })
		began := time.Now()
		err := e.awaitPaths(post, r, time.Minute)
		took := time.Since(began)
		got := reason(err)
		m := regexp.MustCompile(`^PostgreSQL did not answer for (\S+) after the run: SIGTERM ended the wait \(--reconcile-timeout 1m0s\): `).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("reason %q does not say that SIGTERM ended the wait, and when", got)
		}
		waited, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		// The signal after 1 s, --shutdown-timeout's 100 ms, then abortedBound.
		if lo := time.Second + abortedBound; waited < lo || waited > took+100*time.Millisecond {
			t.Errorf("the reason says it waited %s; it waited %s, and at least %s", waited, took, lo)
		}
	})
}
