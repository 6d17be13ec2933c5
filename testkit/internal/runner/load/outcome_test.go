package load

import (
	"sync"
	"testing"
)

func TestOutcomesGrowConcurrentlyAcrossChunks(t *testing.T) {
	const (
		writers = 16
		n       = 5*chunkSize + 123 // several chunks and a partial one
	)
	o := NewOutcomes(0)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			// Interleaved indexes: every chunk is written by every writer at once.
			for i := int64(w); i < n; i += writers {
				o.Set(i, Outcome(1+i%3))
			}
		})
	}
	wg.Wait()
	if o.Len() != n {
		t.Fatalf("Len %d, want %d", o.Len(), n)
	}
	var next int64
	o.Each(func(i int64, v Outcome) {
		if i != next {
			t.Fatalf("Each visited %d after %d", i, next-1)
		}
		next++
		if want := Outcome(1 + i%3); v != want {
			t.Fatalf("outcome %d is %v, want %v", i, v, want)
		}
	})
	if next != n {
		t.Errorf("Each visited %d indexes, want %d", next, n)
	}
	var total int64
	for _, v := range []Outcome{NotAttempted, Succeeded, Failed, UnknownOutcome} {
		total += o.Count(v)
	}
	if total != n || o.Count(NotAttempted) != 0 {
		t.Errorf("counts add up to %d with %d not attempted, want %d and 0", total, o.Count(NotAttempted), n)
	}
}

func TestOutcomesSparse(t *testing.T) {
	o := NewOutcomes(3 * chunkSize)
	o.Set(chunkSize+5, Succeeded) // only the middle chunk is ever allocated
	o.Set(2, UnknownOutcome)
	if o.Len() != 3*chunkSize {
		t.Errorf("Len %d, want %d: Set below Len must not change it", o.Len(), 3*chunkSize)
	}
	if o.Count(Succeeded) != 1 || o.Count(UnknownOutcome) != 1 || o.Count(NotAttempted) != 3*chunkSize-2 {
		t.Errorf("counts %d/%d/%d", o.Count(Succeeded), o.Count(UnknownOutcome), o.Count(NotAttempted))
	}
	for _, tc := range []struct {
		i    int64
		want Outcome
	}{{-1, NotAttempted}, {0, NotAttempted}, {2, UnknownOutcome}, {chunkSize + 5, Succeeded}, {2*chunkSize + 1, NotAttempted}, {3 * chunkSize, NotAttempted}} {
		if got := o.Get(tc.i); got != tc.want {
			t.Errorf("Get(%d) = %v, want %v", tc.i, got, tc.want)
		}
	}
	o.Set(10*chunkSize, Failed)
	if o.Len() != 10*chunkSize+1 || o.Get(10*chunkSize) != Failed {
		t.Errorf("after Set beyond Len: Len %d, Get %v", o.Len(), o.Get(10*chunkSize))
	}
}

func TestOutcomeString(t *testing.T) {
	for v, want := range map[Outcome]string{NotAttempted: "not_attempted", Succeeded: "succeeded", Failed: "failed", UnknownOutcome: "unknown_outcome", 9: "Outcome(9)"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q, want %q", uint8(v), v.String(), want)
		}
	}
}
