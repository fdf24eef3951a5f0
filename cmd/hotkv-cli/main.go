// Command hotkv-cli is HotKV's shell: `hotkv-cli [options] [command [arg ...]]`,
// redis-cli's command line, and `hotkv-cli tour locks`. It wires the process to
// internal/cli; there is no logic here.
package main

import (
	"os"

	"github.com/hotkv/hotkv/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.OSEnv())) }
