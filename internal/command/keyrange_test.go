package command

import (
	"slices"
	"testing"
)

// KeyRange walks the positions KeyIndexes lists, without the slice; commands
// with no positional keys, or a KeysFn, report none.
func TestKeyRange(t *testing.T) {
	tab := NewTable()
	for _, tc := range []struct {
		argv []string
		keys []int // the positions KeyRange walks
		ok   bool
	}{
		{[]string{"mset", "a", "1", "b", "2"}, []int{1, 3}, true},
		{[]string{"mset", "a", "1", "b"}, []int{1, 3}, true}, // a wrong count: the keys it names
		{[]string{"get", "a"}, []int{1}, true},
		{[]string{"del", "a", "b", "c"}, []int{1, 2, 3}, true},
		{[]string{"del"}, nil, false},
		{[]string{"ping"}, nil, false},
		{[]string{"eval", "return 1", "1", "k"}, nil, false}, // KeysFn
	} {
		argv := make([][]byte, len(tc.argv))
		for i, a := range tc.argv {
			argv[i] = []byte(a)
		}
		spec := tab.Lookup(argv[0])
		first, last, step, ok := spec.KeyRange(len(argv))
		var got []int
		if ok {
			for i := first; i <= last; i += step {
				got = append(got, i)
			}
		}
		if ok != tc.ok || !slices.Equal(got, tc.keys) {
			t.Errorf("%v: KeyRange walks %v (ok %v); want %v (ok %v)", tc.argv, got, ok, tc.keys, tc.ok)
		}
		if idx := spec.KeyIndexes(argv); spec.KeysFn == nil && !slices.Equal(idx, got) {
			t.Errorf("%v: KeyIndexes %v, KeyRange walks %v", tc.argv, idx, got)
		}
	}
}
