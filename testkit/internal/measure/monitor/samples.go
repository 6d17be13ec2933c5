package monitor

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"

	"github.com/hotspotkit/hotspotkit/results"
)

// SampleWriter appends samples as NDJSON lines to a file; safe for concurrent use.
type SampleWriter struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
	err  error
	path string
}

// CreateSamples creates (truncates) the samples file at path for the runs of suite, and
// writes its header (results.SamplesHeader).
func CreateSamples(path, suite string) (*SampleWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	if err := results.WriteSamplesHeader(w, suite); err != nil {
		f.Close()
		return nil, err
	}
	return &SampleWriter{f: f, w: w, enc: json.NewEncoder(w), path: path}, nil
}

// Path is the file written.
func (s *SampleWriter) Path() string { return s.path }

// Write appends one sample and flushes it; the first error sticks and is returned by Close.
func (s *SampleWriter) Write(sample *results.Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = s.enc.Encode(sample)
	}
	if s.err == nil {
		// One sample per interval: flushing each keeps the file tail-able while a run goes.
		s.err = s.w.Flush()
	}
}

// Close flushes and closes the file.
func (s *SampleWriter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = err
	}
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = err
	}
	return s.err
}
