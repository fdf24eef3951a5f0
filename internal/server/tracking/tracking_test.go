package tracking

import (
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/command"
)

type fakeClient struct {
	base command.Client
	got  []string
	subs bool
}

func (c *fakeClient) Base() *command.Client  { return &c.base }
func (c *fakeClient) Push(msg []byte)        { c.got = append(c.got, string(msg)) }
func (c *fakeClient) HasSubscriptions() bool { return c.subs }

func (c *fakeClient) take() string {
	s := strings.Join(c.got, "")
	c.got = nil
	return s
}

type fakeHost struct{ clients []*fakeClient }

func (h *fakeHost) Client(id int64) Client {
	for _, c := range h.clients {
		if c.base.ID == id {
			return c
		}
	}
	return nil
}

func (h *fakeHost) Clients() []Client {
	out := make([]Client, len(h.clients))
	for i, c := range h.clients {
		out[i] = c
	}
	return out
}

func (h *fakeHost) Present(int, []byte) bool { return false }
func (h *fakeHost) InScript() bool           { return false }
func (h *fakeHost) Rand() uint64             { return 4 }

func newClient(id int64, proto int) *fakeClient {
	c := &fakeClient{}
	c.base.ID, c.base.Proto, c.base.Multi = id, proto, -1
	return c
}

// run is one command of cl through the tracker, as process drives it.
func run(t *Tracker, cl *fakeClient, spec *command.Spec, argv [][]byte, effect func()) {
	t.BeforeExec(cl, &cl.base)
	t.BeginCommand()
	if effect != nil {
		effect()
	}
	t.Remember(spec, argv)
	if t.AfterExec() {
		t.SendDue(cl)
	}
	t.EndCommand(&cl.base, spec)
}

func args(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

// TestTracker: a read is remembered and invalidated once by a write; the
// writer's own invalidation comes after its command; BCAST announces the
// keys under a prefix, NOLOOP leaves out the client's own; a flush sends
// nulls; RESP2 without a subscribed redirection gets nothing.
func TestTracker(t *testing.T) {
	tab := command.NewTable()
	get, set := tab.Lookup([]byte("get")), tab.Lookup([]byte("set"))
	a, b, c, r2 := newClient(1, 3), newClient(2, 3), newClient(3, 3), newClient(4, 2)
	h := &fakeHost{clients: []*fakeClient{a, b, c, r2}}
	tr := New(h, 1, func() int64 { return 0 })
	tr.Enable(a, 0, false, false, false, false, nil)
	tr.Enable(b, 0, true, false, false, true, [][]byte{[]byte("user:")})
	tr.Enable(r2, 0, false, false, false, false, nil)

	run(tr, a, get, args("GET", "k"), nil)
	run(tr, r2, get, args("GET", "k"), nil)
	run(tr, c, set, args("SET", "k", "v"), func() { tr.Modified(0, []byte("k")) })
	if got := a.take(); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n" {
		t.Fatalf("reader's invalidation: %q", got)
	}
	if got := r2.take(); got != "" {
		t.Fatalf("RESP2 without a redirection got %q", got)
	}
	run(tr, c, set, args("SET", "k", "v"), func() { tr.Modified(0, []byte("k")) })
	if got := a.take(); got != "" {
		t.Fatalf("a second invalidation without a read: %q", got)
	}

	// the writer read the key: its own invalidation waits for its reply
	run(tr, a, get, args("GET", "k"), nil)
	tr.BeforeExec(a, &a.base)
	tr.Modified(0, []byte("k"))
	if got := a.take(); got != "" {
		t.Fatalf("sent before the reply: %q", got)
	}
	if !tr.AfterExec() {
		t.Fatal("nothing due after the command")
	}
	tr.SendDue(a)
	tr.EndCommand(&a.base, set)
	if got := a.take(); !strings.HasSuffix(got, "$1\r\nk\r\n") {
		t.Fatalf("own invalidation: %q", got)
	}

	// BCAST with NOLOOP: b's own change is left out, c's is announced
	run(tr, b, set, args("SET", "user:1", "v"), func() { tr.Modified(0, []byte("user:1")) })
	if got := b.take(); got != "" {
		t.Fatalf("NOLOOP announced the client's own key: %q", got)
	}
	run(tr, c, set, args("SET", "user:2", "v"), func() { tr.Modified(0, []byte("user:2")) })
	if got := b.take(); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:2\r\n" {
		t.Fatalf("BCAST: %q", got)
	}

	run(tr, c, tab.Lookup([]byte("flushall")), args("FLUSHALL"), func() { tr.Flushing(); tr.Flushing() })
	if got := a.take(); got != ">2\r\n$10\r\ninvalidate\r\n_\r\n" {
		t.Fatalf("flush: %q", got)
	}
	if got := r2.take(); got != "" {
		t.Fatalf("RESP2 flush: %q", got)
	}
	if clients, keys, items, prefixes := tr.Stats(); clients != 3 || keys != 0 || items != 0 || prefixes != 1 {
		t.Fatalf("Stats %d %d %d %d", clients, keys, items, prefixes)
	}
	tr.Disable(b)
	if clients, _, _, prefixes := tr.Stats(); clients != 2 || prefixes != 0 {
		t.Fatalf("after Disable: %d clients, %d prefixes", clients, prefixes)
	}
}
