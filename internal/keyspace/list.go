package keyspace

// List is a list value: a slice deque. Issue 8 replaces its insides with a
// quicklist-like layout; the API is what commands use.
type List struct {
	items [][]byte
	head  int
}

// Len is the number of elements.
func (l *List) Len() int { return len(l.items) - l.head }

// PushFront inserts v (copied) at the head.
func (l *List) PushFront(v []byte) {
	c := append([]byte(nil), v...)
	if l.head > 0 {
		l.head--
		l.items[l.head] = c
		return
	}
	n := l.Len()
	grown := make([][]byte, n+1, 2*n+4)
	copy(grown[1:], l.items[l.head:])
	grown[0] = c
	l.items, l.head = grown, 0
}

// PushBack appends v (copied) at the tail.
func (l *List) PushBack(v []byte) { l.items = append(l.items, append([]byte(nil), v...)) }

// PopFront removes and returns the head.
func (l *List) PopFront() []byte {
	v := l.items[l.head]
	l.items[l.head] = nil
	l.head++
	if l.head == len(l.items) {
		l.items, l.head = l.items[:0], 0
	}
	return v
}

// PopBack removes and returns the tail.
func (l *List) PopBack() []byte {
	n := len(l.items) - 1
	v := l.items[n]
	l.items[n] = nil
	l.items = l.items[:n]
	if l.head == len(l.items) {
		l.items, l.head = l.items[:0], 0
	}
	return v
}

// Index returns element i (0-based from the head); i must be in range.
func (l *List) Index(i int) []byte { return l.items[l.head+i] }

// Encoding is OBJECT ENCODING's text (listpack while small, as Redis 7.2+).
func (l *List) Encoding() string {
	size := 0
	for _, it := range l.items[l.head:] {
		size += len(it) + 11
		if size > 8192 {
			return "quicklist"
		}
	}
	if l.Len() > 128 {
		return "quicklist"
	}
	return "listpack"
}

// Clone deep-copies the list.
func (l *List) Clone() any {
	c := &List{items: make([][]byte, 0, l.Len())}
	for _, it := range l.items[l.head:] {
		c.items = append(c.items, append([]byte(nil), it...))
	}
	return c
}

// Hash is a hash value keeping insertion order (as a small Redis hash does).
type Hash struct {
	idx    map[string]int
	fields []string
	vals   [][]byte
}

// NewHash returns an empty hash.
func NewHash() *Hash { return &Hash{idx: map[string]int{}} }

// Len is the number of fields.
func (h *Hash) Len() int { return len(h.fields) }

// Get returns a field's value.
func (h *Hash) Get(f []byte) ([]byte, bool) {
	i, ok := h.idx[string(f)]
	if !ok {
		return nil, false
	}
	return h.vals[i], true
}

// Set stores a field (copied); it reports whether the field is new.
func (h *Hash) Set(f, v []byte) bool {
	if i, ok := h.idx[string(f)]; ok {
		h.vals[i] = append(h.vals[i][:0:0], v...)
		return false
	}
	h.idx[string(f)] = len(h.fields)
	h.fields = append(h.fields, string(f))
	h.vals = append(h.vals, append([]byte(nil), v...))
	return true
}

// Del removes a field; it reports whether it existed.
func (h *Hash) Del(f []byte) bool {
	i, ok := h.idx[string(f)]
	if !ok {
		return false
	}
	delete(h.idx, string(f))
	copy(h.fields[i:], h.fields[i+1:])
	copy(h.vals[i:], h.vals[i+1:])
	h.fields = h.fields[:len(h.fields)-1]
	h.vals = h.vals[:len(h.vals)-1]
	for j := i; j < len(h.fields); j++ {
		h.idx[h.fields[j]] = j
	}
	return true
}

// Range calls fn for each field in insertion order.
func (h *Hash) Range(fn func(f string, v []byte)) {
	for i, f := range h.fields {
		fn(f, h.vals[i])
	}
}

// Encoding is OBJECT ENCODING's text.
func (h *Hash) Encoding() string {
	if len(h.fields) > 128 {
		return "hashtable"
	}
	for i, f := range h.fields {
		if len(f) > 64 || len(h.vals[i]) > 64 {
			return "hashtable"
		}
	}
	return "listpack"
}

// Clone deep-copies the hash.
func (h *Hash) Clone() any {
	c := NewHash()
	h.Range(func(f string, v []byte) { c.Set([]byte(f), v) })
	return c
}
