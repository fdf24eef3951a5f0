package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// torn cuts the last incremental file of the AOF at every byte offset of its
// last cfg.TornCmds commands, starts the server on each, and checks that it
// loads (aof-load-truncated yes) the longest whole-command prefix: the
// counters and lists (no TTLs: the check does not depend on time) equal what
// the file cut at that command boundary gives, and the file is cut back to
// it. It returns how many torn files loaded.
func torn(ctx context.Context, cfg Config) (int, error) {
	aofDir := filepath.Join(cfg.Dir, "appendonlydir")
	incrs, _ := filepath.Glob(filepath.Join(aofDir, "*.incr.aof"))
	if len(incrs) == 0 {
		return 0, fmt.Errorf("no incremental file in %s", aofDir)
	}
	sort.Slice(incrs, func(i, j int) bool { return seqOf(incrs[i]) < seqOf(incrs[j]) })
	last := incrs[len(incrs)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		return 0, err
	}
	starts := commandStarts(data)
	if len(starts) < cfg.TornCmds+1 {
		return 0, fmt.Errorf("%s has %d commands, fewer than %d", last, len(starts), cfg.TornCmds+1)
	}
	first := starts[len(starts)-cfg.TornCmds]
	// the state at each boundary, loaded from the file cut there
	want := map[int]string{}
	boundaries := append(starts[len(starts)-cfg.TornCmds:], len(data))
	n := 0
	for off := first; off <= len(data); off++ {
		b := 0
		for _, x := range boundaries {
			if x <= off {
				b = x
			}
		}
		if _, ok := want[b]; !ok {
			st, _, err := loadCut(ctx, cfg, last, data, b)
			if err != nil {
				return n, fmt.Errorf("boundary %d: %w", b, err)
			}
			want[b] = st
		}
		if off == b {
			continue
		}
		st, after, err := loadCut(ctx, cfg, last, data, off)
		if err != nil {
			return n, fmt.Errorf("cut at %d: %w", off, err)
		}
		if st != want[b] {
			return n, fmt.Errorf("cut at %d: loaded %q, want the prefix up to %d: %q", off, st, b, want[b])
		}
		// the torn bytes were cut off: the file is the prefix, then only
		// whole commands (the restarted server appends its own)
		if !bytes.HasPrefix(after, data[:b]) || !wellFormed(after[b:]) {
			return n, fmt.Errorf("cut at %d: the file was not cut back to %d bytes", off, b)
		}
		n++
	}
	return n, nil
}

func seqOf(path string) int {
	parts := strings.Split(filepath.Base(path), ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if n, err := strconv.Atoi(parts[i]); err == nil {
			return n
		}
	}
	return 0
}

// commandStarts are the offsets where the RESP commands of an AOF start.
func commandStarts(data []byte) []int {
	var starts []int
	off := 0
	for off < len(data) {
		if data[off] == '#' {
			i := bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
			continue
		}
		starts = append(starts, off)
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 || data[off] != '*' {
			break
		}
		argc, _ := strconv.Atoi(strings.TrimSpace(string(data[off+1 : off+i])))
		off += i + 1
		for j := 0; j < argc && off < len(data); j++ {
			i = bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				return starts
			}
			n, _ := strconv.Atoi(strings.TrimSpace(string(data[off+1 : off+i])))
			off += i + 1 + n + 2
		}
	}
	return starts
}

// wellFormed reports whether data is whole RESP commands and nothing else.
func wellFormed(data []byte) bool {
	off := 0
	line := func() (string, bool) {
		i := bytes.Index(data[off:], []byte("\r\n"))
		if i < 0 {
			return "", false
		}
		l := string(data[off : off+i])
		off += i + 2
		return l, true
	}
	for off < len(data) {
		l, ok := line()
		if !ok || !strings.HasPrefix(l, "*") {
			return false
		}
		argc, err := strconv.Atoi(l[1:])
		if err != nil || argc < 1 {
			return false
		}
		for j := 0; j < argc; j++ {
			l, ok := line()
			if !ok || !strings.HasPrefix(l, "$") {
				return false
			}
			n, err := strconv.Atoi(l[1:])
			if err != nil || n < 0 || off+n+2 > len(data) || string(data[off+n:off+n+2]) != "\r\n" {
				return false
			}
			off += n + 2
		}
	}
	return true
}

// loadCut copies the directory with the file cut at off, starts the server
// on it and returns its counters and lists, and the file as it left it.
func loadCut(ctx context.Context, cfg Config, file string, data []byte, off int) (string, []byte, error) {
	dir, err := os.MkdirTemp("", "hotkv-torn-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Dir(file)
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", nil, err
	}
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", nil, err
		}
		if e.Name() == filepath.Base(file) {
			b = data[:off]
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return "", nil, err
		}
	}
	c := cfg
	c.Dir = dir
	srv, err := start(ctx, c)
	if err != nil {
		return "", nil, err
	}
	var sb strings.Builder
	for _, pat := range []string{"counter:*", "list:*"} {
		keys, err := srv.client.Keys(ctx, pat).Result()
		if err != nil {
			srv.kill()
			return "", nil, err
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, "counter:") {
				v, _ := srv.client.Get(ctx, k).Result()
				fmt.Fprintf(&sb, "%s=%s ", k, v)
			} else {
				n, _ := srv.client.LLen(ctx, k).Result()
				fmt.Fprintf(&sb, "%s#%d ", k, n)
			}
		}
	}
	srv.kill() // before reading the file: no append is half written
	after, err := os.ReadFile(filepath.Join(dst, filepath.Base(file)))
	if err != nil {
		return "", nil, err
	}
	return sb.String(), after, nil
}
