package script

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

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
	claim := p.syncClaim()
	unclaimed := p.unclaimed(r)
	return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		sc := p.execs.Get().(*scratch)
		defer p.execs.Put(sc)
		x := &sc.x
		if err := p.eval(i, x); err != nil {
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
				err = claimWith(ctx, tx, claim, i, st, sc)
			} else {
				err = run(ctx, tx, st, sc)
			}
			if err != nil && p.claimBy != nil && st.Command.Index == p.claimBy.cmd && sqldb.IsUniqueViolation(err) {
				return testkit.ErrAlreadyWritten // an earlier try inserted the request's claim row
			}
			if err != nil {
				return err
			}
		}
		if !claimed {
			if err := claimWith(ctx, tx, claim, i, nil, sc); err != nil {
				return err
			}
		}
		sleep(ctx, x.SleepAfter)
		return nil
	})}
}

// claimWith sends the claim of request i and statement st (nil: none) in one round trip; it
// returns testkit.ErrAlreadyWritten when an earlier try claimed the request.
func claimWith(ctx context.Context, tx sqldb.Tx, claim string, i int64, st *pgscript.Statement, sc *scratch) error {
	ptx, err := sqldb.RequirePgx(tx)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(claim, i)
	if st != nil {
		b.Queue(st.Command.SQL, sc.args(st)...)
	}
	br := ptx.SendBatch(ctx, &b)
	tag, err := br.Exec()
	if err != nil {
		br.Close()
		return fmt.Errorf("claiming request %d: %w", i, err)
	}
	if st != nil {
		rows, err := br.Query()
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			br.Close()
			return fmt.Errorf("line %d: %w", st.Command.Line, err)
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return testkit.ErrAlreadyWritten
	}
	return nil
}

// syncClaim is the claim of request $1 (its one part): it inserts nothing when the request was
// claimed before.
func (p *prepared) syncClaim() string {
	return `INSERT INTO counter_claims (request_index, part) VALUES ($1::int8, 0) ON CONFLICT DO NOTHING`
}

// run sends one statement of the script with its arguments and reads what it returns. The
// arguments go as text, as pgbench's extended and prepared modes send them: the server reads
// each as its parameter's type (an integer variable into a text column is '7').
func run(ctx context.Context, q sqldb.Querier, st *pgscript.Statement, sc *scratch) error {
	rows, err := q.Query(ctx, st.Command.SQL, sc.args(st)...)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		return fmt.Errorf("line %d: %w", st.Command.Line, err)
	}
	return nil
}

// args are st's arguments as text (nil: NULL), in sc's slice: valid until its next call.
func (sc *scratch) args(st *pgscript.Statement) []any {
	sc.argv = slices.Grow(sc.argv[:0], len(st.Args))[:len(st.Args)]
	for k, a := range st.Args {
		sc.argv[k] = nil
		if a.Kind() != pgscript.Null {
			sc.argv[k] = a.Text()
		}
	}
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
			err = p.reads(ctx, req, pool, sc)
		}
		p.execs.Put(sc)
		if err != nil {
			return err
		}
		return write(ctx, req)
	}
	return wl, nil
}

// reads runs a request's SELECTs at request time, on a connection of the load's pool (they
// read committed state: the request's writes are deferred), with its sleeps.
func (p *prepared) reads(ctx context.Context, req *testkit.Request, pool sqldb.Pool, sc *scratch) error {
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
		if p.stmts[st.Command.Index].Class != sqlshape.Select {
			continue
		}
		err := req.Try(ctx, func(ctx context.Context) error {
			if conn == nil {
				var err error
				if conn, err = req.Acquire(ctx, pool); err != nil {
					return err
				}
			}
			err := run(ctx, conn, st, sc)
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
