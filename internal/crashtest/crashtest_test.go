package crashtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A short bounded run of the harness (cmd/hotkv-crash runs the long ones):
// SIGKILL under load with appendfsync always and everysec, every
// acknowledged write and every value a read showed checked after each
// restart, and the AOF torn at every byte of its last commands.

func TestCrashHarness(t *testing.T) {
	bin := hotkvtest.BuildHotKV(t)
	for _, fsync := range []string{"always", "everysec"} {
		t.Run(fsync, func(t *testing.T) {
			var log strings.Builder
			rep, err := Run(context.Background(), Config{Bin: bin, Dir: t.TempDir(), Fsync: fsync, Cycles: 4,
				Clients: 6, MinRun: 100 * time.Millisecond, MaxRun: 400 * time.Millisecond, Seed: 7, Log: &log, TornCmds: 2})
			t.Logf("%s%+v", log.String(), rep)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Acked == 0 || rep.TornLoads == 0 || rep.ReadsChecked == 0 {
				t.Fatalf("nothing was checked: %+v", rep)
			}
			if fsync == "always" && rep.Lost != 0 {
				t.Fatalf("lost %d", rep.Lost)
			}
		})
	}
}

// The checker catches a lie: a server that acknowledges writes it does not
// keep (the AOF turned off behind the harness's back) fails the run.
func TestCrashHarnessCatchesLoss(t *testing.T) {
	bin := hotkvtest.BuildHotKV(t)
	_, err := Run(context.Background(), Config{Bin: bin, Dir: t.TempDir(), Fsync: "always", Cycles: 1,
		Clients: 2, MinRun: 100 * time.Millisecond, MaxRun: 200 * time.Millisecond, Seed: 1,
		ExtraArgs: []string{"--appendonly", "no"}})
	if err == nil || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("a server that keeps nothing passed: %v", err)
	}
}
