package hotkvtest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildHotKV builds the server binary into the test's temporary directory,
// for tests that run and kill hotkv processes (skipped with -short). The
// calling test's package is two levels below the module root (internal/x):
// its sources are stat'ed so that go test's cache sees through go build.
func BuildHotKV(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and kills hotkv processes")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "go.mod")) {
			_, _ = os.Stat(p)
		}
		return nil
	})
	bin := filepath.Join(t.TempDir(), "hotkv")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/hotkv/hotkv/cmd/hotkv").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
