package difftest

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// COMMAND DOCS against redis-server 8.6.3, whose docs HotKV replies: every
// command of HotKV's table, byte for byte, in RESP2 and RESP3. The containers
// (CLIENT, CONFIG, XGROUP...) are compared restricted to the subcommands HotKV
// has, in name order: Redis lists them in its hash table's order, and has some
// HotKV lacks.

// tableCommands lists HotKV's commands (COMMAND LIST) and containers.
func tableCommands(p *pair) (cmds []string, containers map[string]bool) {
	containers = map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(p.hkOnly("COMMAND", "LIST")), "\r\n") {
		if l == "" || l[0] == '*' || l[0] == '$' || notInRedis[l] {
			continue
		}
		cmds = append(cmds, l)
	}
	for _, l := range strings.Split(p.hkOnly("COMMAND", "LIST", "FILTERBY", "PATTERN", "*|*"), "\r\n") {
		if i := strings.IndexByte(l, '|'); i > 0 && l[0] != '$' && !notInRedis[l[:i]] {
			containers[l[:i]] = true
		}
	}
	sort.Strings(cmds)
	return cmds, containers
}

// notInRedis are the commands HotKV serves that Redis 8.6 has not (Valkey's
// DELIFEQ, decision 0041; Redis 8.12's BLESS, decision 0044): nothing of
// theirs can be compared.
var notInRedis = map[string]bool{"delifeq": true, "bless": true,
	"bless|set": true, "bless|clear": true, "bless|get": true, "bless|scan": true,
	"hotkv.locks": true, "hotkv.locks|help": true, "hotkv.locks|list": true, "hotkv.locks|reset": true,
	"hotkv.locks|stats": true, "hotkv.locks|top": true}

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

// dropKey removes key and its value from a map (RESP3 %) or a flat RESP2 array.
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

// normalizeDocs puts the subcommands maps of a COMMAND DOCS reply in name
// order, keeping only the names keep accepts (nil: all).
func normalizeDocs(reply string, keep func(string) bool) string {
	pos := 0
	root := parseRESPNode(reply, &pos)
	var doc func(d *rnode)
	doc = func(d *rnode) {
		for i := 0; i+1 < len(d.kids); i += 2 {
			if d.kids[i].s != "subcommands" {
				continue
			}
			subs := d.kids[i+1]
			type kv struct{ k, v *rnode }
			var kvs []kv
			for j := 0; j+1 < len(subs.kids); j += 2 {
				if keep == nil || keep(subs.kids[j].s) {
					kvs = append(kvs, kv{subs.kids[j], subs.kids[j+1]})
				}
			}
			sort.Slice(kvs, func(a, b int) bool { return kvs[a].k.s < kvs[b].k.s })
			subs.kids = nil
			for _, e := range kvs {
				subs.kids = append(subs.kids, e.k, e.v)
				doc(e.v)
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

func sameDocs(t *testing.T, p *pair, keep func(string) bool, args ...string) {
	t.Helper()
	hk, rd := p.do(args...)
	h, r := normalizeDocs(hk, keep), normalizeDocs(rd, keep)
	if h != r {
		i := 0
		for i < len(h) && i < len(r) && h[i] == r[i] {
			i++
		}
		from := max(0, i-200)
		t.Errorf("%.80s differ at byte %d:\n hotkv ...%s\n redis ...%s", strings.Join(args, " "), i,
			hotkvtest.Escape(h[from:min(len(h), i+200)]), hotkvtest.Escape(r[from:min(len(r), i+200)]))
	}
}

// TestDiffCommandDocs compares COMMAND DOCS of every command, alone and all at
// once, and of the containers, in RESP2 and RESP3.
func TestDiffCommandDocs(t *testing.T) {
	p := newPair(t)
	p3 := newPair3(t, p)
	cmds, containers := tableCommands(p)
	if len(cmds) < 200 || len(containers) < 8 {
		t.Fatalf("only %d commands, %d containers", len(cmds), len(containers))
	}
	has := map[string]bool{}
	for _, l := range strings.Split(p.hkOnly("COMMAND", "LIST", "FILTERBY", "PATTERN", "*|*"), "\r\n") {
		has[l] = true
	}
	keep := func(n string) bool { return has[n] }
	for _, q := range []*pair{p, p3} {
		for _, n := range cmds {
			sameDocs(t, q, keep, "COMMAND", "DOCS", n)
		}
		// several at once, unknown names skipped, any case, duplicates kept
		sameDocs(t, q, keep, append([]string{"COMMAND", "DOCS"}, cmds...)...)
		sameDocs(t, q, keep, "COMMAND", "DOCS", "nosuch", "GET", "get", "client|", "|get", "get|x", "Client|GetName", "config|get|x", "ZSCORE", "xgroup|create")
		sameDocs(t, q, keep, "COMMAND", "DOCS", "nosuch")
		sameDocs(t, q, keep, "COMMAND", "DOCS", "nosuch", "nosuch2")
	}
}
