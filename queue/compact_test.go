package queue

import (
	"cmp"
	"reflect"
	"testing"

	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

func TestCompact(t *testing.T) {
	r := func(slot, seq int, sum int64) rec { return rec{Slot: slot, First: seq, Last: seq, Sum: sum} }
	var merges violationLog
	merge := mergeRec(&merges, true)
	for _, tc := range []struct {
		name    string
		in      []rec
		compare func(a, b int) int
		want    []rec
	}{
		{"empty", nil, cmp.Compare[int], nil},
		{"single", []rec{r(1, 1, 5)}, nil, []rec{r(1, 1, 5)}},
		{"no repeats keeps first-seen order", []rec{r(3, 1, 1), r(1, 1, 1), r(2, 1, 1)}, nil,
			[]rec{r(3, 1, 1), r(1, 1, 1), r(2, 1, 1)}},
		{"no repeats sorted", []rec{r(3, 1, 1), r(1, 1, 1), r(2, 1, 1)}, cmp.Compare[int],
			[]rec{r(1, 1, 1), r(2, 1, 1), r(3, 1, 1)}},
		{"merges in order, first-seen order",
			[]rec{r(2, 1, 10), r(1, 1, 1), r(2, 2, 20), r(1, 2, 2), r(2, 3, 30)}, nil,
			[]rec{{Slot: 2, First: 1, Last: 3, Sum: 60}, {Slot: 1, First: 1, Last: 2, Sum: 3}}},
		{"merges in order, sorted descending",
			[]rec{r(1, 1, 1), r(2, 1, 10), r(1, 2, 2), r(3, 1, 7), r(2, 2, 20)},
			func(a, b int) int { return cmp.Compare(b, a) },
			[]rec{{Slot: 3, First: 1, Last: 1, Sum: 7}, {Slot: 2, First: 1, Last: 2, Sum: 30}, {Slot: 1, First: 1, Last: 2, Sum: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]rec(nil), tc.in...)
			got := Compact(in, recKey, merge, tc.compare)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Compact = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(in, tc.in) {
				t.Errorf("Compact modified its input: %v, was %v", in, tc.in)
			}
		})
	}
	merges.check(t)
}

// TestCompactorReuse: the worker's compactor must forget the previous batch's slots.
func TestCompactorReuse(t *testing.T) {
	var merges violationLog
	c := core.NewCompactor(recKey, mergeRec(&merges, false), cmp.Compare[int])
	first := c.Compact([]rec{{Slot: 1, First: 1, Last: 1, Sum: 1}, {Slot: 1, First: 2, Last: 2, Sum: 1}})
	second := c.Compact([]rec{{Slot: 2, First: 1, Last: 1, Sum: 4}, {Slot: 1, First: 3, Last: 3, Sum: 1}})
	if len(first) != 1 || first[0].Sum != 2 {
		t.Errorf("first batch %v", first)
	}
	want := []rec{{Slot: 1, First: 3, Last: 3, Sum: 1}, {Slot: 2, First: 1, Last: 1, Sum: 4}}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("second batch %v, want %v", second, want)
	}
	merges.check(t)
}
