package counters

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestTextsEncodeAsStrings: a Texts is sent as the []string of the same texts is, in both
// formats, and nil as NULL.
func TestTextsEncodeAsStrings(t *testing.T) {
	m := pgtype.NewMap()
	for _, strs := range [][]string{nil, {}, {"key-hot-0"}, {"req-1", "", "a,b", `q"u\o{t}e`, "ünï"}} {
		var texts Texts
		if strs != nil {
			texts = make(Texts, len(strs))
			for i, s := range strs {
				texts[i] = s
			}
		}
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			want, err := m.Encode(pgtype.TextArrayOID, format, strs, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Encode(pgtype.TextArrayOID, format, texts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%q in format %d: Texts sent %q, []string %q", strs, format, got, want)
			}
		}
	}
}
