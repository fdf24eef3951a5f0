// Command hotkv-crash is the AOF's crash harness (internal/crashtest): it
// runs a write load of locks, counters and list pushes against a hotkv
// process with appendonly yes, kills it with SIGKILL at random moments,
// restarts it on the same directory and checks every acknowledged reply.
//
//	go build -o bin/hotkv ./cmd/hotkv
//	go run ./cmd/hotkv-crash -bin bin/hotkv -fsync always -cycles 100
//
// It exits 1 when an acknowledged write is lost (always), or lost beyond
// the everysec window (everysec), or a torn file does not load as a prefix.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hotkv/hotkv/internal/crashtest"
)

func main() {
	bin := flag.String("bin", "bin/hotkv", "the hotkv binary")
	dir := flag.String("dir", "", "the server's directory (default: a new temporary one)")
	fsync := flag.String("fsync", "always", "appendfsync: always, everysec or no")
	cycles := flag.Int("cycles", 100, "SIGKILL and restart this many times")
	clients := flag.Int("clients", 8, "concurrent writers")
	minRun := flag.Duration("min-run", 200*time.Millisecond, "shortest load before a kill")
	maxRun := flag.Duration("max-run", 1500*time.Millisecond, "longest load before a kill")
	tornCmds := flag.Int("torn", 3, "cut the AOF at every byte of its last N commands at the end (0: skip)")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed")
	flag.Parse()
	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "hotkv-crash-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	fmt.Printf("hotkv-crash: %s, appendfsync %s, %d cycles, %d clients, seed %d, dir %s\n",
		*bin, *fsync, *cycles, *clients, *seed, d)
	rep, err := crashtest.Run(context.Background(), crashtest.Config{Bin: *bin, Dir: d, Fsync: *fsync,
		Cycles: *cycles, Clients: *clients, MinRun: *minRun, MaxRun: *maxRun, Seed: *seed,
		Log: os.Stdout, TornCmds: *tornCmds})
	fmt.Printf("cycles %d, acknowledged writes %d, lost %d (within the everysec window %d), "+
		"reads checked %d, expired locks gone %d, torn files loaded as a prefix %d, longest restart %v\n",
		rep.Cycles, rep.Acked, rep.Lost, rep.LostInWindow, rep.ReadsChecked, rep.ExpiredOK, rep.TornLoads, rep.MaxLoad.Round(time.Millisecond))
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}
