package resp

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

type oracle struct {
	in  *bufio.Writer
	out *bufio.Scanner
}

func newOracle(t *testing.T) *oracle {
	path := os.Getenv("RESP_ORACLE")
	if path == "" {
		t.Skip("no oracle")
	}
	cmd := exec.Command(path)
	w, _ := cmd.StdinPipe()
	r, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); cmd.Wait() })
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &oracle{bufio.NewWriter(w), sc}
}

func (o *oracle) ask(format string, args ...any) string {
	fmt.Fprintf(o.in, format+"\n", args...)
	o.in.Flush()
	o.out.Scan()
	return o.out.Text()
}

func randDecimal(rng *rand.Rand) string {
	var sb strings.Builder
	if rng.IntN(4) == 0 {
		sb.WriteByte('-')
	}
	nd := 1 + rng.IntN(22)
	for i := 0; i < nd; i++ {
		sb.WriteByte(byte('0' + rng.IntN(10)))
	}
	if rng.IntN(2) == 0 {
		s := sb.String()
		p := rng.IntN(len(s) + 1)
		s = s[:p] + "." + s[p:]
		sb.Reset()
		sb.WriteString(s)
	}
	if rng.IntN(3) == 0 {
		fmt.Fprintf(&sb, "e%d", rng.IntN(700)-350)
	}
	return sb.String()
}

var weird = []string{"", " 1", "1 ", "+1", "-", "+", ".", "1.", ".5", "-.5e3", "1e", "1e+", "1e-5", "0x", "0x1", "0x1p3", "0X1.8P1", "0x.8", "0x1.", "0x1p", "0xg", "inf", "-inf", "+INF", "Infinity", "infinit", "infx", "nan", "-nan", "nan(123)", "1e400", "1e-400", "-1e-400", "2e-324", "3e-324", "1e5000", "1e-5000", "1e4932", "1e4933", "1e-4950", "1e-4955", "0e999999", "1_000", "1\x00", "\t1", "1e+05", "00012", "0x1p99999", "0x1p-99999", "1.7976931348623157e308", "1.7976931348623159e308", "4.9e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "0x1.fffffffffffff8p1023", "0x123456789abcdef0123p0", "9223372036854775807", "18446744073709551615", "0.1", "1e23", "8.5", "-0", "-0.0", "0x0p0", "e5", "0e", "1.5E+10", "1..2"}

func TestOracleParse(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := append([]string{}, weird...)
	for i := 0; i < 20000; i++ {
		inputs = append(inputs, randDecimal(rng))
	}
	for i := 0; i < 3000; i++ {
		inputs = append(inputs, strconv.FormatFloat(math.Float64frombits(rng.Uint64()), 'x', -1, 64))
	}
	bad := 0
	for _, s := range inputs {
		h := hex.EncodeToString([]byte(s))
		want := o.ask("s %s", h)
		f, ok := ParseFloat([]byte(s))
		got := "no"
		if ok {
			got = fmt.Sprintf("ok %016x", math.Float64bits(f))
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("ParseFloat(%q) = %s, want %s", s, got, want)
		}
		want = o.ask("l %s", h)
		x, ok := ParseLongDouble([]byte(s))
		got = "no"
		if ok {
			got = "ok " + string(x.AppendText(nil))
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("ParseLongDouble(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestOracleAdd(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(3, 4))
	bad := 0
	for i := 0; i < 20000; i++ {
		a, b := randDecimal(rng), randDecimal(rng)
		if i%3 == 0 {
			a = strconv.Itoa(rng.IntN(100000))
			b = strconv.FormatFloat(float64(rng.IntN(10000))/100, 'f', -1, 64)
		}
		want := o.ask("a %s %s", hex.EncodeToString([]byte(a)), hex.EncodeToString([]byte(b)))
		x, ok1 := ParseLongDouble([]byte(a))
		y, ok2 := ParseLongDouble([]byte(b))
		got := "no"
		if ok1 && ok2 {
			z := x.Add(y)
			if z.IsNaN() || z.IsInf() {
				got = "naninf"
			} else {
				got = "ok " + string(z.AppendText(nil))
			}
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("%s + %s = %s, want %s", a, b, got, want)
		}
	}
}

func TestOracleDtoa(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(5, 6))
	bad := 0
	for i := 0; i < 300000; i++ {
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(rng.Uint64())
		case 1:
			f, _ = strconv.ParseFloat(randDecimal(rng), 64)
		case 2:
			f = float64(rng.Int64N(1<<62)) * math.Pow(2, float64(rng.IntN(40)-20))
		case 3:
			f = math.Float64frombits(rng.Uint64() >> uint(rng.IntN(64)))
		}
		want := o.ask("d %016x", math.Float64bits(f))
		got := string(FormatDouble(nil, f))
		if got != want && bad < 30 {
			bad++
			t.Errorf("FormatDouble(%v [%016x]) = %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
}

func TestOracleGrammar(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(7, 8))
	alpha := "0123456789.eE+-xXpPaAbBfFinINtTyY( )_\t"
	bad := 0
	for i := 0; i < 6000; i++ {
		n := 1 + rng.IntN(8)
		b := make([]byte, n)
		for j := range b {
			b[j] = alpha[rng.IntN(len(alpha))]
		}
		s := string(b)
		if i%5 == 0 {
			s = []string{"1e4931", "1e4932", "-1.18973149535723176502e4932", "1.18973149535723176503e4932", "3.3621031431120935063e-4932", "3.6e-4951", "1.9e-4951", "1e-4940", "0x1p-16445", "0x1p-16446", "0x1.8p-16446", "0x1p16383", "0x1p16384", "0x1.ffffffffffffffffp16383", "0x1.fffffffffffffffffp16383"}[rng.IntN(15)]
		}
		h := hex.EncodeToString([]byte(s))
		want := o.ask("s %s", h)
		f, ok := ParseFloat([]byte(s))
		got := "no"
		if ok {
			got = fmt.Sprintf("ok %016x", math.Float64bits(f))
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("ParseFloat(%q) = %s, want %s", s, got, want)
		}
		want = o.ask("l %s", h)
		x, ok := ParseLongDouble([]byte(s))
		got = "no"
		if ok {
			got = "ok " + string(x.AppendText(nil))
			if len(got) > 60 {
				got = got[:60]
			}
		}
		if len(want) > 60 {
			want = want[:60]
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("ParseLongDouble(%q) = %s, want %s", s, got, want)
		}
		a := []string{"1e4932", "-1e4932", "inf", "-inf", "1", "0", "-0", "1e-4940", "0x1p-16440", "1.1e4932"}
		x1, y1 := a[rng.IntN(len(a))], a[rng.IntN(len(a))]
		want = o.ask("a %s %s", hex.EncodeToString([]byte(x1)), hex.EncodeToString([]byte(y1)))
		p, ok1 := ParseLongDouble([]byte(x1))
		q, ok2 := ParseLongDouble([]byte(y1))
		got = "no"
		if ok1 && ok2 {
			z := p.Add(q)
			if z.IsNaN() || z.IsInf() {
				got = "naninf"
			} else {
				got = "ok " + string(z.AppendText(nil))
			}
		}
		if len(got) > 60 {
			got = got[:60]
		}
		if len(want) > 60 {
			want = want[:60]
		}
		if got != want && bad < 30 {
			bad++
			t.Errorf("%s + %s = %s, want %s", x1, y1, got, want)
		}
	}
}
