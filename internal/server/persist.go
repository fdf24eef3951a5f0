package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/rdb"
)

// RDB snapshots (internal/rdb): the file dir/dbfilename that DEBUG RELOAD writes
// and reads back, as Redis's rdbSave/rdbLoad do. Every method runs under the
// engine lock, called from a command handler.

// rdbState is the persistence state guarded by the engine lock.
type rdbState struct {
	skipChecksum bool // DEBUG SET-SKIP-CHECKSUM-VALIDATION
}

// Persistence implements command.Server.
func (s *Server) Persistence() command.Persistence { return s }

// RDBCompression is rdbcompression.
func (s *Server) RDBCompression() bool { return s.cfg.Bool("rdbcompression") }

// SkipChecksum is DEBUG SET-SKIP-CHECKSUM-VALIDATION's state.
func (s *Server) SkipChecksum() bool { return s.rdb.skipChecksum }

// SetSkipChecksum sets DEBUG SET-SKIP-CHECKSUM-VALIDATION.
func (s *Server) SetSkipChecksum(on bool) { s.rdb.skipChecksum = on }

// rdbPath is the snapshot file: dbfilename in dir.
func (s *Server) rdbPath() string {
	return filepath.Join(s.cfg.String("dir"), s.cfg.String("dbfilename"))
}

// saveRDB is rdbSave: the dataset and the function libraries are written to a
// temporary file in dir, synced and renamed over the snapshot file, so that
// the file is replaced atomically; then the change counter resets and
// LASTSAVE moves.
func (s *Server) saveRDB() error {
	path := s.rdbPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	nowUs := s.clock.NowUs()
	err = rdb.Write(f, s.ks, s.rdbInfo(nowUs))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		s.log.Warn("Write error saving DB on disk", "err", err)
		return err
	}
	s.log.Info("DB saved on disk")
	s.stats.dirty = 0
	s.lastSave = nowUs / 1e6
	return nil
}

// loadRDB is rdbLoad: the snapshot file's keys and libraries are added (merge:
// replacing existing ones). Keys that expired before now are skipped.
// Loading announces no keyspace events (Redis notifies only modules).
func (s *Server) loadRDB(merge bool) error {
	f, err := os.Open(s.rdbPath())
	if err != nil {
		return err
	}
	defer f.Close()
	events := s.ks.Events
	s.ks.Events = nil
	defer func() { s.ks.Events = events }()
	opts := rdb.LoadOptions{Now: s.ks.Now(), Merge: merge, SkipChecksum: !s.cfg.Bool("rdbchecksum")}
	if s.scripts != nil {
		opts.Function = func(code string) error {
			if _, errText := s.scripts.vm.LoadLibrary(code, merge, s.scripts.nowMs); errText != "" {
				return errors.New(errText)
			}
			return nil
		}
	}
	st, err := rdb.Load(f, s.ks, opts)
	if err != nil {
		s.log.Warn("Error loading the RDB file", "err", err)
		return err
	}
	s.log.Info("Done loading RDB", "keys_loaded", st.Loaded, "keys_expired", st.Expired)
	return nil
}

// DebugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
func (s *Server) DebugReload(save, flush, merge bool) string {
	if save {
		if err := s.saveRDB(); err != nil {
			return "ERR"
		}
	}
	if flush {
		s.ks.FlushAll()
		if s.scripts != nil {
			s.scripts.vm.FlushFunctions()
		}
	}
	if err := s.loadRDB(merge); err != nil {
		return "ERR Error trying to load the RDB dump, check server logs."
	}
	s.log.Info("DB reloaded by DEBUG RELOAD")
	return ""
}

// rdbInfo is what a snapshot records besides the keyspace: the AUX fields and
// the function libraries. Engine lock held.
func (s *Server) rdbInfo(nowUs int64) rdb.SaveInfo {
	var codes []string
	if s.scripts != nil {
		for _, l := range s.scripts.vm.Libraries() {
			codes = append(codes, l.Code)
		}
	}
	return rdb.SaveInfo{
		RedisVersion: command.Version,
		CTime:        nowUs / 1e6,
		Functions:    codes,
		Compress:     s.cfg.Bool("rdbcompression"),
		Checksum:     s.cfg.Bool("rdbchecksum"),
	}
}
