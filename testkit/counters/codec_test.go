package counters

import (
	"reflect"
	"testing"

	"github.com/hotspotkit/hotspotkit/queue"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	pairs := MustTable(TableSpec{Name: "pairs", Key: []Column{{Name: "a", Type: "text"}, {Name: "b", Type: "bigint"}},
		Columns: []Column{{Name: "n", Type: "bigint", Op: Add}}})
	for _, rec := range []Record{
		{Key: Key{Table: "api_keys", Row: "key-hot-3", Slot: 2}, Requests: []int64{7}},
		{Key: Tellers.Row(Int(3), Int(-70000)), Part: 1, Requests: []int64{1 << 40, 0, 7}},
		{Key: pairs.Row(Text("a\x1fb\x1e"), Int(5)), Part: 2, Requests: []int64{9}},
	} {
		b, err := RecordCodec().Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := RecordCodec().Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, rec) {
			t.Errorf("round trip: got %+v, want %+v", got, rec)
		}
		for cut := 0; cut < len(b); cut++ {
			if _, err := RecordCodec().Decode(b[:cut]); err == nil {
				t.Errorf("truncated to %d of %d bytes: decoded without error", cut, len(b))
			}
		}
	}
}

// TestCompositeKeys: a composite key's values come back from its row as they went in, even a
// text holding the separator and its escape, and two rows whose texts would join alike stay
// apart.
func TestCompositeKeys(t *testing.T) {
	pairs := MustTable(TableSpec{Name: "pairs", Key: []Column{{Name: "a", Type: "text"}, {Name: "b", Type: "text"}},
		Columns: []Column{{Name: "n", Type: "bigint", Op: Add}}})
	for _, kv := range [][2]string{{"x", "y"}, {"a\x1fb", "c"}, {"a", "b\x1fc"}, {"\x1e", "\x1e\x1f"}, {"", ""}} {
		k := pairs.Row(Text(kv[0]), Text(kv[1]))
		if got := pairs.keyValues(k.Row); !reflect.DeepEqual(got, kv[:]) {
			t.Errorf("%q: key values %q", kv, got)
		}
		back, err := pairs.RowOf(kv[:])
		if err != nil || back != k {
			t.Errorf("%q: RowOf = %+v, %v; want %+v", kv, back, err, k)
		}
	}
	if pairs.Row(Text("a\x1fb"), Text("c")) == pairs.Row(Text("a"), Text("b\x1fc")) {
		t.Error("two rows share a key")
	}
	if got := Tellers.FormatKey(Tellers.Row(Int(1), Int(-2))); got != "tellers(bid=1, tid=-2)" {
		t.Errorf("FormatKey = %s", got)
	}
}

// BenchmarkRecordCodec compares the record codec with the default JSON one on the record every
// request of a one-part suite enqueues, encode and decode together: the codec is kept only
// while it pays.
func BenchmarkRecordCodec(b *testing.B) {
	rec := Record{Key: Key{Table: "api_keys", Row: "key-hot-3", Slot: 2}, Requests: []int64{123456}}
	json, err := queue.DefaultCodec[Record]()
	if err != nil {
		b.Fatal(err)
	}
	for name, c := range map[string]queue.Codec[Record]{"codec=record": RecordCodec(), "codec=json": json} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				buf, err := c.Encode(rec)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Decode(buf); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(buf)))
			}
		})
	}
}
