package script

import (
	"encoding/hex"
	"strings"
	"testing"
)

// redisDump is FUNCTION DUMP from redis-server 7.0.15 (RDB version 10) after
// loading redisLib: its code is LZF-compressed, as Redis compresses strings.
const redisDump = "f5c340ad40ff1f23216c7561206e616d653d6d796c69620a72656469732e72656769737465725f0b66756e6374696f6e28276d79400b02272c2040066012116b6579732c2061726773292072657475726e600c075b315d20656e6429e00f4a007bc040005f6076a058003220590863616c6c6261636b3dc021e00b62062768656c6c6f20e00e050027407a20a31a6c6167733d7b276e6f2d777269746573277d2c206465736372697040bb013d27400c01277d0a004d889a3201d31134"

const redisLib = "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)\n" +
	"redis.register_function{function_name='myfunc2', callback=function(keys, args) return 'hello hello hello hello hello' end, flags={'no-writes'}, description='desc'}"

func TestParseRedisFunctionDump(t *testing.T) {
	p, _ := hex.DecodeString(redisDump)
	codes, err := ParseDump(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != 1 || codes[0] != redisLib {
		t.Fatalf("codes = %q", codes)
	}
	// a flipped byte fails the checksum
	p[5] ^= 1
	if _, err := ParseDump(p); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("corrupt payload: %v", err)
	}
}

// DumpLibraries compresses the code as Redis does: the same bytes as
// redis-server's FUNCTION DUMP (after its RDB version 10 footer).
func TestDumpLikeRedis(t *testing.T) {
	want, _ := hex.DecodeString(redisDump)
	got := DumpLibraries([]*Library{{Name: "mylib", Code: redisLib}})
	if hex.EncodeToString(got[:len(got)-10]) != hex.EncodeToString(want[:len(want)-10]) {
		t.Fatalf("dump\n got %x\nwant %x", got, want)
	}
}

func TestDumpRoundTrip(t *testing.T) {
	libs := []*Library{{Name: "a", Code: redisLib}, {Name: "b", Code: strings.Repeat("x", 20000)}}
	codes, err := ParseDump(DumpLibraries(libs))
	if err != nil || len(codes) != 2 || codes[0] != libs[0].Code || codes[1] != libs[1].Code {
		t.Fatalf("round trip: %v %d", err, len(codes))
	}
}

func FuzzParseDump(f *testing.F) {
	p, _ := hex.DecodeString(redisDump)
	f.Add(p)
	f.Add(DumpLibraries([]*Library{{Code: "x"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseDump(b) // must not panic
	})
}
