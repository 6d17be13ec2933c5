package script

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// syncWorkload runs the script as written: one transaction per request (the kit's: the
// script's own BEGIN and END are left out). The transaction also claims the request — by the
// script's own INSERT where it claims (ownClaim), else in the kit's claim table with one
// statement sent with the script's first (no round trip of its own) — so that a
// try after a COMMIT whose outcome was lost finds its request written and writes nothing
// twice (Run.SyncTx's contract). As written (--as-written), the kit's claim is left out: the
// transaction is the script's statements alone, as pgbench sends them, and a run that needs
// the claim (retries, faults) was refused.
func (p *prepared) syncWorkload(r *testkit.Run) *testkit.Workload {
	unclaimed := p.unclaimed(r)
	if unclaimed && p.autocommit() {
		return p.autocommitWorkload(r)
	}
	return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		sc := p.execs.Get().(*scratch)
		defer p.execs.Put(sc)
		x := &sc.x
		if err := p.eval(i, x); err != nil {
			return err
		}
		if err := p.sql.recompute(i); err != nil {
			return err
		}
		claimed := p.claimBy != nil || unclaimed // the script's own INSERT claims the request, or nothing does
		for k := range x.Statements {
			st := &x.Statements[k]
			sleep(ctx, st.SleepBefore)
			if p.stmts[st.Command.Index].Class == sqlshape.TxControl {
				continue
			}
			var err error
			if !claimed {
				claimed = true
				err = p.sql.claimSync(ctx, tx, i, st, sc)
			} else {
				err = p.run(ctx, tx, st, sc)
			}
			if err != nil && p.claimBy != nil && st.Command.Index == p.claimBy.cmd && sqldb.IsUniqueViolation(err) {
				return testkit.ErrAlreadyWritten // an earlier try inserted the request's claim row
			}
			if err != nil {
				return err
			}
		}
		if !claimed {
			if err := p.sql.claimSync(ctx, tx, i, nil, sc); err != nil {
				return err
			}
		}
		sleep(ctx, x.SleepAfter)
		return nil
	})}
}

// autocommit says the script is one statement and no BEGIN or END of its own: run as written,
// pgbench sends it alone, in autocommit (one round trip, no transaction around it), and so
// does the kit (autocommitWorkload).
func (p *prepared) autocommit() bool {
	n := 0
	for _, st := range p.stmts {
		switch st.Class {
		case sqlshape.TxControl:
			return false
		case sqlshape.Select:
		default:
			n++
		}
	}
	return n == 1 && len(p.stmts) == 1
}

// autocommitWorkload is sync as written for a script of one statement (autocommit): the
// statement alone on a connection of the load's pool, in autocommit, as pgbench sends it. Its
// effect is atomic by itself; without a claim, a request whose outcome was not known is a check
// not made, as in every run as written.
func (p *prepared) autocommitWorkload(r *testkit.Run) *testkit.Workload {
	pool := r.Pool()
	return &testkit.Workload{Op: func(ctx context.Context, req *testkit.Request) error {
		sc := p.execs.Get().(*scratch)
		defer p.execs.Put(sc)
		if err := p.eval(req.Index, &sc.x); err != nil {
			return err
		}
		if err := p.sql.recompute(req.Index); err != nil {
			return err
		}
		return p.onPool(ctx, req, pool, sc, func(sqlshape.Class) bool { return true })
	}}
}

// run sends one statement of the script with its arguments (as the dialect sends them, in
// sc's slice) and reads what it returns.
func (p *prepared) run(ctx context.Context, q sqldb.Querier, st *pgscript.Statement, sc *scratch) error {
	rows, err := q.Query(ctx, st.Command.SQL, p.args(st, sc)...)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		return fmt.Errorf("line %d: %w", st.Command.Line, err)
	}
	return nil
}

// args are st's arguments as the dialect sends them, in sc's slice: valid until its next call.
func (p *prepared) args(st *pgscript.Statement, sc *scratch) []any {
	sc.argv = p.sql.args(slices.Grow(sc.argv[:0], len(st.Args))[:len(st.Args)], st)
	return sc.argv
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// queueWorkload is a queue mode's request: its SELECTs (and sleeps) at request time, then its
// writes deferred by package counters. A request the script cannot be evaluated for fails
// before anything of it is queued.
func (p *prepared) queueWorkload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	wl, err := p.core.Workload(ctx, r)
	if err != nil {
		return nil, err
	}
	write := wl.Op
	pool := r.Pool()
	wl.Op = func(ctx context.Context, req *testkit.Request) error {
		if len(p.selects) == 0 && !p.sleeps {
			if _, err := p.evaluate(req.Index); err != nil {
				return err
			}
			return write(ctx, req)
		}
		// One execution of the script for both: the request's deltas, then its SELECTs.
		sc := p.execs.Get().(*scratch)
		err := p.eval(req.Index, &sc.x)
		if err == nil {
			_, err = p.evaluateFrom(req.Index, sc)
		}
		if err == nil {
			err = p.onPool(ctx, req, pool, sc, isSelect)
		}
		p.execs.Put(sc)
		if err != nil {
			return err
		}
		return write(ctx, req)
	}
	return wl, nil
}

// isSelect picks a request's SELECTs (onPool): a queue mode runs them at request time.
func isSelect(c sqlshape.Class) bool { return c == sqlshape.Select }

// onPool runs the statements of a request that run picks, in autocommit on one connection of the
// load's pool, with the script's sleeps: a queue mode's SELECTs at request time (they read
// committed state: the request's writes are deferred), or a one-statement script as written.
func (p *prepared) onPool(ctx context.Context, req *testkit.Request, pool sqldb.Pool, sc *scratch, run func(sqlshape.Class) bool) error {
	x := &sc.x
	var conn sqldb.PoolConn
	defer func() {
		if conn != nil {
			conn.Release()
		}
	}()
	for k := range x.Statements {
		st := &x.Statements[k]
		sleep(ctx, st.SleepBefore)
		if !run(p.stmts[st.Command.Index].Class) {
			continue
		}
		err := req.Try(ctx, func(ctx context.Context) error {
			if conn == nil {
				var err error
				if conn, err = req.Acquire(ctx, pool); err != nil {
					return err
				}
			}
			err := p.run(ctx, conn, st, sc)
			if err != nil && conn.IsClosed() {
				conn.Release()
				conn = nil
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	sleep(ctx, x.SleepAfter)
	return nil
}
