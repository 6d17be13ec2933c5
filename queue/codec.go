package queue

import (
	"encoding/json"
	"fmt"
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

// CodecFuncs adapts a pair of functions to a Codec.
type CodecFuncs[T any] struct {
	EncodeFunc func(T) ([]byte, error)
	DecodeFunc func([]byte) (T, error)
}

// Encode calls EncodeFunc.
func (c CodecFuncs[T]) Encode(rec T) ([]byte, error) { return c.EncodeFunc(rec) }

// Decode calls DecodeFunc.
func (c CodecFuncs[T]) Decode(b []byte) (T, error) { return c.DecodeFunc(b) }

// JSONCodec encodes records with encoding/json: the simplest codec for a record type whose
// fields are exported (unexported fields would silently be lost, so prefer a hand-written
// codec for such types).
func JSONCodec[T any]() Codec[T] { return jsonCodec[T]{} }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Encode(rec T) ([]byte, error) { return json.Marshal(rec) }

func (jsonCodec[T]) Decode(b []byte) (T, error) {
	var rec T
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("queue: decoding a JSON record: %w", err)
	}
	return rec, nil
}
