package script

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
)

// buildReply writes a reply tree decoded from b into w (RESP2 types and the
// RESP3 scalars), and the reply a script returning it must give (null arrays
// become false, which a RESP2 script returns as a null bulk string).
func buildReply(b []byte, w, want *resp.Writer, depth int) []byte {
	if len(b) == 0 {
		w.Int(0)
		want.Int(0)
		return b
	}
	op, b := b[0], b[1:]
	switch op % 8 {
	case 0:
		n := int64(op) * 12345
		w.Int(n)
		want.Int(n)
	case 1:
		n := min(len(b), int(op%16))
		w.Bulk(b[:n])
		want.Bulk(b[:n])
		b = b[n:]
	case 2:
		w.Null()
		want.Null()
	case 3:
		w.NullArray()
		want.Null()
	case 4:
		w.SimpleString("OK")
		want.SimpleString("OK")
	case 5:
		w.Error("WRONGTYPE bad thing")
		want.Error("WRONGTYPE bad thing")
	default:
		if depth > 4 {
			w.Int(1)
			want.Int(1)
			return b
		}
		n := int(op % 5)
		w.ArrayLen(n)
		want.ArrayLen(n)
		for i := 0; i < n; i++ {
			b = buildReply(b, w, want, depth+1)
		}
	}
	return b
}

// FuzzRESPToLuaAndBack: a command reply converted to Lua (redis.call) and back
// (the script returns it) is the same reply, as Redis's conversion rules say.
func FuzzRESPToLuaAndBack(f *testing.F) {
	f.Add([]byte{6, 1, 2, 3, 0})
	f.Add([]byte{7, 6, 6, 5, 4, 3, 2})
	f.Add([]byte{1, 'h', 'e', 'l', 'l', 'o'})
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, want := &resp.Writer{Proto: 2}, &resp.Writer{Proto: 2}
		buildReply(b, in, want, 0)
		v, rest := respToLua(L, in.Buf)
		if len(rest) != 0 {
			t.Fatalf("%q: %d bytes left", in.Buf, len(rest))
		}
		out := &resp.Writer{Proto: 2}
		luaToResp(L, v, &Run{Resp: 2}, out, 0)
		if string(out.Buf) != string(want.Buf) {
			t.Fatalf("%q -> %q, want %q", in.Buf, out.Buf, want.Buf)
		}
	})
}

// RESP3 replies a script gets with redis.setresp(3), and back.
func TestRESP3Conversions(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, tc := range []struct{ in, out string }{
		{"_\r\n", "_\r\n"},       // nil, returned as null
		{"#t\r\n", "#t\r\n"},     // boolean
		{",3.5\r\n", ",3.5\r\n"}, // {double=3.5}
		{",inf\r\n", ",inf\r\n"}, // infinity
		{"(12345678901234567890\r\n", "(12345678901234567890\r\n"},
		{"=7\r\ntxt:abc\r\n", "=7\r\ntxt:abc\r\n"},
		{"%1\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"~1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
		{"|1\r\n+key\r\n+val\r\n:5\r\n", ":5\r\n"}, // attributes are dropped
	} {
		v, _ := respToLua(L, []byte(tc.in))
		w := &resp.Writer{Proto: 3}
		luaToResp(L, v, &Run{Resp: 3}, w, 0)
		if string(w.Buf) != tc.out {
			t.Errorf("%q -> %q, want %q", tc.in, w.Buf, tc.out)
		}
	}
}
