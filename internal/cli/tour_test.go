package cli_test

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/cli"
	"github.com/hotkv/hotkv/internal/hotkvtest"
)

func runMain(stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	var out, errb hotkvtest.SyncBuffer
	code = cli.Main(args, &cli.Env{Stdin: stdin, Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// TestTourAuto plays "tour locks --auto" against an in-process server: the
// five steps in order, each with its explanation, the command at the prompt
// and the server's actual reply.
func TestTourAuto(t *testing.T) {
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	out, errs, code := runMain(strings.NewReader(""), "-h", host, "-p", port, "--no-raw", "tour", "locks", "--auto")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
	}
	p := regexp.QuoteMeta("hotkv " + srv.Addr + "> ")
	want := []string{
		`Step 1/5: Worker A takes the lock\.\n  NX .*\n` + p + `SET lock:billing-run tok-a81f NX PX 30000\nOK\n`,
		`Step 2/5: Worker B is turned away\.\n  .*\n` + p + `SET lock:billing-run tok-b22c NX PX 30000\n\(nil\)\n`,
		`Step 3/5: A checks how long the lock still lives\.\n  PTTL .*\n` + p + `PTTL lock:billing-run\n\(integer\) (\d+)\n`,
		`Step 4/5: A wrong token does nothing\.\n  .*\n` + p + `DELEX lock:billing-run IFEQ tok-stale\n\(integer\) 0\n`,
		`Step 5/5: A releases its own lock\.\n  .*\n` + p + `DELEX lock:billing-run IFEQ tok-a81f\n\(integer\) 1\n`,
	}
	rest := out
	for i, w := range want {
		m := regexp.MustCompile(w).FindStringSubmatchIndex(rest)
		if m == nil {
			t.Fatalf("step %d not found (want /%s/) in:\n%s", i+1, w, rest)
		}
		if i == 2 {
			ms := rest[m[2]:m[3]]
			if len(ms) > 5 || ms == "0" || (len(ms) == 5 && ms > "30000") {
				t.Errorf("PTTL %s is not within (0, 30000]", ms)
			}
		}
		rest = rest[m[1]:]
	}
	if !strings.Contains(rest, "That is the whole recipe") {
		t.Errorf("no closing lines: %q", rest)
	}
	// The tour leaves nothing behind.
	if r := hotkvtest.Dial(t, srv.Addr).Do("EXISTS", "lock:billing-run"); r != ":0\r\n" {
		t.Errorf("EXISTS after the tour: %q", r)
	}
}

// TestTourSteps: without --auto each command runs only after Enter; "q"
// leaves.
func TestTourSteps(t *testing.T) {
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	inR, inW := io.Pipe()
	var out, errb hotkvtest.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main([]string{"-h", host, "-p", port, "tour", "locks"}, &cli.Env{Stdin: inR, Stdout: &out, Stderr: &errb})
	}()
	waitFor := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("output lacks %q:\n%s", s, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("> SET lock:billing-run tok-a81f NX PX 30000")
	time.Sleep(50 * time.Millisecond)
	if c := hotkvtest.Dial(t, srv.Addr).Do("EXISTS", "lock:billing-run"); c != ":0\r\n" || !strings.HasSuffix(out.String(), "NX PX 30000") {
		t.Fatal("the command ran before Enter")
	}
	io.WriteString(inW, "\n")
	waitFor("> SET lock:billing-run tok-a81f NX PX 30000\nOK\n") // raw output: stdout is no terminal
	waitFor("> SET lock:billing-run tok-b22c NX PX 30000")
	io.WriteString(inW, "\n")
	waitFor("> SET lock:billing-run tok-b22c NX PX 30000\n\n") // raw nil: an empty line
	io.WriteString(inW, "q\n")
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tour did not end on q")
	}
	if !strings.HasSuffix(out.String(), "> PTTL lock:billing-run\n") || strings.Contains(out.String(), "Step 4/5") {
		t.Errorf("the tour went on after q:\n%s", out.String())
	}
}

// TestTourKeyTaken: the tour refuses to run over an existing lock key.
func TestTourKeyTaken(t *testing.T) {
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	hotkvtest.Dial(t, srv.Addr).Do("SET", "lock:billing-run", "someone", "PX", "60000")
	_, errs, code := runMain(strings.NewReader(""), "-h", host, "-p", port, "tour", "locks", "--auto")
	if code != 1 || !strings.Contains(errs, "lock:billing-run already exists on this server (it expires in ") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	_, errs, code = runMain(strings.NewReader(""), "-h", host, "-p", port, "tour", "nosuch")
	if code != 1 || !strings.Contains(errs, "Tours: locks") {
		t.Errorf("unknown tour: exit %d, stderr %q", code, errs)
	}
}

// TestBigNumberAndAttribute covers what redis-cli 7.x cannot print (it exits
// with "Unknown reply type: 13" on a big number and a protocol error on an
// attribute): hotkv-cli shows the big number like a double and skips the
// attribute, keeping the reply that follows it.
func TestBigNumberAndAttribute(t *testing.T) {
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--no-raw", "-3", "DEBUG", "PROTOCOL", "bignum"}, "(big number) 1234567999999999999999999999999999999\n"},
		{[]string{"-3", "DEBUG", "PROTOCOL", "bignum"}, "1234567999999999999999999999999999999\n"},
		{[]string{"--no-raw", "-3", "DEBUG", "PROTOCOL", "attrib"}, "\"Some real reply following the attribute\"\n"},
		{[]string{"-3", "DEBUG", "PROTOCOL", "attrib"}, "Some real reply following the attribute\n"},
	}
	for _, c := range cases {
		out, errs, code := runMain(strings.NewReader(""), append([]string{"-h", host, "-p", port}, c.args...)...)
		if out != c.want || errs != "" || code != 0 {
			t.Errorf("%q: stdout %q stderr %q exit %d, want %q", c.args, out, errs, code, c.want)
		}
	}
}

// TestLatencyRaw: --latency without a terminal samples for the interval and
// prints "min max avg samples" once.
func TestLatencyRaw(t *testing.T) {
	srv := hotkvtest.Start(t)
	host, port := splitAddr(t, srv.Addr)
	out, errs, code := runMain(strings.NewReader(""), "-h", host, "-p", port, "--latency", "-i", "0.2")
	if code != 0 || errs != "" || !regexp.MustCompile(`^\d+ \d+ \d+\.\d\d \d+\n$`).MatchString(out) {
		t.Errorf("stdout %q stderr %q exit %d", out, errs, code)
	}
	out, _, _ = runMain(strings.NewReader(""), "-h", host, "-p", port, "--latency", "--csv", "-i", "0.1")
	if !regexp.MustCompile(`^\d+,\d+,\d+\.\d\d,\d+\n$`).MatchString(out) {
		t.Errorf("--csv: %q", out)
	}
}

// TestOptions: version, help, bad options, and the auth warning.
func TestOptions(t *testing.T) {
	out, _, code := runMain(strings.NewReader(""), "--version")
	if code != 0 || out != "hotkv-cli "+cli.Version+"\n" {
		t.Errorf("--version: %q %d", out, code)
	}
	out, _, code = runMain(strings.NewReader(""), "--help")
	if code != 0 || !strings.Contains(out, "Usage: hotkv-cli [OPTIONS] [cmd [arg [arg ...]]]") {
		t.Errorf("--help: %q %d", out, code)
	}
	_, errs, code := runMain(strings.NewReader(""), "--bogus")
	if code != 1 || errs != "Unrecognized option or bad number of args for: '--bogus'\n" {
		t.Errorf("--bogus: %q %d", errs, code)
	}
	_, errs, code = runMain(strings.NewReader(""), "-2", "-3", "ping")
	if code != 1 || errs != "Options -2 and -3 are mutually exclusive.\n" {
		t.Errorf("-2 -3: %q %d", errs, code)
	}
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("requirepass", "s3cret"))
	host, port := splitAddr(t, srv.Addr)
	out, errs, code = runMain(strings.NewReader(""), "-h", host, "-p", port, "-a", "s3cret", "PING")
	if out != "PONG\n" || code != 0 || !strings.HasPrefix(errs, "Warning: Using a password with '-a' or '-u' option") {
		t.Errorf("-a: %q %q %d", out, errs, code)
	}
	out, errs, code = runMain(strings.NewReader(""), "-u", "redis://:s3cret@"+srv.Addr+"/1", "--no-auth-warning", "SET", "k", "v")
	if out != "OK\n" || code != 0 || errs != "" {
		t.Errorf("-u: %q %q %d", out, errs, code)
	}
	out, errs, code = runMain(strings.NewReader(""), "-h", host, "-p", port, "-a", "wrong", "--no-auth-warning", "PING")
	if code != 1 || !strings.HasPrefix(errs, "AUTH failed: WRONGPASS") {
		t.Errorf("wrong password: %q %q %d", out, errs, code)
	}
}
