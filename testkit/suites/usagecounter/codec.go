package usagecounter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// eventCodec stores an event in a Redis stream entry (--queue-backend redis): a version
// byte, the number of usage rows, then per row its index, request id, hot index, slot, response
// time and timestamp, as varints (the request id length-prefixed). An enqueued event holds
// one row; merged events are never stored, but the format allows them. It stands in for the
// default JSON codec because it pays: BenchmarkEventCodec measures it an order of magnitude
// faster per record, with a quarter of the bytes and a third of the allocations, on the suite
// that pushes the most records through Redis.
type eventCodec struct{}

const eventCodecVersion = 2 // 2: with the slot

func (eventCodec) Encode(e event) ([]byte, error) {
	b := make([]byte, 0, 40)
	b = append(b, eventCodecVersion)
	b = binary.AppendUvarint(b, uint64(1+len(e.more)))
	for _, u := range append([]usageRow{e.first}, e.more...) {
		b = binary.AppendVarint(b, u.index)
		b = binary.AppendUvarint(b, uint64(len(u.requestID)))
		b = append(b, u.requestID...)
		b = binary.AppendUvarint(b, uint64(u.hot))
		b = binary.AppendUvarint(b, uint64(u.slot))
		b = binary.AppendVarint(b, int64(u.responseMs))
		b = binary.AppendVarint(b, u.at.UnixNano())
	}
	return b, nil
}

func (eventCodec) Decode(b []byte) (event, error) {
	var e event
	if len(b) == 0 || b[0] != eventCodecVersion {
		return e, errors.New("usage event: unknown encoding")
	}
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > uint64(len(b))) {
		return e, fmt.Errorf("usage event: %d rows", n)
	}
	rows := make([]usageRow, 0, n)
	for range n {
		var u usageRow
		u.index = d.varint()
		u.requestID = d.string()
		u.hot = int(d.uvarint())
		u.slot = int(d.uvarint())
		u.responseMs = int32(d.varint())
		u.at = time.Unix(0, d.varint()).UTC()
		rows = append(rows, u)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return e, fmt.Errorf("usage event: %w", d.err)
	}
	e.first = rows[0]
	if len(rows) > 1 {
		e.more = rows[1:]
	}
	return e, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 { return next(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return next(d, binary.Varint) }

// next reads one value with read (binary.Uvarint or binary.Varint), unless d already failed.
func next[V uint64 | int64](d *decoder, read func([]byte) (V, int)) V {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err = errors.New("truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errors.New("truncated")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
