package aof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/resp"
)

// The manifest (Redis 7+'s multi-part AOF, aof.c): appenddirname holds a
// base file (a snapshot: RDB, or commands), incremental files of commands,
// and history files a rewrite retired, listed in
// <appendfilename>.manifest, one line per file:
//
//	file appendonly.aof.2.base.rdb seq 2 type b
//	file appendonly.aof.1.incr.aof seq 1 type h
//	file appendonly.aof.2.incr.aof seq 2 type i
//
// The manifest is replaced atomically (a temporary file, fsync, rename, fsync
// of the directory): a crash leaves the old list or the new one.

// File types, as the manifest writes them.
const (
	typeBase = 'b'
	typeHist = 'h'
	typeIncr = 'i'
)

const manifestMaxLine = 1024 // MANIFEST_MAX_LINE

// fileInfo is one manifest line (aofInfo).
type fileInfo struct {
	name string
	seq  int64
	typ  byte
	// startOffset is the replication offset at the file's start (Redis 8
	// writes it on incremental files; -1: none). Kept as read.
	startOffset, endOffset int64
}

// manifest is aofManifest.
type manifest struct {
	base    *fileInfo
	incrs   []fileInfo
	history []fileInfo
	baseSeq int64 // curr_base_file_seq
	incrSeq int64 // curr_incr_file_seq
}

func (m *manifest) empty() bool { return m.base == nil && len(m.incrs) == 0 }

func (m *manifest) clone() *manifest {
	c := &manifest{baseSeq: m.baseSeq, incrSeq: m.incrSeq}
	if m.base != nil {
		b := *m.base
		c.base = &b
	}
	c.incrs = append([]fileInfo(nil), m.incrs...)
	c.history = append([]fileInfo(nil), m.history...)
	return c
}

// format is getAofManifestAsString: the base, the history, the incremental
// files.
func (m *manifest) format() []byte {
	var b []byte
	if m.base != nil {
		b = m.base.format(b)
	}
	for i := range m.history {
		b = m.history[i].format(b)
	}
	for i := range m.incrs {
		b = m.incrs[i].format(b)
	}
	return b
}

func (f *fileInfo) format(b []byte) []byte {
	name := f.name
	if needsRepr(name) {
		name = config.Repr(name)
	}
	b = fmt.Appendf(b, "file %s seq %d type %c", name, f.seq, f.typ)
	if f.startOffset != -1 {
		b = fmt.Appendf(b, " startoffset %d", f.startOffset)
		if f.endOffset != -1 {
			b = fmt.Appendf(b, " endoffset %d", f.endOffset)
		}
	}
	return append(b, '\n')
}

// needsRepr is sdsneedsrepr: the name holds a character the manifest's
// argument splitter would take apart. A single quote too, which Redis leaves
// bare and then cannot read back (sdssplitargs takes it for a quote).
func needsRepr(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || c == '\'' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' ||
			c < 0x20 || c > 0x7e || c == ' ' {
			return true
		}
	}
	return false
}

// parseManifest is aofLoadManifestFromFile, with its error texts.
func parseManifest(data []byte) (*manifest, error) {
	m := &manifest{}
	var maxSeq int64
	sc := bufio.NewReader(bytes.NewReader(data))
	lineNum := 0
	for {
		line, err := sc.ReadString('\n')
		if line == "" && err != nil {
			if lineNum == 0 {
				return nil, errors.New("Found an empty AOF manifest")
			}
			break
		}
		lineNum++
		if line[0] == '#' {
			continue
		}
		if !strings.HasSuffix(line, "\n") || len(line) > manifestMaxLine {
			return nil, errors.New("The AOF manifest file contains too long line")
		}
		if i := strings.IndexByte(line, 0); i >= 0 {
			line = line[:i] // C reads the line as a string: it ends at a NUL
		}
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			return nil, manifestLineErr(lineNum, line, "Invalid AOF manifest file format")
		}
		parts, ok := resp.SplitArgs([]byte(line))
		args := make([]string, len(parts))
		for i, p := range parts {
			args[i] = string(p)
		}
		if !ok || len(args) < 6 || len(args)%2 != 0 {
			return nil, manifestLineErr(lineNum, line, "Invalid AOF manifest file format")
		}
		fi := fileInfo{startOffset: -1, endOffset: -1}
		for i := 0; i < len(args); i += 2 {
			k, v := strings.ToLower(args[i]), args[i+1]
			switch k {
			case "file":
				if filepath.Base(v) != v || strings.ContainsRune(v, '/') {
					return nil, manifestLineErr(lineNum, line, "File can't be a path, just a filename")
				}
				fi.name = v
			case "seq":
				fi.seq = atoll(v)
			case "type":
				if v != "" {
					fi.typ = v[0]
				}
			case "startoffset":
				fi.startOffset = atoll(v)
			case "endoffset":
				fi.endOffset = atoll(v)
			}
		}
		if fi.name == "" || fi.seq == 0 || fi.typ == 0 {
			return nil, manifestLineErr(lineNum, line, "Invalid AOF manifest file format")
		}
		switch fi.typ {
		case typeBase:
			if m.base != nil {
				return nil, manifestLineErr(lineNum, line, "Found duplicate base file information")
			}
			b := fi
			m.base, m.baseSeq = &b, fi.seq
		case typeHist:
			m.history = append(m.history, fi)
		case typeIncr:
			if fi.seq <= maxSeq {
				return nil, manifestLineErr(lineNum, line, "Found a non-monotonic sequence number")
			}
			m.incrs = append(m.incrs, fi)
			m.incrSeq, maxSeq = fi.seq, fi.seq
		default:
			return nil, manifestLineErr(lineNum, line, "Unknown AOF file type")
		}
	}
	return m, nil
}

// atoll is C's atoll: the leading decimal digits, 0 when there are none.
func atoll(s string) int64 {
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}

// manifestError is a fatal manifest error, logged as Redis logs it.
type manifestError struct {
	line    int
	text    string
	message string
}

func (e *manifestError) Error() string { return e.message }

func manifestLineErr(n int, line, msg string) error {
	return &manifestError{line: n, text: line, message: msg}
}

// Names (aof.c's naming rules).
func (a *AOF) baseName(seq int64, rdbFormat bool) string {
	ext := ".aof"
	if rdbFormat {
		ext = ".rdb"
	}
	return fmt.Sprintf("%s.%d.base%s", a.fileName, seq, ext)
}

func (a *AOF) incrName(seq int64) string { return fmt.Sprintf("%s.%d.incr.aof", a.fileName, seq) }

func (a *AOF) manifestName() string { return a.fileName + ".manifest" }

func (a *AOF) tempIncrName() string { return "temp-" + a.fileName + ".incr" }

func (a *AOF) path(name string) string { return filepath.Join(a.dirPath, name) }

// newBase is getNewBaseFileNameAndMarkPreAsHistory: the next base file's
// name, the current base moving to the history.
func (m *manifest) newBase(a *AOF, rdbFormat bool) string {
	if m.base != nil {
		h := *m.base
		h.typ = typeHist
		m.history = append([]fileInfo{h}, m.history...) // newest first, as Redis lists them
	}
	m.baseSeq++
	m.base = &fileInfo{name: a.baseName(m.baseSeq, rdbFormat), seq: m.baseSeq, typ: typeBase, startOffset: -1, endOffset: -1}
	return m.base.name
}

// newIncr is getNewIncrAofName: the next incremental file, appended.
func (m *manifest) newIncr(a *AOF) string {
	return m.newIncrAt(a, a.replOffset())
}

// newIncrAt is newIncr for a file whose stream started at replication
// offset start (getNewIncrAofName: Redis 8 lists it as startoffset).
func (m *manifest) newIncrAt(a *AOF, start int64) string {
	m.incrSeq++
	m.incrs = append(m.incrs, fileInfo{name: a.incrName(m.incrSeq), seq: m.incrSeq, typ: typeIncr,
		startOffset: start, endOffset: -1})
	return m.incrs[len(m.incrs)-1].name
}

// retireIncrs is markRewrittenIncrAofAsHistory: every incremental file but
// the last (the one opened when the rewrite started) goes to the history.
func (m *manifest) retireIncrs() {
	if len(m.incrs) <= 1 {
		return
	}
	m.retire(len(m.incrs) - 1)
}

// retire moves the first n incremental files to the history, each to its
// head (newest first).
func (m *manifest) retire(n int) {
	for _, f := range m.incrs[:n] {
		f.typ = typeHist
		m.history = append([]fileInfo{f}, m.history...)
	}
	m.incrs = append([]fileInfo(nil), m.incrs[n:]...)
}

// lastIncr is the file appends go to.
func (m *manifest) lastIncr() string {
	if len(m.incrs) == 0 {
		return ""
	}
	return m.incrs[len(m.incrs)-1].name
}

// persist is persistAofManifest: a temporary file, fsync, rename over the
// manifest, fsync of the directory.
func (a *AOF) persistManifest(m *manifest) error {
	tmp := a.path("temp-" + a.manifestName())
	if err := writeFileSync(tmp, m.format()); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, a.path(a.manifestName())); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(a.dirPath)
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
