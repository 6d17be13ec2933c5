package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// StormApp is the application_name of a conn-storm's sessions.
const StormApp = "hotspotkit-storm"

// connStorm opens n sessions at once through the service's path, as many replicas of a
// service starting together (a deploy, pods restarted) do; each runs one short statement, and
// once every open has succeeded or failed they are all closed at once. It returns what it saw:
// how many opened, how long the opens took, the first error; err when none opened.
func (in *Injector) connStorm(ctx context.Context, n int) (*results.ConnStorm, error) {
	t0 := time.Now()
	conns := make([]sqldb.Conn, n)
	opens := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			began := time.Now()
			conn, err := in.t.ConnectService(ctx, StormApp)
			opens[i] = time.Since(began)
			if err != nil {
				errs[i] = err
				return
			}
			conns[i] = conn
			if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
				errs[i] = fmt.Errorf("SELECT 1: %w", err)
			}
		})
	}
	wg.Wait()
	st := &results.ConnStorm{Sessions: n}
	var took []time.Duration
	for i, c := range conns {
		if c != nil {
			st.Opened++
			took = append(took, opens[i])
		}
		if errs[i] != nil {
			st.Failed++
			if st.FirstError == "" {
				st.FirstError = errs[i].Error()
			}
		}
	}
	in.mu.Lock()
	in.storms += int64(st.Opened) // each ran its statement, or failed it: a transaction of the server's
	in.mu.Unlock()
	closing := context.WithoutCancel(ctx)
	for _, c := range conns {
		if c != nil {
			wg.Go(func() { _ = c.Close(closing) })
		}
	}
	wg.Wait()
	st.TookMs = units.Ms(time.Since(t0))
	if len(took) > 0 {
		slices.Sort(took)
		st.OpenMedianMs, st.OpenMaxMs = units.Ms(took[len(took)/2]), units.Ms(took[len(took)-1])
	}
	if st.Opened == 0 {
		return st, errors.New("no session opened: " + st.FirstError)
	}
	return st, nil
}

// StormStatements is how many statements the run's conn-storms ran so far (one transaction of
// the server's each): not the run's work, as the monitor's are not.
func (in *Injector) StormStatements() int64 {
	if in == nil {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.storms
}
