package counters

import "github.com/jackc/pgx/v5/pgtype"

// Texts is a text[] argument whose elements are strings in anys already. pgx sends it as it
// sends a []string of the same texts, byte for byte, but a []string it boxes element by
// element as it encodes it (an allocation each): texts that repeat from row to row, as a
// batch's hot rows' ids do, are boxed once in a Texts, not once per row and statement.
type Texts []any

var _ pgtype.ArrayGetter = Texts(nil)

// Dimensions is the array's one dimension (nil: a NULL array, as a nil []string is).
func (a Texts) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

// Index is element i, as it is.
func (a Texts) Index(i int) any { return a[i] }

// IndexType is a string: what every element holds.
func (a Texts) IndexType() any { return "" }
