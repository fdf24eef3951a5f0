package notify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/pubsub"
)

// hub records what is published; subs is what Len reports for every kind.
type hub struct {
	subs int
	got  []string
}

func (h *hub) Len(pubsub.Kind) int { return h.subs }

func (h *hub) Publish(k pubsub.Kind, ch string, payload []byte) int {
	h.got = append(h.got, fmt.Sprintf("%d %s %s", k, ch, payload))
	return 1
}

func setEvents(t *testing.T, cfg *config.Config, v string) {
	t.Helper()
	if err := cfg.Set([2]string{"notify-keyspace-events", v}); err != nil {
		t.Fatal(err)
	}
}

// TestNotifier: events follow notify-keyspace-events as CONFIG SET changes
// it; K before E; a class off publishes nothing; nothing is published
// without subscribers; KeyEvicted hands the key on after its event.
func TestNotifier(t *testing.T) {
	cfg := config.New()
	h := &hub{subs: 1}
	n := New(cfg, h)
	var evicted []string
	n.Evicted = func(db int, key []byte) { evicted = append(evicted, fmt.Sprint(db, " ", string(key))) }
	expect := func(want ...string) {
		t.Helper()
		if strings.Join(h.got, "|") != strings.Join(want, "|") {
			t.Fatalf("published %q, want %q", h.got, want)
		}
		h.got = nil
	}
	ch := fmt.Sprint(pubsub.Channel)

	n.Notify(0, 'g', "del", []byte("k")) // off by default
	expect()

	setEvents(t, cfg, "KEA")
	n.Notify(3, '$', "set", []byte("k"))
	expect(ch+" __keyspace@3__:k set", ch+" __keyevent@3__:set k")
	n.KeyOverwritten(0, []byte("k"), true) // n, o and c are not in A
	expect()

	setEvents(t, cfg, "Kgoc")
	n.Notify(0, '$', "set", []byte("k"))
	expect()
	n.KeyOverwritten(1, []byte("k"), true)
	expect(ch+" __keyspace@1__:k overwritten", ch+" __keyspace@1__:k type_changed")

	setEvents(t, cfg, "Eem")
	n.KeyEvicted(2, []byte("x"))
	n.KeyMiss(0, []byte("y"))
	expect(ch+" __keyevent@2__:evicted x", ch+" __keyevent@0__:keymiss y")
	if fmt.Sprint(evicted) != "[2 x]" {
		t.Fatalf("Evicted saw %v", evicted)
	}

	h.subs = 0 // nobody subscribed: nothing is built or published
	n.KeyEvicted(2, []byte("z"))
	expect()
	if fmt.Sprint(evicted) != "[2 x 2 z]" {
		t.Fatalf("Evicted saw %v", evicted)
	}
}

// TestNotifyOffAllocatesNothing: with notifications off (the default) an
// event costs no allocation.
func TestNotifyOffAllocatesNothing(t *testing.T) {
	n := New(config.New(), &hub{subs: 1})
	key := []byte("k")
	if a := testing.AllocsPerRun(100, func() { n.KeyOverwritten(0, key, true) }); a != 0 {
		t.Fatalf("%v allocations per event", a)
	}
}
