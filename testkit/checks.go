package testkit

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Checks collects a suite's verification: each check compares an expectation computed from
// the requests that succeeded with what the database holds, or says why that comparison
// could not be made (NotChecked). A run is verified only when every check was made and
// passed (results.Verification).
type Checks struct {
	list []results.Check
	skew int64
}

// NewChecks starts a verification for run r.
func (r *Run) NewChecks() *Checks { return &Checks{skew: r.env.CheckSkew} }

// Int compares integers exactly.
func (c *Checks) Int(name string, want, got int64) {
	want += c.skew
	c.list = append(c.list, results.Compared(name, want, got, want == got))
}

// Amount is an exact decimal amount a Money check compares (decimal.Decimal is one).
type Amount interface {
	// String is the amount as the report shows it.
	String() string
	// Equals reports whether the NUMERIC text the database returned is this amount.
	Equals(numeric string) bool
}

// Money compares an exact amount with the NUMERIC text the database returned.
func (c *Checks) Money(name string, want Amount, got string) {
	w, ok := want.String(), want.Equals(got)
	if c.skew != 0 {
		w, ok = w+"~", false
	}
	c.list = append(c.list, results.Compared(name, w, got, ok))
}

// Text compares strings exactly.
func (c *Checks) Text(name, want, got string) {
	if c.skew != 0 {
		want += "~"
	}
	c.list = append(c.list, results.Compared(name, want, got, want == got))
}

// NotChecked records a check the suite could not make, and why (what it would have compared
// cannot be computed, or read): never a comparison that passes by construction. A run with
// one is not verified, and the report, the summary and baseline table name it.
func (c *Checks) NotChecked(name, why string) {
	c.list = append(c.list, results.NotChecked(name, why))
}

// List returns the checks.
func (c *Checks) List() []results.Check { return c.list }

// QueryInt runs a query returning one integer (on the admin connection, usually).
func QueryInt(ctx context.Context, db sqldb.Querier, sql string, args ...any) (int64, error) {
	var n int64
	if err := db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", sql, err)
	}
	return n, nil
}
