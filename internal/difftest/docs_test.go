package difftest

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// COMMAND DOCS against redis-server 7.0. HotKV replies Redis 8.x's docs; they
// differ from 7.0's by design in two ways that the comparison removes from both
// replies: 7.2 reworded every summary, and 7.2 added display_text to every
// argument that is not a oneof or a block. Everything else (complexity,
// history, doc flags, deprecation, argument names, types, tokens, since, flags,
// key spec indexes, nesting, map/set/array types and their order) must match
// byte for byte, for every command whose docs 8.x did not otherwise change:
// those whose line in internal/command/testdata/docs/redis8.jsonl changes only
// the summary. Container commands are compared through their subcommands
// (HotKV has fewer subcommands than Redis, so the containers' maps differ).

// unchangedDocs lists the commands whose 8.x docs differ from 7.0's only in the summary.
func unchangedDocs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../command/testdata/docs/redis8.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "//") || l == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		only := true
		for k := range m {
			if k != "cmd" && k != "src" && k != "summary" {
				only = false
			}
		}
		var name string
		_ = json.Unmarshal(m["cmd"], &name)
		switch name {
		case "client", "command", "config", "function", "memory", "module", "object", "pubsub", "script", "xgroup", "xinfo":
			continue // containers
		}
		if only {
			out = append(out, name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rnode is a RESP value with its wire type kept.
type rnode struct {
	typ  byte   // '$' '+' ':' '*' '~' '%' ...
	s    string // scalar payload
	kids []*rnode
}

func parseRESPNode(b string, pos *int) *rnode {
	i := strings.Index(b[*pos:], "\r\n")
	line := b[*pos : *pos+i]
	*pos += i + 2
	n := &rnode{typ: line[0]}
	switch n.typ {
	case '$':
		l, _ := strconv.Atoi(line[1:])
		if l >= 0 {
			n.s = b[*pos : *pos+l]
			*pos += l + 2
		} else {
			n.s = line[1:]
		}
	case '*', '~', '%':
		c, _ := strconv.Atoi(line[1:])
		if n.typ == '%' {
			c *= 2
		}
		for j := 0; j < c; j++ {
			n.kids = append(n.kids, parseRESPNode(b, pos))
		}
	default:
		n.s = line[1:]
	}
	return n
}

func (n *rnode) encode(sb *strings.Builder) {
	switch n.typ {
	case '$':
		if n.s == "-1" && n.kids == nil {
			sb.WriteString("$-1\r\n")
			return
		}
		sb.WriteString("$" + strconv.Itoa(len(n.s)) + "\r\n" + n.s + "\r\n")
	case '*', '~', '%':
		c := len(n.kids)
		if n.typ == '%' {
			c /= 2
		}
		sb.WriteString(string(n.typ) + strconv.Itoa(c) + "\r\n")
		for _, k := range n.kids {
			k.encode(sb)
		}
	default:
		sb.WriteString(string(n.typ) + n.s + "\r\n")
	}
}

// pairs gives the key/value pairs of a map (RESP3 %) or a flat RESP2 array.
func (n *rnode) dropKey(key string) {
	var kept []*rnode
	for i := 0; i+1 < len(n.kids); i += 2 {
		if n.kids[i].s == key {
			continue
		}
		kept = append(kept, n.kids[i], n.kids[i+1])
	}
	n.kids = kept
}

// normalizeArgs removes display_text from every argument map of a list.
func normalizeArgs(list *rnode) {
	for _, a := range list.kids {
		a.dropKey("display_text")
		for i := 0; i+1 < len(a.kids); i += 2 {
			if a.kids[i].s == "arguments" {
				normalizeArgs(a.kids[i+1])
			}
		}
	}
}

// normalizeDocs removes summaries and display texts from a COMMAND DOCS reply.
// With keepSubs, the subcommands maps keep only the names keepSubs accepts, in
// name order (Redis lists them in its hash table's order).
func normalizeDocs(reply string, keepSubs ...func(string) bool) string {
	pos := 0
	root := parseRESPNode(reply, &pos)
	var doc func(d *rnode)
	doc = func(d *rnode) {
		d.dropKey("summary")
		for i := 0; i+1 < len(d.kids); i += 2 {
			switch d.kids[i].s {
			case "arguments":
				normalizeArgs(d.kids[i+1])
			case "subcommands":
				subs := d.kids[i+1]
				if len(keepSubs) > 0 {
					type kv struct{ k, v *rnode }
					var kvs []kv
					for j := 0; j+1 < len(subs.kids); j += 2 {
						if keepSubs[0](subs.kids[j].s) {
							kvs = append(kvs, kv{subs.kids[j], subs.kids[j+1]})
						}
					}
					sort.Slice(kvs, func(a, b int) bool { return kvs[a].k.s < kvs[b].k.s })
					subs.kids = nil
					for _, e := range kvs {
						subs.kids = append(subs.kids, e.k, e.v)
					}
				}
				for j := 1; j < len(subs.kids); j += 2 {
					doc(subs.kids[j])
				}
			}
		}
	}
	for j := 1; j < len(root.kids); j += 2 {
		doc(root.kids[j])
	}
	var sb strings.Builder
	root.encode(&sb)
	return sb.String()
}

func sameDocs(t *testing.T, p *pair, args ...string) {
	t.Helper()
	hk, rd := p.do(args...)
	h, r := normalizeDocs(hk), normalizeDocs(rd)
	if h != r {
		i := 0
		for i < len(h) && i < len(r) && h[i] == r[i] {
			i++
		}
		from := max(0, i-200)
		t.Errorf("%.80s (summaries and display_text removed) differ at byte %d:\n hotkv ...%s\n redis ...%s", strings.Join(args, " "), i,
			hotkvtest.Escape(h[from:min(len(h), i+200)]), hotkvtest.Escape(r[from:min(len(r), i+200)]))
	}
}

// TestDiffCommandDocs compares COMMAND DOCS with redis-server 7.0, RESP2 and RESP3.
func TestDiffCommandDocs(t *testing.T) {
	names := unchangedDocs(t)
	if len(names) < 100 {
		t.Fatalf("only %d commands to compare", len(names))
	}
	p := newPair(t)
	p3 := newPair3(t, p)
	for _, q := range []*pair{p, p3} {
		for _, n := range names {
			sameDocs(t, q, "COMMAND", "DOCS", n)
		}
		// several at once, unknown names skipped, any case, duplicates kept
		all := append([]string{"COMMAND", "DOCS"}, names...)
		sameDocs(t, q, all...)
		sameDocs(t, q, "COMMAND", "DOCS", "nosuch", "GET", "get", "client|", "|get", "get|x", "Client|GetName", "config|get|x", "ZSCORE")
		sameDocs(t, q, "COMMAND", "DOCS", "nosuch")
		sameDocs(t, q, "COMMAND", "DOCS", "nosuch", "nosuch2")
	}
}

// TestDiffCommandDocsContainers compares the containers (summaries and
// display_text removed) with Redis's, restricted to the subcommands HotKV has.
func TestDiffCommandDocsContainers(t *testing.T) {
	p := newPair(t)
	p3 := newPair3(t, p)
	for _, q := range []*pair{p, p3} {
		for _, c := range []string{"object", "pubsub", "command", "config", "function", "script", "client", "memory", "xgroup", "xinfo"} {
			hk, rd := q.do("COMMAND", "DOCS", c)
			has := map[string]bool{}
			for _, l := range strings.Split(q.hkOnly("COMMAND", "LIST", "FILTERBY", "PATTERN", c+"|*"), "\r\n") {
				has[l] = true
			}
			// subcommands whose docs changed in 8.x are compared in the golden tests
			changed := map[string]bool{"client|kill": true, "client|list": true, "client|pause": true,
				"client|reply": true, "client|unblock": true, "client|no-touch": true, "client|setinfo": true,
				"command|getkeys": true, "command|getkeysandflags": true, "config|get": true, "config|set": true,
				"function|flush": true, "script|flush": true}
			keep := func(n string) bool { return has[n] && !changed[n] }
			h, r := normalizeDocs(hk, keep), normalizeDocs(rd, keep)
			if h != r {
				t.Errorf("COMMAND DOCS %s differs (summaries, display_text and the subcommands HotKV lacks or whose docs 8.x changed removed):\n hotkv %s\n redis %s",
					c, hotkvtest.Escape(h), hotkvtest.Escape(r))
			}
		}
	}
}

// TestDiffCommandDocsAll: COMMAND DOCS with no argument gives, for every
// command whose docs 8.x changed only in the summary, Redis's entry.
func TestDiffCommandDocsAll(t *testing.T) {
	names := map[string]bool{}
	for _, n := range unchangedDocs(t) {
		names[n] = true
	}
	p := newPair(t)
	p3 := newPair3(t, p)
	for _, q := range []*pair{p, p3} {
		hk, rd := q.do("COMMAND", "DOCS")
		entries := func(reply string) map[string]string {
			pos := 0
			root := parseRESPNode(reply, &pos)
			out := map[string]string{}
			for j := 0; j+1 < len(root.kids); j += 2 {
				one := &rnode{typ: root.typ, kids: []*rnode{root.kids[j], root.kids[j+1]}}
				var sb strings.Builder
				one.encode(&sb)
				out[root.kids[j].s] = normalizeDocs(sb.String())
			}
			return out
		}
		he, re := entries(hk), entries(rd)
		compared := 0
		for n := range names {
			if strings.Contains(n, "|") {
				continue
			}
			if he[n] == "" {
				t.Errorf("COMMAND DOCS: no entry for %s", n)
				continue
			}
			if he[n] != re[n] {
				t.Errorf("COMMAND DOCS: entry for %s differs:\n hotkv %s\n redis %s", n, hotkvtest.Escape(he[n]), hotkvtest.Escape(re[n]))
			}
			compared++
		}
		if compared < 100 {
			t.Errorf("only %d entries compared", compared)
		}
	}
}
