package counters

import (
	"reflect"
	"testing"

	"github.com/hotspotkit/hotspotkit/queue"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	for _, rec := range []Record{
		{Key: Key{Kind: APIKeyUsage, Target: "key-hot-3", Slot: 2}, Requests: []int64{7}},
		{Key: Key{Kind: ManagementToken, Target: "token-hot-0"}, Part: 1, Requests: []int64{1 << 40, 0, 7}},
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

// BenchmarkRecordCodec compares the record codec with the default JSON one on the record every
// request of a one-part suite enqueues, encode and decode together: the codec is kept only
// while it pays.
func BenchmarkRecordCodec(b *testing.B) {
	rec := Record{Key: Key{Kind: APIKeyUsage, Target: "key-hot-3", Slot: 2}, Requests: []int64{123456}}
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
