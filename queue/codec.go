package queue

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
)

// Codec turns a record into bytes and back. The in-memory Queue never needs one; a backend
// that keeps records outside the process (the Redis-streams backend in queue/redisq) stores
// Encode's output and hands Decode's result to the Flusher, possibly in another process.
// Decode must accept what Encode produced by the same program version; an entry Decode
// refuses can never be written, so that backend moves it to its dead-letter stream. Both are
// called from many goroutines at once.
type Codec[T any] interface {
	Encode(rec T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// JSONCodec encodes records with encoding/json: the codec that needs no code per record type.
// Every field of T must be exported (or be a type that marshals itself): an unexported field
// would silently be lost. DefaultCodec checks that.
func JSONCodec[T any]() Codec[T] { return jsonCodec[T]{} }

// DefaultCodec is JSONCodec once T has been checked to lose nothing: it refuses a record type
// with an unexported field anywhere inside it (structs, slices, arrays, maps, pointers), unless
// the type holding it marshals itself (json.Marshaler, encoding.TextMarshaler). Channels and
// functions are refused too. Write a Codec of your own only where a benchmark shows it pays.
func DefaultCodec[T any]() (Codec[T], error) {
	t := reflect.TypeFor[T]()
	if err := checkJSON(t, map[reflect.Type]bool{}); err != nil {
		return nil, fmt.Errorf("queue: record type %v cannot travel as JSON: %w", t, err)
	}
	return jsonCodec[T]{}, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func checkJSON(t reflect.Type, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
				return fmt.Errorf("field %s.%s is unexported", t, f.Name)
			}
			if f.Tag.Get("json") == "-" {
				return fmt.Errorf("field %s.%s is left out of JSON", t, f.Name)
			}
			if err := checkJSON(f.Type, seen); err != nil {
				return err
			}
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkJSON(t.Elem(), seen)
	case reflect.Map:
		if err := checkJSON(t.Key(), seen); err != nil {
			return err
		}
		return checkJSON(t.Elem(), seen)
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return fmt.Errorf("%s values do not travel as JSON", t)
	}
	return nil
}

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Encode(rec T) ([]byte, error) { return json.Marshal(rec) }

func (jsonCodec[T]) Decode(b []byte) (T, error) {
	var rec T
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("queue: decoding a JSON record: %w", err)
	}
	return rec, nil
}
