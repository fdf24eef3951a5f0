package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redisReplies sends in to a live server and returns the reply tokens.
func redisReplies(t *testing.T, addr string, in []byte) []string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Write(in)
	var out []byte
	buf := make([]byte, 65536)
	for {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	return tokens(out)
}

func tokens(out []byte) []string {
	var toks []string
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if line != "" {
				toks = append(toks, "PARTIAL:"+line)
			}
			return toks
		}
		line = strings.TrimSuffix(line, "\r\n")
		switch line[0] {
		case '$':
			var n int
			fmt.Sscanf(line[1:], "%d", &n)
			b := make([]byte, n+2)
			io.ReadFull(br, b)
			toks = append(toks, "BULK:"+string(b[:n]))
		case '-':
			if strings.HasPrefix(line, "-ERR unknown command") {
				line = "UNKNOWN"
			}
			toks = append(toks, line)
		default:
			toks = append(toks, "OTHER:"+line)
		}
	}
}

func modelReplies(in []byte) []string {
	r := NewReader(bytes.NewReader(in), nil)
	var toks []string
	for {
		argv, err := r.ReadCommand()
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				toks = append(toks, "-ERR "+pe.Msg)
			}
			return toks
		}
		switch {
		case !strings.EqualFold(string(argv[0]), "echo"):
			toks = append(toks, "UNKNOWN")
		case len(argv) != 2:
			toks = append(toks, "-ERR wrong number of arguments for 'echo' command")
		default:
			toks = append(toks, "BULK:"+string(argv[1]))
		}
	}
}

func randArg(rng *rand.Rand) string {
	alpha := "ab \"'\\xn0\r\n\t\x00\xff$*4"
	n := rng.IntN(8)
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.IntN(len(alpha))]
	}
	return string(b)
}

func genInput(rng *rand.Rand) []byte {
	var b []byte
	for k := rng.IntN(4) + 1; k > 0; k-- {
		switch rng.IntN(4) {
		case 0, 1:
			a := randArg(rng)
			b = fmt.Appendf(b, "*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n", len(a), a)
		case 2:
			b = append(b, "ECHO "...)
			b = append(b, randArg(rng)...)
			if rng.IntN(2) == 0 {
				b = append(b, '\r')
			}
			b = append(b, '\n')
		case 3:
			b = append(b, "*3\r\n$4\r\necho\r\n$1\r\nx\r\n$1\r\ny\r\n"...)
		}
	}
	for m := rng.IntN(5); m > 0 && len(b) > 0; m-- {
		i := rng.IntN(len(b))
		switch rng.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			s := "\r\n\x00*$-0123456789\"'\\ x"
			b[i] = s[rng.IntN(len(s))]
		case 2:
			b = append(b[:i], append([]byte{"\r\n*$-1\"'"[rng.IntN(8)]}, b[i:]...)...)
		}
	}
	if rng.IntN(40) == 0 {
		b = append(b, bytes.Repeat([]byte("A"), 70000)...)
	}
	return b
}

// TestDiffRedis is an opt-in differential test against a real Redis: set
// RESP_REDIS=host:port (a throwaway redis-server on loopback, without a
// password) and it sends fixed and randomly mutated requests to both that
// server and a Reader, and compares Redis's replies with the ones the
// Reader's parse implies (ECHO's bulk, its arity error, "unknown command",
// or the protocol error). RESP_REDIS_CASES sets the number of random cases
// (default 200, each costing a 200 ms wait for the server to go quiet).
// It was run against Debian's redis-server 7.0.15, whose request parsing
// is the same as Redis 8's in everything these cases reach.
func TestDiffRedis(t *testing.T) {
	addr := os.Getenv("RESP_REDIS")
	if addr == "" {
		t.Skip("set RESP_REDIS=host:port of a throwaway redis-server")
	}
	cases := 200
	if n, err := strconv.Atoi(os.Getenv("RESP_REDIS_CASES")); err == nil {
		cases = n
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(11, seed))
	fixed := []string{
		"*3000000000\r\n", "*2147483648\r\n", "*2147483647\r\n", "*1\r\n$4294967296\r\n",
		"*1\rX$4\rYECHO\r\n", "*1\x00\r\n", "*1\r\n\xff\r\n", "*1\r\n\r\n\r\n",
		"\"a\"\vb\n", "ECHO \"\\x4\"\n", "ECHO a\vb\n", "*2\r\n$4\r\nECHO\r\n$5\r\nn$x\\\"\r-",
		"**3\r\n$4\r\neco\r\n1\r\nx\n$1\r\ny\r\n",
		"ECHO \r\ra\r\n*3\r\n$4\r\necho\r\n$1\r\nx\r\n$1\r\ny\r\n",
	}
	n := 0
	stats := map[string]int{}
	defer func() { t.Log(stats) }()
	for i := 0; i < len(fixed)+cases; i++ {
		var in []byte
		if i < len(fixed) {
			in = []byte(fixed[i])
		} else {
			in = genInput(rng)
		}
		want := redisReplies(t, addr, in)
		got := modelReplies(in)
		for _, g := range got {
			if strings.HasPrefix(g, "-ERR Protocol") {
				stats[g]++
			} else if strings.HasPrefix(g, "BULK") {
				stats["bulk"]++
			} else {
				stats[g]++
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			n++
			t.Errorf("input %q:\n got %q\nwant %q", in, got, want)
			if n > 20 {
				break
			}
		}
	}
}
