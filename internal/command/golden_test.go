package command_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// captureMs is the time the Redis 8.6.3 reference transcripts were captured at
// (their EXAT/PXAT arguments were "now + 1000 s"); golden runs start there.
const captureMs = 1795936774000

// TestGolden runs every golden script in testdata/ (go test -update rewrites them).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.golden")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden")
		t.Run(name, func(t *testing.T) {
			hotkvtest.RunGolden(t, f, captureMs)
		})
	}
}
