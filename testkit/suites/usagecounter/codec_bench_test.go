package usagecounter

import (
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
)

// jsonRow and jsonEvent are usageRow and event with exported fields: what the default codec
// (queue.DefaultCodec, JSON) would store if the suite had no codec of its own.
type jsonRow struct {
	Index      int64
	RequestID  string
	Hot        int
	ResponseMs int32
	At         time.Time
}

type jsonEvent struct {
	First jsonRow
	More  []jsonRow
}

// BenchmarkEventCodec compares the hand-written codec with the default JSON one on the event
// every request enqueues (one row), encode and decode together: the hand-written one is kept
// only while it pays.
func BenchmarkEventCodec(b *testing.B) {
	row := usageRow{index: 123456, requestID: "req-123456", hot: 3, responseMs: 57, at: epoch.Add(123456 * time.Millisecond)}
	b.Run("codec=hand-written", func(b *testing.B) {
		e := event{first: row}
		b.ReportAllocs()
		for range b.N {
			buf, err := eventCodec{}.Encode(e)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := (eventCodec{}).Decode(buf); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
		}
	})
	b.Run("codec=json", func(b *testing.B) {
		c, err := queue.DefaultCodec[jsonEvent]()
		if err != nil {
			b.Fatal(err)
		}
		e := jsonEvent{First: jsonRow{Index: row.index, RequestID: row.requestID, Hot: row.hot, ResponseMs: row.responseMs, At: row.at}}
		b.ReportAllocs()
		for range b.N {
			buf, err := c.Encode(e)
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
