//go:build !race

package keyspace

const raceOn = false
