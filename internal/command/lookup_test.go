package command

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// Lookup finds every command by its name in any case, nothing else, and
// follows Rename (a name longer than the fast index's too).
func TestLookupAnyCase(t *testing.T) {
	tab := NewTable()
	rng := rand.New(rand.NewSource(1))
	for _, s := range tab.All() {
		for _, name := range []string{s.Name, strings.ToUpper(s.Name), mixCase(rng, s.Name)} {
			if got := tab.Lookup([]byte(name)); got != s {
				t.Fatalf("Lookup(%q) = %v, want %s", name, got, s.Name)
			}
		}
		for _, near := range []string{s.Name + "x", s.Name[:len(s.Name)-1], "x" + s.Name[1:], s.Name[:len(s.Name)-1] + "_"} {
			if got := tab.Lookup([]byte(near)); got != nil && got.Name != strings.ToLower(near) {
				t.Fatalf("Lookup(%q) = %s", near, got.Name)
			}
		}
	}
	for _, bad := range [][]byte{nil, {}, []byte("get\x00"), bytes.Repeat([]byte("a"), 40), []byte("GeT\xff")} {
		if got := tab.Lookup(bad); got != nil {
			t.Fatalf("Lookup(%q) = %s", bad, got.Name)
		}
	}
	get := tab.Lookup([]byte("get"))
	long := strings.Repeat("renamed-get-", 5)
	if err := tab.Rename("GET", long); err != nil {
		t.Fatal(err)
	}
	if tab.Lookup([]byte("get")) != nil || tab.Lookup([]byte(strings.ToUpper(long))) != get {
		t.Fatal("a rename to a long name")
	}
	if err := tab.Rename(long, "g3t"); err != nil {
		t.Fatal(err)
	}
	if tab.Lookup([]byte("G3T")) != get || tab.Lookup([]byte(long)) != nil {
		t.Fatal("a rename to a short name")
	}
}

func mixCase(rng *rand.Rand, s string) string {
	b := []byte(s)
	for i := range b {
		if rng.Intn(2) == 0 {
			b[i] = bytes.ToUpper(b[i : i+1])[0]
		}
	}
	return string(b)
}

func BenchmarkLookup(b *testing.B) {
	tab := NewTable()
	names := [][]byte{[]byte("SET"), []byte("get"), []byte("HSET"), []byte("zadd"), []byte("EVALSHA")}
	for i := 0; i < b.N; i++ {
		if tab.Lookup(names[i%len(names)]) == nil {
			b.Fatal("miss")
		}
	}
}
