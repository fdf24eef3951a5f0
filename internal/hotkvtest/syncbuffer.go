package hotkvtest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for a writer goroutine (a server's log, a
// shell's output) and a test that polls what was written so far.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
