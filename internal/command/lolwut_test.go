package command

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The random editions: the Schotter's first two rows never move and the rest
// does, differently per seed; the skyline fills a cols x rows canvas with
// sky above and buildings on the ground, rendered one coloured cell per
// pixel.
func TestLolwutArt(t *testing.T) {
	rnd := func(seed uint64) func() uint64 { return rand.New(rand.NewPCG(seed, 1)).Uint64 }
	a := renderBraille(drawSchotter(66, 8, 12, rnd(1)))
	b := renderBraille(drawSchotter(66, 8, 12, rnd(2)))
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) || len(la) < 20 {
		t.Fatalf("%d and %d lines", len(la), len(lb))
	}
	// 128 dots wide, squares of 16: the first two rows are the first 8 lines
	if strings.Join(la[:8], "\n") != strings.Join(lb[:8], "\n") {
		t.Error("the unturned rows differ between seeds")
	}
	if a == b {
		t.Error("two seeds drew the same Schotter")
	}
	for i, l := range la {
		if n := len([]rune(l)); n != 66 && l != "" {
			t.Fatalf("line %d: %d characters", i, n)
		}
	}

	cv := drawSkyline(80, 20, rnd(3))
	sky, ground := 0, 0
	for x := range cv.w {
		if cv.get(x, 0) == 3 {
			sky++
		}
		if cv.get(x, cv.h-1) != 3 {
			ground++
		}
	}
	if sky < 70 || ground < 70 {
		t.Errorf("sky %d of 80 at the top, buildings %d of 80 on the ground", sky, ground)
	}
	lines := strings.Split(renderGrays(cv), "\n")
	if len(lines) != 20 || strings.Count(lines[0], " \x1b[0m") != 80 {
		t.Fatalf("%d lines, %d cells in the first", len(lines), strings.Count(lines[0], " \x1b[0m"))
	}
	// the biggest canvases stay bounded: Redis's clamps, and at most 1000
	// lines of Braille (Redis would draw 1996 x 200 rows of dots here)
	if cv := drawSchotter(1000, 1, 200, rnd(4)); cv.w != 2000 || cv.h > schotterMaxDots {
		t.Errorf("clamped Schotter: %dx%d", cv.w, cv.h)
	}
}
