package command

import (
	"encoding/hex"
	"testing"
)

// IDMPAUTO's ID is Redis 8.6.3's: XADD sx IDMPAUTO p2 * c d recorded
// b7e71ee96cd14e5b7ba7130358c9a61f (read back from its DUMP, see
// internal/rdb/testdata/redis86-dump.txt); the pairs' order does not matter,
// which field holds which value does.
func TestIdmpAutoIID(t *testing.T) {
	b := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, x := range s {
			out[i] = []byte(x)
		}
		return out
	}
	got := idmpAutoIID(b("c", "d"))
	if hex.EncodeToString(got[:]) != "b7e71ee96cd14e5b7ba7130358c9a61f" {
		t.Fatalf("IDMPAUTO c d: %x", got)
	}
	if idmpAutoIID(b("a", "1", "b", "2")) != idmpAutoIID(b("b", "2", "a", "1")) {
		t.Error("the order of the pairs changed the ID")
	}
	if idmpAutoIID(b("a", "2", "b", "1")) == idmpAutoIID(b("a", "1", "b", "2")) ||
		idmpAutoIID(b("ab", "c")) == idmpAutoIID(b("a", "bc")) {
		t.Error("different pairs gave the same ID")
	}
}
