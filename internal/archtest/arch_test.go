// Package archtest keeps the project rules of docs/ARCHITECTURE.md as tests: the layer
// import directions, no wall-clock reads in the core packages, and the one
// execution path (exec_test.go).
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/hotkv/hotkv/"

// allowed lists, per package, the HotKV packages it may import (docs/ARCHITECTURE.md §2).
var allowed = map[string][]string{
	"internal/resp":       {},
	"internal/glob":       {},
	"internal/clock":      {},
	"internal/keyspace":   {},
	"internal/acl":        {"internal/glob", "internal/resp"},
	"internal/config":     {"internal/glob", "internal/resp", "internal/acl"},
	"internal/command":    {"internal/keyspace", "internal/resp", "internal/glob", "internal/rdb", "internal/acl", "internal/introspect", "internal/locks"},
	"internal/introspect": {"internal/resp"},
	"internal/locks":      {},
	// the metrics listener: it reads a Snapshot the server hands it
	"internal/metrics":       {"internal/introspect", "internal/locks"},
	"internal/rdb":           {"internal/keyspace", "internal/resp", "internal/rdb/lzf", "internal/rdb/crc64"},
	"internal/rdb/lzf":       {},
	"internal/rdb/crc64":     {},
	"internal/engine":        {"internal/command", "internal/keyspace", "internal/clock"},
	"internal/pubsub":        {"internal/glob"},
	"internal/script":        {"internal/resp", "internal/rdb/lzf", "internal/rdb/crc64"},
	"internal/script/lualib": {},
	"internal/server":        {"internal/acl", "internal/command", "internal/engine", "internal/resp", "internal/keyspace", "internal/clock", "internal/config", "internal/glob", "internal/pubsub", "internal/script", "internal/script/lualib", "internal/rdb", "internal/server/persist", "internal/server/aof", "internal/server/notify", "internal/server/tracking", "internal/server/repl", "internal/server/infofmt", "internal/server/network", "internal/introspect", "internal/locks", "internal/metrics"},
	// the network side (decision 0037): listeners, event loops, connections.
	// It hands a connection's commands to the server's Session and cannot
	// run one itself: it imports neither the command table nor the keyspace
	"internal/server/network": {"internal/clock", "internal/config", "internal/resp"},
	// the features that hang off the execution path (decision 0037): they
	// never import internal/server; it hands them what they use
	"internal/server/aof":      {"internal/config", "internal/clock", "internal/resp", "internal/keyspace", "internal/rdb", "internal/server/infofmt", "internal/childwrite"},
	"internal/server/persist":  {"internal/command", "internal/config", "internal/keyspace", "internal/clock", "internal/rdb", "internal/server/infofmt", "internal/logging", "internal/childwrite"},
	"internal/server/notify":   {"internal/config", "internal/keyspace", "internal/pubsub"},
	"internal/server/tracking": {"internal/command", "internal/keyspace"},
	"internal/server/repl":     {"internal/command", "internal/resp"},
	"internal/server/infofmt":  {},
	// go generate's program that writes the command docs data
	"internal/command/internal/gendocs": {},
	"internal/hotkvtest":                {"internal/server", "internal/clock", "internal/config"},
	"internal/difftest":                 {"internal/hotkvtest"},
	"cmd/hotkv":                         {"internal/server", "internal/config", "internal/logging"},
	"internal/logging":                  {},
	// the child process that writes a snapshot's file (decision 0045)
	"internal/childwrite": {},
	"internal/cli":        {"internal/resp"},
	"cmd/hotkv-cli":       {"internal/cli"},
	"internal/crashtest":  {},
	"cmd/hotkv-crash":     {"internal/crashtest"},
}

// core packages: deterministic, no clock reads (time is an input).
var core = []string{"internal/introspect", "internal/locks", "internal/acl", "internal/keyspace", "internal/command", "internal/resp", "internal/glob", "internal/pubsub", "internal/script", "internal/rdb"}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// sources returns the non-test Go files of pkg, parsed.
func sources(t *testing.T, pkg string) []*ast.File {
	t.Helper()
	dir := filepath.Join(root(t), pkg)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fs := token.NewFileSet()
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fs, filepath.Join(dir, n), nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func TestLayerImports(t *testing.T) {
	for pkg, ok := range allowed {
		okSet := map[string]bool{}
		for _, p := range ok {
			okSet[p] = true
		}
		for _, f := range sources(t, pkg) {
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if !strings.HasPrefix(path, module) {
					continue
				}
				dep := strings.TrimPrefix(path, module)
				if !okSet[dep] {
					t.Errorf("%s imports %s: not allowed by docs/ARCHITECTURE.md §2", pkg, dep)
				}
			}
		}
	}
}

// Every package under internal/ and cmd/, nested ones too, must be listed,
// so a new one gets a rule.
func TestEveryPackageHasARule(t *testing.T) {
	r := root(t)
	seen := map[string]bool{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(r, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(r, filepath.Dir(path))
			p := filepath.ToSlash(rel)
			if p == "internal/archtest" || strings.Contains(p, "/testdata") {
				return nil
			}
			if _, ok := allowed[p]; !ok && !seen[p] {
				t.Errorf("package %s has no import rule in archtest", p)
				seen[p] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestNoWallClockInCore(t *testing.T) {
	for _, pkg := range core {
		dir := filepath.Join(root(t), pkg)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			n := e.Name()
			if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			f, err := parser.ParseFile(fs, filepath.Join(dir, n), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(nd ast.Node) bool {
				sel, ok := nd.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since") {
					t.Errorf("%s/%s:%d: time.%s in a core package (time is an input, docs/ARCHITECTURE.md §4)",
						pkg, n, fs.Position(sel.Pos()).Line, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
