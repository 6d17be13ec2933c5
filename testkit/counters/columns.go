package counters

import "time"

// column is one column of a hot table a kind's deltas change, and what it ends up holding: a
// sum of a count (count) or of an amount (money), the newest last_used_at (newest), or the IP
// of the newest use (ip).
type column struct {
	name   string
	count  func(Delta) int64
	money  func(Delta) Money
	newest bool
	ip     bool
}

func count(name string, of func(Delta) int64) column { return column{name: name, count: of} }
func requests(name string) column                    { return count(name, func(d Delta) int64 { return d.Requests }) }
func failures(name string) column                    { return count(name, func(d Delta) int64 { return d.Failures }) }
func tokens(name string) column                      { return count(name, func(d Delta) int64 { return d.Tokens }) }
func cost(name string) column {
	return column{name: name, money: func(d Delta) Money { return d.Cost }}
}
func newest(name string) column { return column{name: name, newest: true} }

// value is what a column holds: one of a count, an amount, a time (zero: NULL) or a text
// ("": NULL), as the column's kind says.
type value struct {
	n  int64
	m  Money
	at time.Time
	s  string
}

// of is the column's value in d, a merged delta of a row.
func (c column) of(d Delta) value {
	switch {
	case c.count != nil:
		return value{n: c.count(d)}
	case c.money != nil:
		return value{m: c.money(d)}
	}
	return value{at: d.LastUsedAt, s: d.LastIP} // newest, ip: the IP is the newest use's
}

// add folds v, another kind's value of the same column, into w: counts and amounts add up,
// the newest time wins (and brings its IP).
func (c column) add(w, v value) value {
	w.n += v.n
	w.m += v.m
	if !v.at.IsZero() && !v.at.Before(w.at) {
		w.at, w.s = v.at, v.s
	}
	return w
}

// equal reports whether a row's value of the column is the expected one.
func (c column) equal(got, want value) bool {
	switch {
	case c.count != nil:
		return got.n == want.n
	case c.money != nil:
		return got.m == want.m
	case c.newest:
		return got.at.Equal(want.at)
	}
	return got.s == want.s
}
