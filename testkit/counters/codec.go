package counters

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// RecordCodec stores a Record in a Redis stream entry (--queue-backend redis): a version
// byte, the row's table and key values (Key.Row, length-prefixed), its slot, the part, the
// number of requests and each request's index, as varints: a record of any declared table. An enqueued record holds one request; merged
// records are never stored, but the format allows them. It stands in for the default JSON codec
// where it pays: BenchmarkRecordCodec measures it against JSON.
func RecordCodec() testkit.Codec[Record] { return recordCodec{} }

type recordCodec struct{}

const recordCodecVersion = 4 // 4: a declared table's row (3 was a gateway kind's)

func (recordCodec) Encode(rec Record) ([]byte, error) {
	b := make([]byte, 0, 16+len(rec.Key.Table)+len(rec.Key.Row)+4*len(rec.Requests))
	b = append(b, recordCodecVersion)
	b = binary.AppendUvarint(b, uint64(len(rec.Key.Table)))
	b = append(b, rec.Key.Table...)
	b = binary.AppendUvarint(b, uint64(len(rec.Key.Row)))
	b = append(b, rec.Key.Row...)
	b = binary.AppendUvarint(b, uint64(rec.Key.Slot))
	b = binary.AppendUvarint(b, uint64(rec.Part))
	b = binary.AppendUvarint(b, uint64(len(rec.Requests)))
	for _, i := range rec.Requests {
		b = binary.AppendVarint(b, i)
	}
	return b, nil
}

func (recordCodec) Decode(b []byte) (Record, error) {
	var rec Record
	if len(b) == 0 || b[0] != recordCodecVersion {
		return rec, errors.New("counters record: unknown encoding")
	}
	d := decoder{b: b[1:]}
	rec.Key.Table = d.string()
	rec.Key.Row = d.string()
	rec.Key.Slot = int(d.uvarint())
	rec.Part = int(d.uvarint())
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > uint64(len(b))) {
		return rec, fmt.Errorf("counters record: %d requests", n)
	}
	rec.Requests = make([]int64, 0, n)
	for range n {
		rec.Requests = append(rec.Requests, d.varint())
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return Record{}, fmt.Errorf("counters record: %w", d.err)
	}
	return rec, nil
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
