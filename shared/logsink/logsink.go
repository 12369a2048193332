package logsink

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers. The zero value is an
// empty buffer ready to use; it must not be copied after first use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p (io.Writer); it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Lines is everything written so far as lines, without the final newline (one empty line
// when nothing was written).
func (s *Buffer) Lines() []string {
	return strings.Split(strings.TrimSpace(s.String()), "\n")
}
