package archtest

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The one execution path (docs/ARCHITECTURE.md): every command runs through
// call() in internal/server/call.go, and what the server asks about a command
// is a property of its Spec in the table, never its name. These tests read
// the code with its types, so that a renamed variable cannot hide a breach.

const specType = module + "internal/command.Spec"

// checked is a type-checked package: its non-test files and what they use.
type checked struct {
	fset  *token.FileSet
	files []*ast.File
	names []string // the files' base names, in files' order
	info  *types.Info
}

// typecheck parses and type-checks pkg's non-test files against the export
// data `go list -export` builds for its dependencies.
func typecheck(t *testing.T, pkg string) *checked {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot type-check " + pkg)
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./"+pkg)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", pkg, err)
	}
	export := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			export[path] = file
		}
	}
	ck := &checked{fset: token.NewFileSet(), info: &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Uses:       map[*ast.Ident]types.Object{},
	}}
	// the files go builds here (build constraints applied), tests left out
	cmd = exec.Command("go", "list", "-f", "{{join .GoFiles \" \"}}", "./"+pkg)
	cmd.Dir = root(t)
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	dir := filepath.Join(root(t), pkg)
	for _, n := range strings.Fields(string(out)) {
		f, err := parser.ParseFile(ck.fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ck.files = append(ck.files, f)
		ck.names = append(ck.names, n)
	}
	imp := importer.ForCompiler(ck.fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(export[path])
	})
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(module+pkg, ck.fset, ck.files, ck.info); err != nil {
		t.Fatalf("type-checking %s: %v", pkg, err)
	}
	return ck
}

// specField reports whether sel selects field or method name of command.Spec.
func (ck *checked) specField(sel *ast.SelectorExpr, names ...string) bool {
	s := ck.info.Selections[sel]
	if s == nil {
		return false
	}
	recv := s.Recv()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	if recv.String() != specType {
		return false
	}
	for _, n := range names {
		if sel.Sel.Name == n {
			return true
		}
	}
	return false
}

// nameOf reports whether e is a command's name or group: Spec.Name,
// Spec.Group or Spec.FullName().
func (ck *checked) nameOf(e ast.Expr) bool {
	e = ast.Unparen(e)
	if call, ok := e.(*ast.CallExpr); ok {
		e = call.Fun
		if sel, ok := e.(*ast.SelectorExpr); ok {
			return ck.specField(sel, "FullName")
		}
		return false
	}
	sel, ok := e.(*ast.SelectorExpr)
	return ok && ck.specField(sel, "Name", "Group")
}

// TestNoCommandNameSwitches: internal/server never compares a command's name
// or group (==, !=, switch): the property it wants is a Spec flag or field.
func TestNoCommandNameSwitches(t *testing.T) {
	for _, pkg := range []string{"internal/server", "internal/engine"} {
		ck := typecheck(t, pkg)
		for i, f := range ck.files {
			ast.Inspect(f, func(n ast.Node) bool {
				var hit ast.Node
				switch n := n.(type) {
				case *ast.BinaryExpr:
					if (n.Op == token.EQL || n.Op == token.NEQ) && (ck.nameOf(n.X) || ck.nameOf(n.Y)) {
						hit = n
					}
				case *ast.SwitchStmt:
					if n.Tag != nil && ck.nameOf(n.Tag) {
						hit = n
					}
				}
				if hit != nil {
					t.Errorf("%s/%s:%d: a command's name is compared: state the property in the command table (a Spec flag or field)",
						pkg, ck.names[i], ck.fset.Position(hit.Pos()).Line)
				}
				return true
			})
		}
	}
}

// TestHandlersRunOnlyInCall: the only code that invokes a command handler
// (Spec.Run) is call.go's run, the one execution path.
func TestHandlersRunOnlyInCall(t *testing.T) {
	found := false
	for _, pkg := range []string{"internal/server", "internal/engine"} {
		ck := typecheck(t, pkg)
		for i, f := range ck.files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
				if !ok || !ck.specField(sel, "Run") {
					return true
				}
				if pkg == "internal/server" && ck.names[i] == "call.go" {
					found = true
					return true
				}
				t.Errorf("%s/%s:%d: a command handler is invoked outside call.go: run commands through call()",
					pkg, ck.names[i], ck.fset.Position(call.Pos()).Line)
				return true
			})
		}
	}
	if !found {
		t.Error("internal/server/call.go invokes no handler: the test no longer sees the execution path")
	}
}
