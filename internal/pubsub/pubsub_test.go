package pubsub

import (
	"strings"
	"testing"
)

type sub struct {
	name string
	got  *[]string
}

func (s *sub) Deliver(m *Message) { *s.got = append(*s.got, s.name+":"+string(m.Encode(2))) }

func TestPublishOrderAndPatterns(t *testing.T) {
	var got []string
	h := New[*sub]()
	a, b, p := &sub{"a", &got}, &sub{"b", &got}, &sub{"p", &got}
	if !h.Subscribe(Channel, "news", a) || !h.Subscribe(Channel, "news", b) || h.Subscribe(Channel, "news", a) {
		t.Fatal("Subscribe: wrong first/duplicate report")
	}
	h.Subscribe(Pattern, "n*", p)
	h.Subscribe(Pattern, "x*", p)
	if n := h.Publish(Channel, "news", []byte("hi")); n != 3 {
		t.Fatalf("receivers = %d, want 3 (2 channel + 1 pattern)", n)
	}
	want := []string{
		"a:*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
		"b:*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
		"p:*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("delivered %q\nwant %q", got, want)
	}
	// unsubscribing keeps the others' order; an empty channel disappears
	h.Unsubscribe(Channel, "news", a)
	if h.Count(Channel, "news") != 1 || h.Unsubscribe(Channel, "news", a) {
		t.Fatal("Unsubscribe")
	}
	h.Unsubscribe(Channel, "news", b)
	if h.Len(Channel) != 0 || len(h.Names(Channel, "", true)) != 0 {
		t.Fatal("empty channel kept")
	}
	h.Unsubscribe(Pattern, "n*", p)
	if h.Len(Pattern) != 1 || len(h.patterns) != 1 || h.patterns[0] != "x*" {
		t.Fatalf("patterns = %v", h.patterns)
	}
	// shard channels are separate and not matched by patterns
	got = nil
	h.Subscribe(Shard, "xs", a)
	if n := h.Publish(Shard, "xs", []byte("s")); n != 1 || got[0] != "a:*3\r\n$8\r\nsmessage\r\n$2\r\nxs\r\n$1\r\ns\r\n" {
		t.Fatalf("shard publish: %d %q", n, got)
	}
}

func TestEncodeRESP3(t *testing.T) {
	m := &Message{Kind: Channel, Channel: "c", Payload: []byte("")}
	if got := string(m.Encode(3)); got != ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n" {
		t.Fatalf("RESP3 push: %q", got)
	}
	if got := string(m.Encode(2)); got != "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$0\r\n\r\n" {
		t.Fatalf("RESP2: %q", got)
	}
}
