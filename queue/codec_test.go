package queue

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct{ N int }

type exported struct {
	inner
	At    time.Time
	Tags  map[string][]int
	Next  *exported
	Slots [2]inner
}

func TestDefaultCodecRoundTrip(t *testing.T) {
	c, err := DefaultCodec[exported]()
	if err != nil {
		t.Fatal(err)
	}
	in := exported{inner: inner{7}, At: time.Date(2026, 11, 30, 1, 2, 3, 456789, time.UTC),
		Tags: map[string][]int{"a": {1, 2}}, Next: &exported{inner: inner{8}}, Slots: [2]inner{{1}, {2}}}
	b, err := c.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}
	if _, err := c.Decode([]byte("{")); err == nil {
		t.Error("a truncated entry decoded without error")
	}
}

func TestDefaultCodecRefusesWhatJSONWouldLose(t *testing.T) {
	type hidden struct{ n int }
	type deep struct{ Rows []hidden }
	type skipped struct {
		A int `json:"-"`
	}
	type fn struct{ F func() }
	for name, check := range map[string]func() error{
		"unexported field":         func() error { _, err := DefaultCodec[hidden](); return err },
		"unexported field in elem": func() error { _, err := DefaultCodec[deep](); return err },
		"json:\"-\"":               func() error { _, err := DefaultCodec[skipped](); return err },
		"func field":               func() error { _, err := DefaultCodec[fn](); return err },
	} {
		err := check()
		if err == nil || !strings.Contains(err.Error(), "cannot travel as JSON") {
			t.Errorf("%s: err %v, want a refusal", name, err)
		}
	}
	if _, err := DefaultCodec[int](); err != nil {
		t.Errorf("int: %v", err)
	}
}
