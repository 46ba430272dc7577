// Package logbuf is a buffer that goroutines may write to at once while a
// test reads it: the log sink or the terminal of a server under test. Only
// tests import it.
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a lock. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
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
