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
