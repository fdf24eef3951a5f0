package server

import (
	"io"
)

// SnapshotFunc writes the whole dataset as an RDB file to w: SYNC's payload.
// It runs under the engine lock (the dataset does not change meanwhile).
type SnapshotFunc func(w io.Writer) error

// SetSnapshot replaces the snapshot writer (tests use it to make SYNC slow
// or fail); nil restores internal/rdb's.
func (s *Server) SetSnapshot(f SnapshotFunc) {
	s.eng.Lock()
	s.snapshotFn = f
	s.eng.Unlock()
}

// snapshot writes the dataset and the function libraries as internal/rdb's
// file format (decision 0020), the same bytes DEBUG RELOAD saves.
func (s *Server) snapshot(w io.Writer) error {
	if s.snapshotFn != nil {
		return s.snapshotFn(w)
	}
	return s.rdb.WriteSnapshot(w)
}
