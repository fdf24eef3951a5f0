package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Loading (aof.c's loadAppendOnlyFiles, loadSingleAppendOnlyFile): the base
// file, then every incremental file, in manifest order. A base file in RDB
// format is loaded as a snapshot (every key, expired ones too: they go when
// the AOF is loaded, as in Redis); commands run through the server's Apply,
// a MULTI ... EXEC as one unit, with expiry suspended. A torn last command is
// cut off with aof-load-truncated yes (the file is truncated there), a
// transaction without its EXEC is reverted; anything else that does not
// parse is refused with Redis's message, which stops the server.

// loadStatus is AOF_OK, AOF_NOT_EXIST, ...
type loadStatus int

const (
	loadOK loadStatus = iota
	loadNotExist
	loadEmpty
	loadOpenErr
	loadFailed
	loadTruncated
	loadBrokenRecovered
)

// ErrLoad is returned when the AOF does not load (Redis exits with status 1).
var ErrLoad = errors.New("the append only file could not be loaded (see the log)")

// ErrStopped is returned when Yield stopped a load.
var ErrStopped = errors.New("loading stopped")

// readManifest is aofLoadManifestFromDisk: the manifest, or an empty one
// when the directory or the file does not exist.
func (a *AOF) readManifest() (*manifest, error) {
	data, err := os.ReadFile(a.path(a.manifestName()))
	if errors.Is(err, fs.ErrNotExist) {
		return &manifest{}, nil
	}
	if err != nil {
		a.warnf("Fatal error: can't open the AOF manifest file %s for reading: %v", a.manifestName(), err)
		return nil, ErrLoad
	}
	m, err := parseManifest(data)
	if err != nil {
		a.d.Log.Warn("\n*** FATAL AOF MANIFEST FILE ERROR ***\n")
		var me *manifestError
		if errors.As(err, &me) {
			a.warnf("Reading the manifest file, at line %d\n", me.line)
			a.warnf(">>> '%s'\n", me.text)
		}
		a.warnf("%s\n", err.Error())
		return nil, ErrLoad
	}
	return m, nil
}

// LoadAtStartup is loadDataFromDisk's AOF branch, with appendonly yes: the
// AOF's files are loaded (none: the server starts empty, and OpenAtStart
// makes a base file of it). Engine lock held, lent by Yield.
func (a *AOF) LoadAtStartup() error {
	a.dirPath = a.dir()
	m, err := a.readManifest()
	if err != nil {
		return err
	}
	// an AOF of Redis before 7 (one file in dir) moves into the directory
	// as its base (Redis's three upgrade cases)
	old := filepath.Join(a.d.Config.String("dir"), a.fileName)
	if exists(old) {
		_, derr := os.Stat(a.dirPath)
		if derr != nil || m.empty() ||
			(m.base != nil && len(m.incrs) == 0 && m.base.name == a.fileName && !exists(a.path(a.fileName))) {
			if err := a.upgrade(m, old); err != nil {
				return err
			}
		}
	}
	a.man = m
	start := time.Now()
	st, err := a.loadAll(m)
	if err != nil {
		return err
	}
	if st != loadNotExist {
		a.logf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds())
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// upgrade is aofUpgradePrepare: the old file becomes the base of a new
// manifest, persisted first, then moved into the directory.
func (a *AOF) upgrade(m *manifest, old string) error {
	if exists(a.path(a.fileName)) {
		a.warnf("Can't migrate the old AOF file %s: %s already exists in %s", a.fileName, a.fileName, a.dirName)
		return ErrLoad
	}
	if err := os.MkdirAll(a.dirPath, 0o755); err != nil {
		a.warnf("Can't open or create append-only dir %s: %s", a.dirName, strerror(err))
		return ErrLoad
	}
	m.base = &fileInfo{name: a.fileName, seq: 1, typ: typeBase, startOffset: -1, endOffset: -1}
	m.baseSeq = 1
	if err := a.persistManifest(m); err != nil {
		a.warnf("Can't persist the AOF manifest: %s", strerror(err))
		return ErrLoad
	}
	if err := os.Rename(old, a.path(a.fileName)); err != nil {
		a.warnf("Error trying to move the old AOF file %s into dir %s: %s", a.fileName, a.dirName, strerror(err))
		return ErrLoad
	}
	a.logf("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", a.fileName, a.dirName)
	return nil
}

// strerror is C's strerror for err's errno ("No such file or directory"),
// the text Redis's log lines carry; err's own text otherwise.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// loadAll is loadAppendOnlyFiles.
func (a *AOF) loadAll(m *manifest) (loadStatus, error) {
	if m.empty() {
		return loadNotExist, nil
	}
	var files []fileInfo
	if m.base != nil {
		files = append(files, *m.base)
	}
	files = append(files, m.incrs...)
	var total int64
	for _, f := range files {
		st, err := os.Stat(a.path(f.name))
		if err != nil {
			// a file the manifest lists is missing: fatal
			a.warnf("The append log file %s doesn't exist: %s", f.name, strerror(err))
			return loadFailed, ErrLoad
		}
		total += st.Size()
	}
	if total == 0 {
		return loadEmpty, nil
	}
	a.d.Loading(true, total)
	defer a.d.Loading(false, 0)
	var loaded int64
	for i, f := range files {
		last := i == len(files)-1
		start := time.Now()
		st, n, err := a.loadFile(f.name, loaded)
		loaded += n
		if err != nil {
			return loadFailed, err
		}
		if st == loadOK || ((st == loadTruncated || st == loadBrokenRecovered) && last) {
			kind := "incr"
			if f.typ == typeBase {
				kind = "base"
			}
			a.logf("DB loaded from %s file %s: %.3f seconds", kind, f.name, time.Since(start).Seconds())
		}
		if (st == loadTruncated || st == loadBrokenRecovered) && !last {
			a.d.Log.Warn("Fatal error: the truncated file is not the last file")
			return loadFailed, ErrLoad
		}
		if st == loadOpenErr || st == loadFailed {
			return st, ErrLoad
		}
	}
	a.curSize.Store(total)
	if m.base != nil {
		a.baseSize = a.fileSize(m.base.name)
	}
	return loadOK, nil
}

// loadFile is loadSingleAppendOnlyFile; n is the bytes it took.
func (a *AOF) loadFile(name string, before int64) (st loadStatus, n int64, err error) {
	path := a.path(name)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			a.warnf("The append log file %s doesn't exist: %s", name, strerror(err))
			return loadNotExist, 0, nil
		}
		a.warnf("Fatal error: can't open the append log file %s for reading: %s", name, strerror(err))
		return loadOpenErr, 0, nil
	}
	if len(data) == 0 {
		return loadEmpty, 0, nil
	}
	off := 0
	if bytes.HasPrefix(data, []byte("REDIS")) {
		oldStyle := name == a.fileName
		if oldStyle {
			a.d.Log.Info("Reading RDB preamble from AOF file...")
		} else {
			a.d.Log.Info("Reading RDB base file on AOF loading...")
		}
		size, err := a.d.LoadRDB(data)
		if err != nil {
			if errors.Is(err, ErrStopped) {
				return loadFailed, 0, err
			}
			if oldStyle {
				a.warnf("Error reading the RDB preamble of the AOF file %s, AOF loading aborted", name)
			} else {
				a.warnf("Error reading the RDB base file %s, AOF loading aborted", name)
			}
			return loadFailed, 0, nil
		}
		off = size
		a.d.Progress(before + int64(off))
		if oldStyle {
			a.d.Log.Info("Reading the remaining AOF tail...")
		}
	}
	p := parser{data: data, off: off}
	db := 0
	var tx [][][]byte
	inTx := false
	validUpTo, validBeforeMulti := off, off
	loops := 0
	delay := a.d.Config.Int("key-load-delay") // µs after each command (tests: a load that lasts)
	for {
		if loops%1024 == 0 {
			a.d.Progress(before + int64(p.off))
			if loops > 0 {
				if err := a.d.Yield(); err != nil {
					return loadFailed, int64(len(data)), ErrStopped
				}
				delay = a.d.Config.Int("key-load-delay") // clients may change it meanwhile
			}
		}
		loops++
		argv, res := p.next()
		if res == parseEOF {
			break
		}
		if res == parseShort {
			return a.shortRead(path, name, data, validUpTo)
		}
		if res == parseBad {
			return a.badFormat(path, name, data, validUpTo)
		}
		switch {
		case len(argv) == 1 && bytes.EqualFold(argv[0], wordMulti) && !inTx:
			validBeforeMulti = validUpTo
			inTx, tx = true, nil
		case len(argv) == 1 && bytes.EqualFold(argv[0], wordExec) && inTx:
			inTx = false
			if db, err = a.d.Apply(db, tx); err != nil {
				a.warnf("%s reading the append only file %s", err.Error(), name)
				return loadFailed, 0, nil
			}
			tx = nil
		case inTx:
			tx = append(tx, argv)
		default:
			if db, err = a.d.Apply(db, [][][]byte{argv}); err != nil {
				a.warnf("%s reading the append only file %s", err.Error(), name)
				return loadFailed, 0, nil
			}
		}
		validUpTo = p.off
		if delay > 0 {
			time.Sleep(time.Duration(delay) * time.Microsecond)
		} else if delay < 0 && loops%int(-delay) == 0 {
			time.Sleep(time.Microsecond)
		}
	}
	if inTx {
		a.warnf("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
		return a.shortRead(path, name, data, validBeforeMulti)
	}
	a.d.Progress(before + int64(len(data)))
	return loadOK, int64(len(data)), nil
}

var (
	wordMulti = []byte("MULTI")
	wordExec  = []byte("EXEC")
)

// shortRead is uxeof: the file ends inside a command (or a transaction).
func (a *AOF) shortRead(path, name string, data []byte, validUpTo int) (loadStatus, int64, error) {
	if a.d.Config.Bool("aof-load-truncated") {
		a.warnf("!!! Warning: short read while loading the AOF file %s!!!", name)
		a.warnf("!!! Truncating the AOF %s at offset %d !!!", name, validUpTo)
		if a.truncate(path, int64(validUpTo)) {
			a.warnf("AOF %s loaded anyway because aof-load-truncated is enabled", path)
			return loadTruncated, int64(len(data)), nil
		}
	}
	a.warnf("Unexpected end of file reading the append only file %s. You can: "+
		"1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
		"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.", name)
	return loadFailed, 0, nil
}

// badFormat is fmterr: a command that does not parse. With
// aof-load-corrupt-tail-max-size set, a small enough broken tail is cut off.
func (a *AOF) badFormat(path, name string, data []byte, validUpTo int) (loadStatus, int64, error) {
	rest := int64(len(data) - validUpTo)
	if max := a.d.Config.Int("aof-load-corrupt-tail-max-size"); max > 0 && rest < max {
		a.d.Log.Warn("!!! Warning: corrupt AOF file tail!!!")
		a.warnf("!!! Truncating the AOF %s at offset %d (remaining %d) !!!", path, validUpTo, rest)
		if a.truncate(path, int64(validUpTo)) {
			a.warnf("AOF %s loaded anyway because aof-load-corrupt-tail-max-size is enabled", path)
			return loadBrokenRecovered, int64(len(data)), nil
		}
	}
	a.warnf("Bad file format reading the append only file %s at offset %d. "+
		"make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
		"Alternatively you can set the 'aof-load-corrupt-tail-max-size' configuration option to %d and restart the server.",
		path, validUpTo, rest)
	return loadFailed, 0, nil
}

// truncate is truncateAppendOnlyFile.
func (a *AOF) truncate(path string, size int64) bool {
	if err := os.Truncate(path, size); err != nil {
		a.warnf("Error truncating the AOF file %s: %v", path, err)
		return false
	}
	return true
}

// parser reads the commands of an AOF as loadSingleAppendOnlyFile does
// (fgets and fread: a line per header, the bulk's bytes, two bytes after it).
type parser struct {
	data []byte
	off  int
}

type parseResult int

const (
	parseOK    parseResult = iota
	parseEOF               // no more commands
	parseShort             // the file ends inside a command (readerr at EOF)
	parseBad               // fmterr
)

// line returns the next line (with its newline, or to the end of the data),
// skipping nothing.
func (p *parser) line() ([]byte, bool) {
	if p.off >= len(p.data) {
		return nil, false
	}
	rest := p.data[p.off:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		p.off += i + 1
		return rest[:i+1], true
	}
	p.off = len(p.data)
	return rest, true
}

// next parses one command; argv aliases the file's bytes.
func (p *parser) next() ([][]byte, parseResult) {
	var ln []byte
	for {
		l, ok := p.line()
		if !ok {
			return nil, parseEOF
		}
		if l[0] == '#' {
			continue // annotations
		}
		ln = l
		break
	}
	if ln[0] != '*' {
		return nil, parseBad
	}
	if len(ln) == 1 {
		return nil, parseShort // "*" and the end of the file
	}
	argc := atoi(ln[1:])
	if argc < 1 {
		return nil, parseBad
	}
	if !bytes.HasSuffix(ln, []byte("\n")) {
		return nil, parseShort // the header is the file's last bytes
	}
	argv := make([][]byte, 0, min(argc, 1024))
	for j := 0; j < argc; j++ {
		l, ok := p.line()
		if !ok {
			return nil, parseShort
		}
		if l[0] != '$' {
			return nil, parseBad
		}
		n := atoi(l[1:])
		if n < 0 {
			n = 0
		}
		if n > 0 && (!bytes.HasSuffix(l, []byte("\n")) || len(p.data)-p.off < n) {
			return nil, parseShort
		}
		argv = append(argv, p.data[p.off:p.off+n])
		p.off += n
		if len(p.data)-p.off < 2 {
			p.off = len(p.data)
			return nil, parseShort
		}
		p.off += 2
	}
	return argv, parseOK
}

// atoi is C's atoi / strtol on the line: leading digits, 0 when none.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
		if n > 1<<40 {
			n = 1 << 40
		}
	}
	if neg {
		return -n
	}
	return n
}

// OpenAtStart is aofOpenIfNeededOnServerStart: with the AOF on, a dataset
// that has no AOF gets a base file made now, then the last incremental file
// is opened (or created) for appending and the manifest persisted.
func (a *AOF) OpenAtStart() error {
	if err := os.MkdirAll(a.dirPath, 0o755); err != nil {
		a.warnf("Can't open or create append-only dir %s: %v", a.dirName, err)
		return ErrLoad
	}
	m := a.man.clone()
	if m.base == nil && len(m.incrs) == 0 {
		name := m.newBase(a, a.d.Config.Bool("aof-use-rdb-preamble"))
		var buf bytes.Buffer
		if err := a.baseStream().WriteAll(&buf); err != nil {
			return err
		}
		if err := writeFileSync(a.path(name), buf.Bytes()); err != nil {
			a.warnf("Can't write the AOF base file %s: %v", name, err)
			return ErrLoad
		}
		a.logf("Creating AOF base file %s on server start", name)
		a.baseSize = int64(buf.Len())
	}
	created := len(m.incrs) == 0
	if created {
		m.newIncr(a)
	}
	name := m.lastIncr()
	f, size, err := a.openIncr(name, false)
	if err != nil {
		a.warnf("Can't open the append-only file %s: %v", name, err)
		return ErrLoad
	}
	if err := a.persistManifest(m); err != nil {
		_ = f.Close()
		a.warnf("Can't persist the AOF manifest: %v", err)
		return ErrLoad
	}
	a.man = m
	a.setState(On)
	a.selDB = -1
	a.switchFile(f, size)
	if created {
		a.logf("Creating AOF incr file %s on server start", name)
	} else {
		a.logf("Opening AOF incr file %s on server start", name)
	}
	if a.curSize.Load() == 0 {
		a.curSize.Store(a.baseSize + size)
	}
	a.startWriter()
	return nil
}

// Enable is startAppendOnly (CONFIG SET appendonly yes): the AOF waits for
// its first rewrite, which starts now; the appends go to a temporary
// incremental file until it ends. Engine lock.
func (a *AOF) Enable(childBusy bool) error {
	if a.state != Off {
		return nil
	}
	a.dirPath = a.dir()
	if err := os.MkdirAll(a.dirPath, 0o755); err != nil {
		a.warnf("Can't open or create append-only dir %s: %v", a.dirName, err)
		return err
	}
	if a.man == nil {
		m, err := a.readManifest()
		if err != nil {
			return err
		}
		a.man = m
	}
	if a.rw != nil {
		// a BGREWRITEAOF of the AOF off: its base would miss the temporary
		// file; start over (Redis kills the child)
		a.killRewrite()
	}
	a.setState(WaitRewrite)
	a.selDB = -1
	a.startWriter()
	if childBusy {
		// a BGSAVE runs: the rewrite starts after it (Redis cannot fork
		// twice); until then the appends wait in memory
		a.d.Log.Warn("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.")
		a.scheduled = true
		return nil
	}
	if err := a.startRewrite(); err != nil {
		a.setState(Off)
		_ = a.closeFiles()
		_ = os.Remove(a.path(a.tempIncrName()))
		a.d.Log.Warn("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.")
		return err
	}
	return nil
}

// Disable is stopAppendOnly (CONFIG SET appendonly no): what is pending is
// written and fsynced, a rewrite in progress is killed, the file closed.
// Engine lock.
func (a *AOF) Disable() {
	if a.state == Off {
		return
	}
	wasWaiting := a.state == WaitRewrite
	if a.rw != nil {
		a.d.Log.Info("Killing running AOF rewrite child")
		a.killRewrite()
	}
	_ = a.closeFiles()
	a.recordEndOffset()
	if wasWaiting {
		_ = os.Remove(a.path(a.tempIncrName()))
	}
	a.setState(Off)
	a.scheduled = false
	a.pendSeq = 0
	a.written.Store(0)
	a.synced.Store(0)
	a.received.Store(0)
}

// DebugLoad is DEBUG LOADAOF's reload: the files are loaded again into the
// (emptied) dataset. The caller flushed what was pending and emptied the
// dataset. Engine lock.
func (a *AOF) DebugLoad() error {
	if a.dirPath == "" {
		a.dirPath = a.dir()
	}
	m, err := a.readManifest()
	if err != nil {
		return err
	}
	a.man = m
	a.delHistory()
	if _, err := a.loadAll(a.man); err != nil {
		return err
	}
	return nil
}

func (a *AOF) String() string { return fmt.Sprintf("aof(%s)", strconv.Quote(a.dirPath)) }
