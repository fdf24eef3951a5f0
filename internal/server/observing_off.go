//go:build hotkv_noobserve

package server

// observing: see observing_on.go. This build measures the server without
// the operator's view; it is not a build to run.
const observing = false
