package command

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite testdata/docs/spec_disagreements.txt")

// allSpecs lists every command and subcommand of the table by full name.
func allSpecs(t *testing.T) map[string]*Spec {
	t.Helper()
	out := map[string]*Spec{}
	for _, s := range NewTable().All() {
		out[s.FullName()] = s
		for _, sub := range s.Subs {
			out[sub.FullName()] = sub
		}
	}
	return out
}

// TestDocsCoverTable: every command and subcommand of the table has COMMAND
// DOCS data (add a line to testdata/docs/redis8.jsonl and run go generate), and
// no docs data exists for a command the table lacks.
func TestDocsCoverTable(t *testing.T) {
	specs := allSpecs(t)
	for name := range specs {
		if DocFor(name) == nil {
			t.Errorf("%s: no COMMAND DOCS data (testdata/docs/redis8.jsonl, then go generate ./internal/command)", name)
		}
	}
	for _, name := range DocNames() {
		if specs[name] == nil {
			t.Errorf("%s: COMMAND DOCS data for a command the table does not have", name)
		}
	}
}

// TestDocsAgreeWithSpecs lists where a Spec's Summary or Since differs from the
// COMMAND DOCS data (which COMMAND DOCS replies); Group too. The list is kept in
// testdata/docs/spec_disagreements.txt so that it is visible and shrinks as the
// group files are fixed: the test fails when the list changes either way (run
// with -update to rewrite it after fixing a Spec).
func TestDocsAgreeWithSpecs(t *testing.T) {
	var lines []string
	for name, s := range allSpecs(t) {
		d := DocFor(name)
		if d == nil {
			continue
		}
		if s.Summary != d.Summary {
			lines = append(lines, name+"\tsummary\t"+s.Summary+"\t"+d.Summary)
		}
		if s.Since != d.Since {
			lines = append(lines, name+"\tsince\t"+s.Since+"\t"+d.Since)
		}
		if s.Group != d.Group {
			lines = append(lines, name+"\tgroup\t"+s.Group+"\t"+d.Group)
		}
	}
	sort.Strings(lines)
	got := "# command\tfield\tSpec (group file)\tCOMMAND DOCS (Redis 8)\n" + strings.Join(lines, "\n") + "\n"
	const path = "testdata/docs/spec_disagreements.txt"
	if *updateDocs {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("Spec/COMMAND DOCS disagreements changed (fix the Spec, then go test -run TestDocsAgreeWithSpecs -update-docs):\n%s", got)
	}
	if len(lines) > 0 {
		t.Logf("%d Spec fields disagree with COMMAND DOCS (listed in %s)", len(lines), path)
	}
}

// TestSummaryAndSinceDeclaredOnce: a Spec literal does not repeat the summary
// or since of its COMMAND DOCS entry (the table takes them from it,
// fillFromDocs); it states them only where HotKV's differ.
func TestSummaryAndSinceDeclaredOnce(t *testing.T) {
	byName := map[string][]*CommandDoc{} // last name component -> entries
	for _, full := range DocNames() {
		n := full[strings.LastIndexByte(full, '|')+1:]
		byName[n] = append(byName[n], DocFor(full))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "docs_data.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			fields := map[string]string{}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				k, ok1 := kv.Key.(*ast.Ident)
				v, ok2 := kv.Value.(*ast.BasicLit)
				if ok1 && ok2 && v.Kind == token.STRING {
					fields[k.Name], _ = strconv.Unquote(v.Value)
				}
			}
			name, ok := fields["Name"]
			if !ok {
				return true
			}
			for _, d := range byName[name] {
				if s, ok := fields["Summary"]; ok && s == d.Summary {
					t.Errorf("%s: %s declares the summary COMMAND DOCS already has", fset.Position(lit.Pos()), name)
				}
				if s, ok := fields["Since"]; ok && s == d.Since {
					t.Errorf("%s: %s declares the since COMMAND DOCS already has", fset.Position(lit.Pos()), name)
				}
			}
			return true
		})
	}
}
