package metrics

import "github.com/hotkv/hotkv/internal/locks"

type locksHistogram = locks.Histogram

var boundsUs = locks.Bounds[:]
