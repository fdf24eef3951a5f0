//go:build !unix

package script

// cpuSeconds is unavailable here: os.clock reports 0.
func cpuSeconds() float64 { return 0 }
