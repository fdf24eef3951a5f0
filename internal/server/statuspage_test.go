package server_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// runChromium runs headless Chromium on url with extra flags and returns its
// standard output.
func runChromium(t *testing.T, bin, url string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
		"--window-size=1280,1000", "--virtual-time-budget=4000"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", flags, err, errb.String())
	}
	return out.Bytes()
}

// The status page in a real browser: headless Chromium loads it, its script
// fetches the live figures, and the page shows them: the DOM after the
// script ran holds the operations per second, the held lock with its token
// digest and the slow log's head; the screenshot is a real rendering (the
// page's size, many colours). HOTKV_ARTIFACTS=<dir> keeps the screenshot.
func TestStatusPageInChromium(t *testing.T) {
	bin := hotkvtest.ChromiumOrSkip(t)
	srv, base := startWithMetrics(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	c.ConfigSet(ctx, "slowlog-log-slower-than", "0")
	c.SetNX(ctx, "lock:billing-run", "tok-a81f", time.Minute)
	c.SetNX(ctx, "lock:billing-run", "tok-b22c", time.Minute)
	c.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
	dig, _ := c.Do(ctx, "DIGEST", "lock:billing-run").Text()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // live load while the page polls
		lc := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer lc.Close()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			lc.Incr(ctx, "n")
		}
	}()

	dom := string(runChromium(t, bin, base+"/", "--dump-dom"))
	for _, want := range []string{`data-ready="1"`, "lock:billing-run", dig, "version 0.1.0"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	// the live figures: operations per second above zero, a latency, memory
	ops := regexp.MustCompile(`id="ops">([0-9,]+)<`).FindStringSubmatch(dom)
	if ops == nil || ops[1] == "0" {
		t.Errorf("ops/sec not shown live: %v", ops)
	}
	for _, id := range []string{"p99", "mem", "l-held", "l-contended"} {
		m := regexp.MustCompile(`id="` + id + `">([^<]*)<`).FindStringSubmatch(dom)
		if m == nil || m[1] == "–" || m[1] == "" {
			t.Errorf("#%s not filled: %v", id, m)
		}
	}

	dir := t.TempDir()
	if d := os.Getenv("HOTKV_ARTIFACTS"); d != "" {
		dir = d
	}
	shot := filepath.Join(dir, "status-page.png")
	runChromium(t, bin, base+"/", "--screenshot="+shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	colours := map[[3]uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			colours[[3]uint32{cr >> 8, cg >> 8, cb >> 8}] = true
		}
	}
	if r.Dx() != 1280 || len(colours) < 20 {
		t.Errorf("screenshot %v with %d colours: not a rendered page", r, len(colours))
	}
	// the header's dark band and the light page under it
	hr, hg, hb, _ := img.At(5, 5).RGBA()
	pr, pg, pb, _ := img.At(5, r.Max.Y-5).RGBA()
	if hr+hg+hb > 3*0x4000 || pr+pg+pb < 3*0xc000 {
		t.Errorf("header pixel %x %x %x, page pixel %x %x %x", hr, hg, hb, pr, pg, pb)
	}
	t.Log(fmt.Sprintf("screenshot %s: %v, %d colours", shot, r, len(colours)))
}
