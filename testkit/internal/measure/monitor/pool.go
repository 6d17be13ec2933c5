package monitor

import (
	"database/sql"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Pool is the load's pool as the monitor reads it at each sample, whichever driver's it is.
type Pool interface {
	Stats() PoolStats
}

// PoolStats is one reading of a pool: its connections now, and its acquires so far.
type PoolStats struct {
	// Acquired connections are lent out; Idle ones wait in the pool; Max is its bound.
	Acquired, Idle, Max int32
	// Acquires counts the connections lent out so far; EmptyAcquires those that had to wait
	// for one (none was idle); CanceledAcquires the waits given up.
	Acquires, EmptyAcquires, CanceledAcquires int64
}

// PgxPool is pgxpool's pool as a Pool (nil for nil).
func PgxPool(p *pgxpool.Pool) Pool {
	if p == nil {
		return nil
	}
	return pgxPool{p}
}

type pgxPool struct{ p *pgxpool.Pool }

func (p pgxPool) Stats() PoolStats {
	st := p.p.Stat()
	return PoolStats{Acquired: st.AcquiredConns(), Idle: st.IdleConns(), Max: st.MaxConns(),
		Acquires: st.AcquireCount(), EmptyAcquires: st.EmptyAcquireCount(), CanceledAcquires: st.CanceledAcquireCount()}
}

// SQLPool is a database/sql pool as a Pool (nil for nil). database/sql counts no acquires:
// Acquires stays 0, EmptyAcquires is its WaitCount (the acquires that waited for a
// connection), and a wait given up is not counted.
func SQLPool(db *sql.DB) Pool {
	if db == nil {
		return nil
	}
	return sqlPool{db}
}

type sqlPool struct{ db *sql.DB }

func (p sqlPool) Stats() PoolStats {
	st := p.db.Stats()
	return PoolStats{Acquired: int32(st.InUse), Idle: int32(st.Idle), Max: int32(st.MaxOpenConnections),
		EmptyAcquires: st.WaitCount}
}
