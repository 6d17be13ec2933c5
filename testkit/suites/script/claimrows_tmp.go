package script

import (
	"context"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// claimRowsMySQL stands in for counters.ClaimRowsMySQL until that lands on this branch (the
// same statements); it goes then.
func claimRowsMySQL(ctx context.Context, tx sqldb.Tx, n int, insert func(from, to int) (string, []any)) ([]bool, int, error) {
	isNew := make([]bool, n)
	if n == 0 {
		return isNew, 0, nil
	}
	q, args := insert(0, n)
	_, err := tx.Exec(ctx, q, args...)
	switch {
	case err == nil:
		for i := range isNew {
			isNew[i] = true
		}
		return isNew, 1, nil
	case !sqldb.IsUniqueViolation(err):
		return nil, 1, err
	case n == 1:
		return isNew, 1, nil
	}
	for i := range n {
		q, args := insert(i, i+1)
		_, err := tx.Exec(ctx, q, args...)
		switch {
		case err == nil:
			isNew[i] = true
		case !sqldb.IsUniqueViolation(err):
			return nil, 2 + i, err
		}
	}
	return isNew, 1 + n, nil
}
